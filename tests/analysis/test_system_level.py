"""System-level judge correlations with intervals from items resampled within systems, and
the human ceiling a design allows: CompQA's GPT-4 rubric totals against the one expert."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from campaigns.analysis.alignment import align
from campaigns.analysis.ceiling import ceiling_summary
from campaigns.analysis.system_level import split_half_ceiling
from tests.analysis.test_realdata import CRITERIA, RUBRIC_DIR, _rubric_frames
from tests.shared_data import require


def _totals() -> pd.DataFrame:
    """Expert and GPT-4 rubric totals per answer, GPT-4's half-point answer and its five
    all-zero failed runs left out (as the product leaves them out): 119 answers, 24 systems."""
    require(RUBRIC_DIR)
    human, gpt = _rubric_frames()
    joined = human.merge(gpt.drop(index=57), on="key", suffixes=("_h", "_g"))
    joined = joined[~(joined[[f"{c}_g" for c in CRITERIA]] == 0).all(axis=1)]
    return pd.DataFrame({
        "item": joined["key"], "system": joined["filename_h"],
        "value_human": joined[[f"{c}_h" for c in CRITERIA]].sum(axis=1).to_numpy(),
        "value_judge": joined[[f"{c}_g" for c in CRITERIA]].sum(axis=1).to_numpy()})


def test_system_correlations_get_intervals_from_items_resampled_within_systems():
    pairs = _totals()
    assert len(pairs) == 119 and pairs["system"].nunique() == 24
    row = align(pairs, "interval", n_boot=1000, seed=0)
    # Recomputed with pandas and scipy from the same draws: systems in sorted order, each
    # drawing its items with rng.integers(0, n_s, (1000, n_s)) from default_rng(0); the
    # items in the order align reads them (sorted by item).
    ordered = pairs.sort_values("item", kind="stable")
    names = sorted(ordered["system"].unique())
    human = {n: ordered[ordered["system"] == n]["value_human"].to_numpy() for n in names}
    judge = {n: ordered[ordered["system"] == n]["value_judge"].to_numpy() for n in names}
    rng = np.random.default_rng(0)
    index = {n: rng.integers(0, len(human[n]), (1000, len(human[n]))) for n in names}
    figures = {"pearson": [], "spearman": [], "kendall": []}
    for b in range(1000):
        h = [human[n][index[n][b]].mean() for n in names]
        j = [judge[n][index[n][b]].mean() for n in names]
        figures["pearson"].append(np.corrcoef(h, j)[0, 1])
        figures["spearman"].append(np.corrcoef(stats.rankdata(h), stats.rankdata(j))[0, 1])
        figures["kendall"].append(stats.kendalltau(h, j).statistic)
    for name, values in figures.items():
        low, high = np.percentile(values, [2.5, 97.5])
        assert row[f"system_{name}_boot_ci_low"] == pytest.approx(low, abs=1e-9)
        assert row[f"system_{name}_boot_ci_high"] == pytest.approx(high, abs=1e-9)
    # The figures the issue quotes: r = 0.69 over 24 systems, the items' uncertainty alone
    # [0.40, 0.77] (Fisher's z over systems, which treats the systems as the sample: wider).
    assert row["system_pearson"] == pytest.approx(0.694, abs=0.001)
    assert (row["system_pearson_boot_ci_low"], row["system_pearson_boot_ci_high"]) == \
        pytest.approx((0.396, 0.769), abs=0.005)


def test_split_half_ceiling_matches_an_independent_average_over_random_splits():
    pairs = _totals()
    ours = split_half_ceiling(pairs["system"].to_numpy(), pairs["value_human"].to_numpy(),
                              splits=200, seed=0)
    rng = np.random.default_rng(123)  # other splits: the average must not hang on the draws
    groups = [g["value_human"].to_numpy() for _, g in pairs.groupby("system")]
    r = []
    for _ in range(1000):
        halves = []
        for values in groups:
            shuffled = rng.permutation(values)
            cut = (len(shuffled) + 1) // 2
            halves.append((shuffled[:cut].mean(), shuffled[cut:].mean()))
        first, second = zip(*halves, strict=True)
        r.append(np.corrcoef(first, second)[0, 1])
    expected_r = np.mean(r)
    assert ours["split_half_r"] == pytest.approx(expected_r, abs=0.01)
    assert ours["spearman_brown"] == pytest.approx(2 * ours["split_half_r"]
                                                   / (1 + ours["split_half_r"]))
    assert ours["ceiling_pearson"] == pytest.approx(np.sqrt(ours["spearman_brown"]))
    assert ours["systems"] == 24 and ours["split_low"] < ours["split_half_r"] < ours["split_high"]


def test_split_half_ceiling_does_not_depend_on_the_order_of_the_rows():
    # The database returns rows in no set order: the same data must give the same figure.
    pairs = _totals()
    shuffled = pairs.sample(frac=1, random_state=7)
    assert split_half_ceiling(pairs["system"].to_numpy(), pairs["value_human"].to_numpy()) == \
        split_half_ceiling(shuffled["system"].to_numpy(), shuffled["value_human"].to_numpy())


def test_a_simulated_human_ceiling_bounds_what_a_perfect_judge_reaches():
    # 12 systems, 20 items each, one human with noise sd 1 around system means of sd 0.3:
    # a judge that knew the true means correlates with the human's means at about the
    # ceiling, averaged over studies.
    rng = np.random.default_rng(5)
    ceilings, perfect = [], []
    for _ in range(60):
        truth = rng.normal(0, 0.3, 12)
        systems = np.repeat(np.arange(12), 20)
        values = truth[systems] + rng.normal(0, 1, len(systems))
        ceilings.append(split_half_ceiling(systems, values, splits=50)["ceiling_pearson"])
        means = pd.Series(values).groupby(systems).mean()
        perfect.append(stats.pearsonr(means, truth).statistic)
    assert np.mean(ceilings) == pytest.approx(np.mean(perfect), abs=0.05)


def test_one_human_on_too_few_systems_gets_an_explicit_no_ceiling():
    humans = pd.DataFrame({"item": range(8), "system": ["a", "b"] * 4, "worker": "expert",
                           "question": "q", "part": "", "value": [1, 2, 3, 4, 5, 4, 3, 2]})
    row = ceiling_summary(humans, {("q", ""): "ordinal"}).iloc[0]
    assert row["method"] == "none"
    assert row["reason"].startswith("no ceiling: one human rated every item")
    assert "fewer than 3 systems" in row["reason"]
    two = pd.concat([humans, humans.assign(worker="second")])
    assert ceiling_summary(two, {("q", ""): "ordinal"}).iloc[0]["method"] == "leave_one_out"
