"""Per-system scores, item-clustered intervals, WMT z-scores and ranking on hand-made data."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from campaigns.analysis.crossed import two_way_cluster_ci
from campaigns.analysis.scores import (
    bootstrap_mean_ci,
    item_cluster_ci,
    system_ranking,
    system_scores,
    z_scores,
)
from tests.shared_data import SHARED, require

STORY_DIR = SHARED / "realdata" / "story_rating"


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


def test_system_intervals_resample_items_and_keep_their_ratings():
    # 30 items, each rated 4 times with an item effect: ratings of one item are alike, so
    # resampling single ratings would make the interval too narrow.
    rng = np.random.default_rng(3)
    item_effect = rng.normal(0, 10, 30)
    rows = [(i, "A", f"w{r}", 50 + item_effect[i] + rng.normal(0, 1))
            for i in range(30) for r in range(4)]
    frame = _frame(rows)
    row = system_scores(frame, n_boot=2000).iloc[0]
    assert row["ci_method"] == "item_bootstrap" and row["n_items"] == 30
    naive = bootstrap_mean_ci(frame["value"].to_numpy(), n_boot=2000)
    assert (row["ci_high"] - row["ci_low"]) > 1.5 * (naive[1] - naive[0])
    # Independent: the t-interval over item means (balanced items: the cluster-robust
    # standard error) is close to the item bootstrap.
    means = frame.groupby("item")["value"].mean()
    t_low, t_high = stats.t.interval(0.95, len(means) - 1, means.mean(), stats.sem(means))
    assert row["ci_low"] == pytest.approx(t_low, abs=1.5)
    assert row["ci_high"] == pytest.approx(t_high, abs=1.5)


def test_few_items_get_a_t_interval_over_item_means_in_any_row_order():
    rows = [(i, "A", w, float(v)) for i, (a, b) in enumerate([(1, 2), (3, 3), (4, 5), (2, 2),
                                                              (5, 4)])
            for w, v in (("w1", a), ("w2", b))]
    low, high, method = item_cluster_ci(*np.array([(r[0], r[3]) for r in rows]).T)
    means = pd.Series([1.5, 3, 4.5, 2, 4.5])
    expected = stats.t.interval(0.95, 4, means.mean(), stats.sem(means))
    assert method == "item_cluster_t"
    assert (low, high) == pytest.approx(expected)
    shuffled = _frame(rows).sample(frac=1, random_state=1)
    row = system_scores(shuffled).iloc[0]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(expected)


def _scratchplot_ratings() -> pd.DataFrame:
    """ScratchPlot's crowd ratings of 100 generated stories (2 systems, three 1-5 aspects) in
    the long form system_scores reads: the story text is the item."""
    frames = []
    for aspect in ("coherence", "interestingness", "naturalness"):
        raw = pd.read_csv(STORY_DIR / f"scratchplot_{aspect}_full-annotation-result-new.tsv",
                          sep="\t", dtype=str, keep_default_na=False)
        frames.append(pd.DataFrame({
            "item": raw["INPUT:story"], "system": raw["INPUT:system"],
            "worker": raw["ASSIGNMENT:worker_id"], "question": aspect, "part": "",
            "value": raw["OUTPUT:category"].astype(float)}))
    return pd.concat(frames, ignore_index=True)


def test_system_scores_on_real_ratings_equal_pandas_and_each_systems_own_interval():
    require(STORY_DIR)
    frame = _scratchplot_ratings().sample(frac=1, random_state=0)  # rows in no useful order
    table = system_scores(frame, n_boot=200)
    expected = frame.groupby(["question", "part", "system"]).agg(
        n=("value", "size"), n_items=("item", "nunique"), mean=("value", "mean"),
        sd=("value", "std"), n_raters=("worker", "nunique")).reset_index()
    assert len(expected) == 6 and expected["n_raters"].min() > 1  # 2 systems x 3 aspects
    assert table[["question", "part", "system"]].equals(expected[["question", "part", "system"]])
    assert table[["n", "n_items", "n_raters"]].equals(expected[["n", "n_items", "n_raters"]])
    assert table["mean"].tolist() == pytest.approx(expected["mean"].tolist(), rel=1e-12)
    assert table["sd"].tolist() == pytest.approx(expected["sd"].tolist(), rel=1e-12)
    for row in table.itertuples():  # the interval of exactly that system's ratings
        own = frame[(frame.question == row.question) & (frame.system == row.system)]
        low, high, method = two_way_cluster_ci(own["item"].to_numpy(), own["worker"].to_numpy(),
                                               own["value"].to_numpy())
        if method is None:
            low, high, method = item_cluster_ci(own["item"].to_numpy(), own["value"].to_numpy(),
                                                n_boot=200)
        assert (row.ci_low, row.ci_high, row.ci_method) == (
            pytest.approx(low, rel=1e-12), pytest.approx(high, rel=1e-12), method)
