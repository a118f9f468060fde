"""campaigns/analysis/figures: for each starter template's sample campaign with simulated
answers, every applicable figure is drawn, and what it plots (its side record, and the labels
read back from the SVG) is what the statistics say, checked against the statistics' own rows
computed independently here."""
from __future__ import annotations

import base64
import math
import xml.etree.ElementTree as ET

import pytest
from django.contrib.auth import get_user_model

from campaigns.analysis.figures import draw_figures, figure_plans
from campaigns.selectors.analysis import campaign_statistics
from tests.analysis.figures.samples import STARTERS, sample_campaign

SVG = "{http://www.w3.org/2000/svg}"
EXPECTED = {  # beyond agreement, workers and progress, which every sample campaign has
    "story-rating": {"scores:coherence", "scores:fluency", "scores:interest"},
    "movie-continuation": {"scores:"},
    "summary-consistency": set(),  # one system (no system field): no score figure
    "translation-acceptability": {"scores:"},
    "comparative-rubric": {"scores:rubric.total"},
    "pairwise-preference": {"bradley_terry:preference", "win_rates:preference"},
    "best-worst": {"best_worst:bws"},
    "esa": {"mqm:", "errors_by_severity:"},
    "mqm": {"mqm:errors", "errors_by_severity:errors", "errors_by_category:errors"},
}


@pytest.fixture(params=STARTERS)
def sample(request, db):
    owner = get_user_model().objects.create(username=f"owner-{request.param}")
    campaign = sample_campaign(owner, request.param)
    statistics = campaign_statistics(campaign=campaign, n_boot=100)
    return request.param, statistics, draw_figures(statistics, pdf=True)


def _close(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def test_every_applicable_figure_is_drawn_and_plots_the_statistics(sample):
    _drawn(*sample)
    _plotted(*sample)
    template, statistics, figures = sample
    if template == "pairwise-preference":  # byte-identical when drawn again
        again = draw_figures(statistics, pdf=True)
        assert [f["svg"] for f in again] == [f["svg"] for f in figures]
        assert [f["pdf"] for f in again] == [f["pdf"] for f in figures]


def _drawn(template, statistics, figures):
    keys = [f["key"] for f in figures]
    assert len(keys) == len(set(keys))
    assert {"agreement", "workers", "progress"} <= set(keys)
    for wanted in EXPECTED.get(template, set()):  # a newer template: the common figures
        assert any(k.startswith(wanted) for k in keys), (wanted, keys)
    for f in figures:
        root = ET.fromstring(f["svg"])  # noqa: S314 - our own drawing
        assert root.tag == f"{SVG}svg"
        assert not list(root.iter(f"{SVG}script")) and "<script" not in f["svg"]
        assert base64.b64decode(f["pdf"]).startswith(b"%PDF-")
        assert f["alt"] and f["columns"] and f["rows"]
        assert all(len(row) == len(f["columns"]) for row in f["rows"])


def _svg_text(svg: str) -> str:
    root = ET.fromstring(svg)  # noqa: S314 - our own drawing
    return " ".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))


def _plotted(template, statistics, figures):
    by_key = {f["key"]: f for f in figures}
    _check_scores(statistics, by_key)
    _check_agreement(statistics, by_key["agreement"])
    _check_preference(statistics, by_key)
    _check_best_worst_and_spans(statistics, by_key)
    _check_workers(statistics, by_key["workers"])
    days = statistics["progress"]
    assert by_key["progress"]["values"]["y"] == [d["cumulative"] for d in days]
    assert by_key["progress"]["values"]["y"][-1] == sum(d["annotations"] for d in days)


def _check_scores(statistics, by_key):
    clusters = {(r["question"], r["part"], r["system"]): r["cluster"]
                for r in statistics["ranking"]}
    for key, figure in by_key.items():
        if not key.startswith("scores:"):
            continue
        question, _, part = key.removeprefix("scores:").partition(".")
        rows = [r for r in statistics["system_scores"]
                if r["question"] == question and r["part"] == part]
        v = figure["values"]
        assert sorted(v["labels"]) == sorted(r["system"] for r in rows)
        assert v["estimate"] == sorted(v["estimate"], reverse=True)  # best first
        for label, est, low, high, group in zip(v["labels"], v["estimate"], v["low"],
                                                v["high"], v["groups"], strict=True):
            row = next(r for r in rows if r["system"] == label)
            assert (_close(est, row["mean"]) and _close(low, row["ci_low"])
                    and _close(high, row["ci_high"]))
            assert group == clusters.get((question, part, label))
        text = _svg_text(figure["svg"])
        assert all(label[:20] in text for label in v["labels"])


def _check_agreement(statistics, figure):
    pooled = [r for r in statistics["agreement"] if r["alpha"] is not None and not r["subset"]]
    assert figure["values"]["estimate"] == [r["alpha"] for r in pooled]
    assert figure["values"]["low"] == [r["ci_low"] for r in pooled]
    assert figure["values"]["high"] == [r["ci_high"] for r in pooled]


def _check_preference(statistics, by_key):
    for e in statistics["pairwise_preference"]:
        bt = by_key[f"bradley_terry:{e['question']}"]["values"]
        assert bt["estimate"] == [r["strength"] for r in e["bradley_terry"]]
        assert bt["notes"] == [f"rank {r['rank']} ({r['rank_low']}-{r['rank_high']})"
                               for r in e["bradley_terry"]]
        heat = by_key[f"win_rates:{e['question']}"]["values"]
        for p in e["pairs"]:  # the cell of A against B: A's win rate, ties counting half
            i, j = heat["rows"].index(p["system_a"]), heat["columns"].index(p["system_b"])
            assert _close(heat["matrix"][i][j], p["win_rate_a"])
            assert _close(heat["matrix"][j][i], 1 - p["win_rate_a"])
            assert heat["text"][i][j] == f"{p['wins_a']}-{p['ties']}-{p['wins_b']}"
            assert heat["text"][i][j] in _svg_text(by_key[f"win_rates:{e['question']}"]["svg"])


def _check_best_worst_and_spans(statistics, by_key):
    for e in statistics["best_worst"]:
        v = by_key[f"best_worst:{e['question']}"]["values"]
        assert v["estimate"] == [(r["best"] - r["worst"]) / r["appearances"]
                                 for r in e["scores"]]
    for e in statistics["error_spans"]:
        v = by_key[f"mqm:{e['question']}"]["values"]
        assert v["estimate"] == [r["mqm"] for r in e["mqm"]]
        stacked = by_key[f"errors_by_severity:{e['question']}"]["values"]
        for i, system in enumerate(stacked["labels"]):
            plotted = sum(s["counts"][i] for s in stacked["series"])
            assert plotted == sum(r["errors"] for r in e["errors_by_severity"]
                                  if r["system"] == system)
        if e["errors_by_category"]:
            by_category = by_key[f"errors_by_category:{e['question']}"]["values"]
            assert (sum(sum(s["counts"]) for s in by_category["series"])
                    == sum(r["errors"] for r in e["errors_by_category"]))


def _check_workers(statistics, figure):
    panels = {p["name"]: p for p in figure["values"]["panels"]}
    flagged = set(statistics["flagged_workers"])
    speed = panels["median seconds per item"]
    assert speed["values"] == [r["median_seconds"] for r in statistics["quality"]]
    assert speed["flagged"] == [r["worker"] in flagged for r in statistics["quality"]]
    # Dawid-Skene's figure of the workers with enough labels to have one (MACE's beside it
    # stays in the tables).
    shown = [r["reliability"] for r in statistics["worker_reliability"]
             if r["model"] == "dawid_skene" and r["reliability"] is not None]
    if shown:
        assert panels["reliability (Dawid-Skene)"]["values"] == shown
    else:
        assert "reliability (Dawid-Skene)" not in panels


def test_a_campaign_without_answers_has_no_figure_but_nothing_fails():
    empty = {"agreement": [], "system_scores": [], "ranking": [], "pairwise_preference": [],
             "best_worst": [], "error_spans": [], "judges": [], "confusion": [],
             "quality": [], "worker_reliability": [], "flagged_workers": [], "progress": []}
    assert figure_plans(empty) == []
