"""What every figure test asserts of a campaign's statistics and its figures: every figure that
applies is drawn, and what each plots (its side record `values`, and the labels read back from
its SVG) is what the statistics say, row for row. Shared by the starter templates' sample
campaigns (test_figures.py) and the real-data campaigns (test_realdata_figures.py and the
real-data tests that already compute their statistics)."""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from campaigns.analysis.figures import figure_plans
from campaigns.analysis.figures.draw import DRAW
from campaigns.analysis.figures.style import render

SVG = "{http://www.w3.org/2000/svg}"


def close(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def svg_text(svg: str) -> str:
    root = ET.fromstring(svg)  # noqa: S314 - our own drawing
    return " ".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))


def assert_figures_plot_the_statistics(statistics: dict, figures: list | None = None) -> list:
    """Every applicable figure's plan checked against the statistics, and the labels read back
    from the SVGs: of the `figures` drawn from these statistics when given, else of one figure
    of each kind drawn here (the drawing code is per kind, the values are checked for every
    figure: a real-data test stays within seconds). Returns the plans, drawn where drawn."""
    if figures is not None:
        plans = figures
    else:
        plans, kinds = figure_plans(statistics), set()
        for plan in plans:
            if plan["kind"] not in kinds:
                kinds.add(plan["kind"])
                plan.update(render(DRAW[plan["kind"]](plan["values"]), title=plan["title"],
                                   pdf=False))
    by_key = {p["key"]: p for p in plans}
    assert len(by_key) == len(plans)
    for plan in plans:
        assert plan["alt"] and plan["columns"] and plan["rows"]
        assert all(len(row) == len(plan["columns"]) for row in plan["rows"])
    assert_applicable_drawn(statistics, by_key)
    check_scores(statistics, by_key)
    check_agreement(statistics, by_key)
    check_preference(statistics, by_key)
    check_best_worst_and_spans(statistics, by_key)
    check_judges(statistics, by_key)
    if "workers" in by_key:
        check_workers(statistics, by_key["workers"])
    if "progress" in by_key:
        days = statistics["progress"]
        assert by_key["progress"]["values"]["y"] == [d["cumulative"] for d in days]
        assert by_key["progress"]["values"]["y"][-1] == sum(d["annotations"] for d in days)
    return plans


def assert_applicable_drawn(statistics: dict, by_key: dict) -> None:
    """A figure for each result the statistics hold (the score figure of a rubric is its
    total's, so each question has at least one)."""
    keys = set(by_key)
    scored = {r["question"] for r in statistics["system_scores"] if r["mean"] is not None}
    assert scored == {k.removeprefix("scores:").partition(".")[0]
                      for k in keys if k.startswith("scores:")}
    if any(r["alpha"] is not None and not r["subset"] for r in statistics["agreement"]):
        assert "agreement" in keys
    if any(r["alpha"] is not None and r["subset"] for r in statistics["agreement"]):
        assert "agreement_subsets" in keys
    for e in statistics["pairwise_preference"]:
        assert bool(e["bradley_terry"]) == (f"bradley_terry:{e['question']}" in keys)
        assert bool(e["pairs"]) == (f"win_rates:{e['question']}" in keys)
    for e in statistics["best_worst"]:
        assert bool(e["scores"]) == (f"best_worst:{e['question']}" in keys)
    for e in statistics["error_spans"]:
        for by in ("severity", "category"):
            wanted = bool(e[f"errors_by_{by}"])
            assert wanted == (f"errors_by_{by}:{e['question']}" in keys)
    judged = [r for r in statistics["judges"] if len(r.get("system_means") or []) >= 2]
    assert len(judged) == len([k for k in keys if k.startswith("judge_systems:")])
    assert len(statistics["confusion"]) == len([k for k in keys if k.startswith("confusion:")])
    timed = any(r.get("median_seconds") is not None for r in statistics["quality"])
    reliable = any(r["model"] == "dawid_skene" and r["reliability"] is not None
                   for r in statistics["worker_reliability"])
    assert (timed or reliable) == ("workers" in keys)
    assert bool(statistics["progress"]) == ("progress" in keys)


def check_scores(statistics, by_key):
    clusters = {(r["question"], r["part"], r["system"]): r["cluster"]
                for r in statistics["ranking"]}
    for key, figure in by_key.items():
        if not key.startswith("scores:"):
            continue
        question, _, part = key.removeprefix("scores:").partition(".")
        rows = [r for r in statistics["system_scores"]
                if r["question"] == question and r["part"] == part and r["mean"] is not None]
        v = figure["values"]
        assert sorted(v["labels"]) == sorted(r["system"] or "(no system)" for r in rows)
        assert v["estimate"] == sorted(v["estimate"], reverse=True)  # best first
        for label, est, low, high, group in zip(v["labels"], v["estimate"], v["low"],
                                                v["high"], v["groups"], strict=True):
            row = next(r for r in rows if (r["system"] or "(no system)") == label)
            assert (close(est, row["mean"]) and close(low, row["ci_low"])
                    and close(high, row["ci_high"]))
            assert group == clusters.get((question, part, row["system"]))
        _labels_in_svg(figure, v["labels"])


def _labels_in_svg(figure, labels):
    if "svg" in figure:  # a tick label is cut at 25 characters and an ellipsis
        text = svg_text(figure["svg"])
        assert all(str(label)[:20] in text for label in labels), (figure["key"], labels)


def check_agreement(statistics, by_key):
    for key, subset in (("agreement", False), ("agreement_subsets", True)):
        rows = [r for r in statistics["agreement"]
                if r["alpha"] is not None and bool(r["subset"]) == subset]
        if not rows:
            continue
        v = by_key[key]["values"]
        assert v["estimate"] == [r["alpha"] for r in rows]
        assert v["low"] == [r["ci_low"] for r in rows]
        assert v["high"] == [r["ci_high"] for r in rows]
        if subset:
            assert all(f"{k}={s}" in label for r, label in zip(rows, v["labels"], strict=True)
                       for k, s in r["subset"].items())


def check_preference(statistics, by_key):
    for e in statistics["pairwise_preference"]:
        if e["bradley_terry"]:
            bt = by_key[f"bradley_terry:{e['question']}"]
            assert bt["values"]["estimate"] == [r["strength"] for r in e["bradley_terry"]]
            assert bt["values"]["low"] == [r["ci_low"] for r in e["bradley_terry"]]
            assert bt["values"]["notes"] == [
                f"rank {r['rank']}" + ("" if r["rank_low"] is None
                                       else f" ({r['rank_low']}-{r['rank_high']})")
                for r in e["bradley_terry"]]
            _labels_in_svg(bt, bt["values"]["labels"])
        if not e["pairs"]:
            continue
        heat = by_key[f"win_rates:{e['question']}"]
        v = heat["values"]
        for p in e["pairs"]:  # the cell of A against B: A's win rate, ties counting half
            i, j = v["rows"].index(p["system_a"]), v["columns"].index(p["system_b"])
            assert close(v["matrix"][i][j], p["win_rate_a"])
            assert close(v["matrix"][j][i], 1 - p["win_rate_a"])
            assert v["text"][i][j] == f"{p['wins_a']}-{p['ties']}-{p['wins_b']}"
            if "svg" in heat:
                assert v["text"][i][j] in svg_text(heat["svg"])


def check_best_worst_and_spans(statistics, by_key):
    for e in statistics["best_worst"]:
        if not e["scores"]:
            continue
        v = by_key[f"best_worst:{e['question']}"]["values"]
        assert v["estimate"] == [(r["best"] - r["worst"]) / r["appearances"]
                                 for r in e["scores"]]
        assert v["low"] == [r["ci_low"] for r in e["scores"]]
    for e in statistics["error_spans"]:
        if e["mqm"]:
            v = by_key[f"mqm:{e['question']}"]["values"]
            assert v["estimate"] == [r["mqm"] for r in e["mqm"]]
            assert v["high"] == [r["ci_high"] for r in e["mqm"]]
        for by in ("severity", "category"):
            counted = e[f"errors_by_{by}"]
            if not counted:
                continue
            stacked = by_key[f"errors_by_{by}:{e['question']}"]["values"]
            for i, system in enumerate(stacked["labels"]):  # per system, all its errors
                plotted = sum(s["counts"][i] for s in stacked["series"])
                assert plotted == sum(r["errors"] for r in counted if r["system"] == system)
            assert (sum(sum(s["counts"]) for s in stacked["series"])
                    == sum(r["errors"] for r in counted))


def check_judges(statistics, by_key):
    for r in statistics["judges"]:
        means = r.get("system_means") or []
        if len(means) < 2:
            continue
        label = f"{r['question']}.{r['part']}" if r["part"] else r["question"]
        v = by_key[f"judge_systems:{r['judge']}:{label}"]["values"]
        assert v["labels"] == [m["system"] for m in means]
        assert v["x"] == [m["human"] for m in means] and v["y"] == [m["judge"] for m in means]
        if r.get("system_pearson") is not None:
            assert v["note"].startswith(f"r = {r['system_pearson']:.2f}")
    for m in statistics["confusion"]:
        label = f"{m['question']}.{m['part']}" if m["part"] else m["question"]
        heat = by_key[f"confusion:{m['judge']}:{label}"]
        assert heat["values"]["matrix"] == [[float(x) for x in row] for row in m["matrix"]]
        assert heat["values"]["rows"] == m["labels"] == heat["values"]["columns"]
        if "svg" in heat:
            text = svg_text(heat["svg"])
            assert all(str(x) in text for row in m["matrix"] for x in row if x)


def check_workers(statistics, figure):
    panels = {p["name"]: p for p in figure["values"]["panels"]}
    flagged = set(statistics["flagged_workers"])
    timed = [r for r in statistics["quality"] if r.get("median_seconds") is not None]
    if timed:
        speed = panels["median seconds per item"]
        assert speed["values"] == [r["median_seconds"] for r in timed]
        assert speed["flagged"] == [r["worker"] in flagged for r in timed]
    # Dawid-Skene's figure of the workers with enough labels to have one (MACE's beside it
    # stays in the tables).
    shown = [r["reliability"] for r in statistics["worker_reliability"]
             if r["model"] == "dawid_skene" and r["reliability"] is not None]
    if shown:
        assert panels["reliability (Dawid-Skene)"]["values"] == shown
    else:
        assert "reliability (Dawid-Skene)" not in panels
