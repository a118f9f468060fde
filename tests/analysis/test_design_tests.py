"""Every design gets design checks, corrected tests and clusters: error spans (lower is
better, on the real WMT MQM sample), best-worst scaling and pairwise preference."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from campaigns.analysis import design_tests
from campaigns.analysis.design_tests import (
    FEW_BOOTSTRAP_ITEMS,
    best_worst_units,
    mqm_units,
    unit_tests,
)
from campaigns.selectors.analysis import campaign_statistics
from tests.analysis.figures.checks import assert_figures_plot_the_statistics
from tests.analysis.test_spans import MQM_TSV, _mqm_campaign, _read_mqm_tsv
from tests.shared_data import require


@pytest.mark.django_db
def test_the_wmt_mqm_sample_gets_warnings_lower_is_better_tests_and_clusters(owner):
    require(MQM_TSV.parent)
    frame = _read_mqm_tsv()
    result = campaign_statistics(campaign=_mqm_campaign(owner, frame), n_boot=0)
    (spans,) = result["error_spans"]
    codes = {w["code"] for w in spans["design_warnings"]}
    # 12-13 segments per system, one rater per segment: was ranked 1-14 with no warning.
    assert {"few_raters_per_item", FEW_BOOTSTRAP_ITEMS} <= codes
    # Independently: per-segment penalty (WMT weights) per system, paired over segments.
    minor_punct = (frame["severity"] == "Minor") & (frame["category"] == "Fluency/Punctuation")
    frame["weight"] = np.select([frame["severity"] == "No-error", minor_punct,
                                 frame["severity"] == "Minor", frame["severity"] == "Major"],
                                [0.0, 0.1, 1.0, 5.0], np.nan)
    penalty = frame.groupby(["system", "seg_id"])["weight"].sum().unstack("seg_id")
    rows = spans["comparisons"]
    assert len(rows) == 14 * 13 // 2
    assert all(r["paired"] and r["test"] == "wilcoxon_signed_rank" for r in rows)
    for r in rows[:5]:
        a, b = penalty.loc[r["system_a"]], penalty.loc[r["system_b"]]
        both = a.notna() & b.notna()
        d = a[both] - b[both]
        expected = 1.0 if not d.any() else stats.wilcoxon(d).pvalue
        assert r["p"] == pytest.approx(expected)
        assert r["mean_a"] == pytest.approx(a[both].mean())  # penalties, not negated
    adjusted = multipletests([r["p"] for r in rows], method="holm")[1]
    assert [r["p_adjusted"] for r in rows] == pytest.approx(adjusted)
    for r in rows:  # lower is better: a winner has the smaller penalty
        if r["better"] is not None:
            other = "mean_b" if r["better"] == r["system_a"] else "mean_a"
            mine = "mean_a" if other == "mean_b" else "mean_b"
            assert r[mine] < r[other]
    clusters = spans["clusters"]
    assert [c["rank"] for c in clusters] == list(range(1, 15))
    assert clusters[0]["mean"] == min(c["mean"] for c in clusters)
    numbers = [c["cluster"] for c in clusters]
    assert numbers == sorted(numbers) and numbers[0] == 1
    # The figures: each system's penalty per segment, and its errors stacked by severity.
    plotted = {p["key"]: p["values"] for p in assert_figures_plot_the_statistics(result)}
    mqm = plotted[f"mqm:{spans['question']}"]
    per_segment = penalty.mean(axis=1)
    assert mqm["estimate"] == pytest.approx([per_segment[s] for s in mqm["labels"]])
    stacked = plotted[f"errors_by_severity:{spans['question']}"]
    marked = frame[frame["severity"] != "No-error"]
    errors = marked.groupby(["system", marked["severity"].str.lower()]).size()
    for series in stacked["series"]:
        assert series["counts"] == [errors.get((s, series["name"]), 0)
                                    for s in stacked["labels"]]


def test_fewer_errors_win_and_intervals_of_penalties_stay_on_the_penalty_scale():
    rng = np.random.default_rng(0)
    rows = []
    for seg in range(30):
        for system, rate in (("few", 0.5), ("many", 3.0)):
            for worker in ("r1", "r2"):
                rows.append((f"{system}-{seg}", system, worker, float(rng.poisson(rate)), seg))
    penalties = pd.DataFrame(rows, columns=["item", "system", "worker", "penalty", "source"])
    units = mqm_units(penalties, penalties.drop_duplicates("item").set_index("item")["source"])
    tables = unit_tests(units, penalties, question="mqm", higher_is_better=False, n_boot=200)
    (row,) = tables["comparisons"].to_dict("records")
    assert row["better"] == "few" and row["lower_is_better"]
    assert row["mean_a"] < row["mean_b"]  # "few" sorts first: its penalty is the smaller
    assert row["mean_difference_ci_low"] <= row["mean_difference"] <= row[
        "mean_difference_ci_high"] < 0
    ranking = tables["ranking"].set_index("system")
    assert ranking.loc["few", "rank"] == 1 and ranking.loc["many", "cluster"] == 2


def test_best_worst_systems_are_compared_paired_over_the_items_that_showed_both():
    rng = np.random.default_rng(1)
    rows = []
    for item in range(80):
        shown = ["A", "B", "C", "D"]
        weights = np.array([4.0, 1.0, 1.0, 0.3])
        best = rng.choice(4, p=weights / weights.sum())
        worst = rng.choice([k for k in range(4) if k != best])
        rows += [(f"i{item}", "w", s, 1 if k == best else -1 if k == worst else 0)
                 for k, s in enumerate(shown)]
    frame = pd.DataFrame(rows, columns=["item", "worker", "system", "outcome"])
    tables = unit_tests(best_worst_units(frame), frame, question="bws")
    compared = tables["comparisons"].set_index(["system_a", "system_b"])
    wide = frame.pivot(index="item", columns="system", values="outcome")
    assert compared.loc[("A", "B"), "p"] == pytest.approx(stats.wilcoxon(
        wide["A"] - wide["B"]).pvalue)
    assert compared.loc[("A", "D"), "better"] == "A"
    assert tables["ranking"].iloc[0]["system"] == "A"


def test_five_items_warn_that_bootstrap_intervals_are_too_narrow():
    assert design_tests.small_cluster_warning("q", 5)[0].code == FEW_BOOTSTRAP_ITEMS
    assert design_tests.small_cluster_warning("q", 40) == []
