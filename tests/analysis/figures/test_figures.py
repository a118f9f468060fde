"""campaigns/analysis/figures: for each starter template's sample campaign with simulated
answers, every applicable figure is drawn, and what it plots (its side record, and the labels
read back from the SVG) is what the statistics say, checked against the statistics' own rows
computed independently here."""
from __future__ import annotations

import base64
import xml.etree.ElementTree as ET

import pytest
from django.contrib.auth import get_user_model

from campaigns.analysis.figures import draw_figures, figure_plans
from campaigns.selectors.analysis import campaign_statistics
from tests.analysis.figures.checks import SVG, assert_figures_plot_the_statistics
from tests.analysis.figures.samples import STARTERS, sample_campaign

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


def _plotted(template, statistics, figures):
    assert_figures_plot_the_statistics(statistics, figures)
    assert [f["key"] for f in figures] == [p["key"] for p in figure_plans(statistics)]


def test_a_campaign_without_answers_has_no_figure_but_nothing_fails():
    empty = {"agreement": [], "system_scores": [], "ranking": [], "pairwise_preference": [],
             "best_worst": [], "error_spans": [], "judges": [], "confusion": [],
             "quality": [], "worker_reliability": [], "flagged_workers": [], "progress": []}
    assert figure_plans(empty) == []


def test_thousands_of_workers_are_drawn_as_a_histogram_and_the_svg_stays_small():
    """Up to MAX_POINTS workers a panel draws one marker each; beyond, the kept workers are a
    histogram (the flagged still crosses), so the SVG does not grow with the worker pool. The
    side record keeps every worker's value."""
    from campaigns.analysis.figures.draw import MAX_POINTS

    def drawn(n: int) -> tuple[dict, str]:
        quality = [{"worker": f"w{i:05}", "median_seconds": 5.0 + (i * 7919 % 600) / 10}
                   for i in range(n)]
        statistics = {"quality": quality, "flagged_workers": ["w00003", "w00011"]}
        (figure,) = draw_figures(statistics)
        return figure, figure["svg"]

    small, small_svg = drawn(MAX_POINTS)
    large, large_svg = drawn(20 * MAX_POINTS)
    markers = small_svg.count("<use ")
    assert markers >= MAX_POINTS  # one per worker (and the legend's)
    assert "histogram" not in small_svg and "histogram" in large_svg
    assert large_svg.count("<use ") < markers / 10 and len(large_svg) < 1.2 * len(small_svg)
    (panel,) = large["values"]["panels"]
    assert len(panel["values"]) == 20 * MAX_POINTS and sum(panel["flagged"]) == 2
    assert "w05999" in [row[0] for row in large["rows"]]
