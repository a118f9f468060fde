"""System comparisons: direction, corrections, effect sizes, design checks, clusters."""
import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from campaigns.analysis import comparisons
from campaigns.analysis.comparisons import (
    adjust_pvalues,
    cliffs_delta,
    compare_systems,
    design_checks,
    rank_biserial_paired,
    significance_clusters,
    wilcoxon_signed_rank,
)
from campaigns.analysis.scores import system_ranking, z_scores


def _frame(rows, segment=False):
    frame = pd.DataFrame(rows, columns=["item", "system", "worker", "value"]).assign(
        question="q", part="")
    return frame.assign(segment=frame["item"].str.split("-").str[1] if segment else None)


@pytest.mark.parametrize(("ours", "theirs"), [("holm", "holm"), ("bh", "fdr_bh")])
def test_corrections_match_statsmodels(ours, theirs):
    p = np.random.default_rng(0).uniform(0, 0.2, 40) ** 2
    assert adjust_pvalues(p, ours) == pytest.approx(multipletests(p, method=theirs)[1])


def test_unknown_correction_is_refused():
    with pytest.raises(ValueError, match="bonferroni"):
        adjust_pvalues(np.array([0.1]), "bonferroni")


def test_effect_sizes_match_their_definitions():
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 5, 17).astype(float), rng.integers(0, 5, 23).astype(float)
    brute = (np.sign(a[:, None] - b[None, :])).mean()
    assert cliffs_delta(a, b)[0] == pytest.approx(brute)
    u = stats.mannwhitneyu(a, b).statistic
    assert cliffs_delta(a, b)[0] == pytest.approx(2 * u / (len(a) * len(b)) - 1)
    d = np.array([3.0, -1.0, 0.0, 2.0, -2.0, 5.0])
    nonzero = d[d != 0]
    ranks = stats.rankdata(np.abs(nonzero))
    expected = (ranks[nonzero > 0].sum() - ranks[nonzero < 0].sum()) / ranks.sum()
    assert rank_biserial_paired(d)[0] == pytest.approx(expected)


def test_better_follows_the_test_statistic_not_the_mean():
    # A: one outlier lifts the mean; B is higher on 29 of 30 items (what the rank test sees).
    rows = [(f"a{n}", "A", "w", 100.0 if n == 0 else 0.0) for n in range(30)]
    rows += [(f"b{n}", "B", "w", 1.0) for n in range(30)]
    frame = z_scores(_frame(rows))
    row = compare_systems(frame, n_boot=200).iloc[0]
    assert row["mean_a"] > row["mean_b"]
    assert row["effect"] < 0 and row["p_adjusted"] < 0.05
    assert row["better"] == "B"
    assert row["effect_ci_low"] <= row["effect"] <= row["effect_ci_high"]


def test_means_equal_to_rounding_never_name_a_winner():
    # The same mean, different shapes: the rank test can be significant, the means cannot
    # tell the systems apart, so no winner.
    rows = [(f"a{n}", "A", "w", v) for n, v in enumerate([0.0] * 20 + [3.0] * 10)]
    rows += [(f"b{n}", "B", "w", 1.0) for n in range(30)]
    row = compare_systems(_frame(rows).assign(z=lambda f: f["value"]), n_boot=0).iloc[0]
    assert row["mean_a"] == pytest.approx(row["mean_b"])
    assert row["p"] < 0.05 and row["better"] is None


def test_raters_nested_in_systems_switch_off_rankings_and_winners():
    rows = [(f"a{n}", "A", f"wa{n % 3}", 90.0 + n % 5) for n in range(30)]
    rows += [(f"b{n}", "B", f"wb{n % 3}", 40.0 + n % 5) for n in range(30)]
    frame = _frame(rows)
    warnings = design_checks(frame)
    assert comparisons.NESTED in [w.code for w in warnings]
    blocked = comparisons.blocked_parts(warnings)
    ranking = system_ranking(frame, blocked=blocked)
    assert ranking["rank"].isna().all()
    assert ranking["mean_z"].abs().max() < 1e-12  # zero by construction
    row = compare_systems(z_scores(frame), blocked=blocked, n_boot=0).iloc[0]
    assert row["basis"] == "raw" and row["p"] < 1e-6
    assert row["better"] is None and row["blocked_by"] == comparisons.NESTED


def test_design_checks_name_few_items_few_raters_and_imbalance():
    rows = [(f"a{n}", "A", "w1", 1.0) for n in range(3)]
    rows += [(f"b{n}", "B", "w1", 2.0) for n in range(30)]
    codes = {w.code for w in design_checks(_frame(rows))}
    assert codes == {comparisons.FEW_ITEMS, comparisons.FEW_RATERS, comparisons.UNBALANCED}


def test_systems_that_answered_the_same_inputs_are_compared_paired():
    rng = np.random.default_rng(4)
    difficulty = rng.normal(0, 3, 25)
    rows = []
    for seg in range(25):
        rows += [(f"a-{seg}", "A", "w", difficulty[seg] + 0.5 + rng.normal(0, 0.3)),
                 (f"b-{seg}", "B", "w", difficulty[seg] + rng.normal(0, 0.3))]
    frame = _frame(rows, segment=True).assign(z=lambda f: f["value"])
    assert comparisons.shares_segments(frame)
    row = compare_systems(frame, n_boot=200).iloc[0]
    a = frame[frame.system == "A"].set_index("segment")["value"].sort_index()
    b = frame[frame.system == "B"].set_index("segment")["value"].sort_index()
    expected = stats.wilcoxon(a, b)
    assert (row["test"], row["paired"]) == ("wilcoxon_signed_rank", True)
    assert row["p"] == pytest.approx(expected.pvalue)
    assert row["better"] == "A"
    unpaired = compare_systems(frame.assign(segment=None), n_boot=0).iloc[0]
    assert unpaired["test"] == "mann_whitney_u" and unpaired["p"] > row["p"]


@pytest.mark.parametrize("d", [
    [2, -1, 1, 3, 0, 2, -2, 1, 1, 4, 0, -1, 2],  # 13 differences, ties and zeros
    [0.5, 0.5, -0.5, 1.5, 2.0, 0.5, -1.0, 1.0, 2.0, 1.5, 0.5, 3.0],  # 12, ties, no zero
    [1, 2, 3, 0, -4, 5],  # a zero, no tie
    [1.0, -2.0, 3.5, 4.0, -5.0, 6.0, 7.5, 8.0],  # no tie, no zero: the exact distribution
    list(range(-3, 12)),  # 15 differences with a zero: the normal approximation
])
def test_signed_rank_test_is_scipys_wilcoxon_and_an_enumeration_of_sign_flips(d):
    d = np.array(d, dtype=float)
    statistic, p = wilcoxon_signed_rank(d)
    expected = stats.wilcoxon(d)
    assert (statistic, p) == (pytest.approx(expected.statistic), pytest.approx(expected.pvalue))
    nonzero = d[d != 0]
    if len(d) <= comparisons.EXACT_SIGN_FLIPS:  # every sign flip of the ranks, one at a time
        ranks = stats.rankdata(np.abs(nonzero))
        observed = ranks[nonzero > 0].sum()
        null = [sum(r for r, up in zip(ranks, signs, strict=True) if up)
                for signs in itertools.product([False, True], repeat=len(ranks))]
        below = np.mean([x <= observed for x in null])
        above = np.mean([x >= observed for x in null])
        assert p == pytest.approx(min(1.0, 2 * min(below, above)))


def test_clusters_split_where_every_system_above_beats_every_system_below():
    rng = np.random.default_rng(5)
    rows = []
    for system, level in (("A", 10), ("B", 9.9), ("C", 0), ("D", -0.1)):
        rows += [(f"{system}{n}", system, f"w{n % 5}", level + rng.normal(0, 1))
                 for n in range(40)]
    frame = _frame(rows)
    ranking = system_ranking(frame)
    compared = compare_systems(z_scores(frame), n_boot=0)
    ranking["cluster"] = significance_clusters(ranking, compared)
    clusters = dict(zip(ranking["system"], ranking["cluster"], strict=True))
    assert clusters["A"] == clusters["B"] == 1 and clusters["C"] == clusters["D"] == 2


def test_identical_systems_rarely_get_a_winner():
    # 100 simulated studies, five identical systems (10 pairs each): with Holm's correction
    # the chance of any "better" in a study is at most alpha, so more than 11 of 100 (a
    # binomial(100, 0.05) tail below 0.5%) would mean the correction does not hold.
    with_winner = 0
    for seed in range(100):
        rng = np.random.default_rng(seed)
        rows = [(f"{s}{n}", s, f"w{k}", float(rng.integers(1, 6)))
                for s in "ABCDE" for n in range(20) for k in range(3)]
        compared = compare_systems(z_scores(_frame(rows)), n_boot=0)
        with_winner += compared["better"].notna().any()
    assert with_winner <= 11
