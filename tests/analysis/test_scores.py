"""Per-system scores, WMT z-scores, ranking and Mann-Whitney U tests on hand-made data."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from campaigns.analysis.scores import (
    bootstrap_mean_ci,
    pairwise_tests,
    system_ranking,
    system_scores,
    z_scores,
)


def _frame(rows):
    return pd.DataFrame(rows, columns=["item", "system", "worker", "value"]).assign(
        question="q", part="")


def test_system_scores_give_n_mean_sd_and_a_ci_around_the_mean():
    frame = _frame([(1, "A", "w", 1.0), (2, "A", "w", 2.0), (3, "A", "w", 3.0),
                    (4, "B", "w", 5.0), (5, "B", "w", 5.0)])
    table = system_scores(frame, n_boot=500).set_index("system")
    assert table.loc["A", ["n", "mean", "sd"]].tolist() == [3, 2.0, 1.0]
    assert table.loc["A", "ci_low"] <= 2.0 <= table.loc["A", "ci_high"]
    assert table.loc["B", ["ci_low", "ci_high"]].tolist() == [5.0, 5.0]


def test_a_single_score_has_no_sd_or_ci():
    table = system_scores(_frame([(1, "A", "w", 4.0)]))
    assert table["sd"].iloc[0] is None and table["ci_low"].iloc[0] is None


def test_large_samples_use_the_normal_interval():
    values = np.random.default_rng(0).normal(50, 10, 30_000)
    low, high = bootstrap_mean_ci(values)
    half = 1.959964 * values.std(ddof=1) / np.sqrt(len(values))
    assert (low, high) == pytest.approx((values.mean() - half, values.mean() + half))


def test_z_scores_standardise_each_worker_by_their_own_mean_and_sd():
    frame = _frame([(1, "A", "harsh", 1.0), (2, "B", "harsh", 2.0), (3, "C", "harsh", 3.0),
                    (1, "A", "kind", 60.0), (2, "B", "kind", 80.0), (3, "C", "kind", 100.0),
                    (1, "A", "flat", 4.0), (2, "B", "flat", 4.0)])
    z = z_scores(frame)
    assert z[z.worker == "harsh"]["z"].tolist() == pytest.approx([-1.0, 0.0, 1.0])
    assert z[z.worker == "kind"]["z"].tolist() == pytest.approx([-1.0, 0.0, 1.0])
    assert z[z.worker == "flat"]["z"].tolist() == [0.0, 0.0]


def test_systems_are_ranked_by_mean_z_not_by_raw_means():
    # The kind worker rates only system B, high on raw scale; z removes that bias.
    frame = _frame([(1, "A", "w1", 4.0), (2, "A", "w1", 5.0), (3, "B", "w1", 1.0),
                    (4, "B", "w1", 2.0), (3, "B", "w2", 9.0), (4, "B", "w2", 10.0)])
    ranking = system_ranking(frame).set_index("system")
    assert ranking.loc["B", "mean_raw"] > ranking.loc["A", "mean_raw"]
    assert ranking["rank"].to_dict() == {"A": 1, "B": 2}
    assert ranking.loc["B", "n_items"] == 2


def test_pairwise_tests_tell_which_systems_are_distinguishable():
    rng = np.random.default_rng(1)
    rows = []
    for n in range(30):
        rows += [(f"a{n}", "A", "w", 80 + rng.normal()), (f"b{n}", "B", "w", 20 + rng.normal()),
                 (f"c{n}", "C", "w", 20 + rng.normal())]
    table = pairwise_tests(_frame(rows)).set_index(["system_a", "system_b"])
    assert table.loc[("A", "B"), "distinguishable"] and table.loc[("A", "B"), "better"] == "A"
    assert not table.loc[("B", "C"), "distinguishable"]
    z = z_scores(_frame(rows))
    expected = stats.mannwhitneyu(z[z.system == "B"]["z"], z[z.system == "C"]["z"])
    assert table.loc[("B", "C"), "p"] == pytest.approx(expected.pvalue)
    assert table.loc[("B", "C"), "u"] == pytest.approx(expected.statistic)
