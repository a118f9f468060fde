"""Crossed raters: intervals of a system's mean that treat raters as a sample as well as items
cover the true mean; the item bootstrap (raters held fixed) does not."""
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from campaigns.analysis.crossed import (
    METHOD,
    MIN_RATERS,
    two_way_bootstrap_ci,
    two_way_cluster_ci,
)
from campaigns.analysis.scores import item_cluster_ci, system_scores


def crossed_study(n_items, seed, raters=15, per_item=3, leniency=0.5):
    """Each item rated by `per_item` of `raters` raters; item sd 1, leniency sd `leniency`,
    residual sd 1; the true mean is 0."""
    rng = np.random.default_rng(seed)
    item = np.repeat(np.arange(n_items), per_item)
    rater = np.concatenate([rng.choice(raters, per_item, replace=False)
                            for _ in range(n_items)])
    value = (rng.normal(0, 1, n_items)[item] + rng.normal(0, leniency, raters)[rater]
             + rng.normal(0, 1, len(item)))
    return item, rater, value


def test_the_two_way_variance_is_statsmodels_two_way_cluster_covariance():
    item, rater, value = crossed_study(60, seed=0)
    low, high, method = two_way_cluster_ci(item, rater, value)
    fit = sm.OLS(value, np.ones(len(value))).fit(
        cov_type="cluster", cov_kwds={"groups": np.column_stack([item, rater])})
    t = stats.t.ppf(0.975, min(60, 15) - 1)  # the fewer clusters: 15 raters
    assert method == METHOD
    assert (high - low) / 2 == pytest.approx(t * fit.bse[0], rel=1e-9)
    assert (low + high) / 2 == pytest.approx(value.mean())


@pytest.mark.parametrize("n_items", [30, 100])
def test_coverage_with_crossed_raters_is_near_95_percent_where_items_alone_fall_short(n_items):
    reps = 300
    crossed = fixed = 0
    for seed in range(reps):
        item, rater, value = crossed_study(n_items, seed)
        low, high, _ = two_way_cluster_ci(item, rater, value)
        crossed += low <= 0 <= high
        low, high, _ = item_cluster_ci(item, value, n_boot=200, seed=seed)
        fixed += low <= 0 <= high
    assert 0.93 <= crossed / reps <= 0.97
    if n_items == 100:  # the item bootstrap was 80% here (raters held fixed)
        assert fixed / reps < 0.86


def test_the_pigeonhole_bootstrap_errs_wide_and_needs_enough_raters():
    item, rater, value = crossed_study(30, seed=1)
    boot = two_way_bootstrap_ci(item, rater, value, n_boot=400)
    cluster = two_way_cluster_ci(item, rater, value)
    assert boot[1] - boot[0] > cluster[1] - cluster[0]
    few = rater % (MIN_RATERS - 1)
    assert two_way_cluster_ci(item, few, value) == (None, None, None)
    assert two_way_bootstrap_ci(item, few, value, n_boot=100) == (None, None, None)


def test_system_scores_say_whether_raters_were_treated_as_a_sample():
    item, rater, value = crossed_study(40, seed=2)
    frame = pd.DataFrame({"item": item, "worker": rater, "value": value, "question": "q",
                          "part": "", "system": "A"})
    few = frame.assign(system="B", item=frame["item"] + 1000, worker=frame["worker"] % 4)
    table = system_scores(pd.concat([frame, few]), n_boot=200).set_index("system")
    assert table.loc["A", "ci_method"] == METHOD and table.loc["A", "n_raters"] == 15
    assert table.loc["B", "ci_method"] == "item_bootstrap" and table.loc["B", "n_raters"] == 4
