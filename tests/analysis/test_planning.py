"""Planning helper: variance components and the items or ratings needed, against statsmodels."""
import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from statsmodels.stats.power import NormalIndPower

from campaigns.analysis.planning import (
    RANK_TEST_EFFICIENCY,
    items_needed,
    plan,
    ratings_needed,
    variance_components,
)


def _ratings(n_items=60, raters=4, item_sd=8.0, rating_sd=12.0, seed=0):
    rng = np.random.default_rng(seed)
    effect = rng.normal(0, item_sd, n_items)
    return pd.DataFrame([(i, 60 + effect[i] + rng.normal(0, rating_sd))
                         for i in range(n_items) for _ in range(raters)],
                        columns=["item", "value"])


def test_variance_components_match_a_reml_mixed_model_on_a_balanced_design():
    frame = _ratings()
    ours = variance_components(frame["item"].to_numpy(), frame["value"].to_numpy())
    model = smf.mixedlm("value ~ 1", frame, groups=frame["item"]).fit(reml=True)
    assert ours.item_variance == pytest.approx(float(model.cov_re.iloc[0, 0]), rel=1e-3)
    assert ours.rating_variance == pytest.approx(model.scale, rel=1e-3)
    assert (ours.n_items, ours.ratings_per_item) == (60, 4)


def test_items_needed_is_the_normal_power_formula_over_the_rank_tests_efficiency():
    frame = _ratings()
    c = variance_components(frame["item"].to_numpy(), frame["value"].to_numpy())
    sd = math.sqrt(c.item_variance + c.rating_variance / 4)
    n = NormalIndPower().solve_power(effect_size=5 / sd, alpha=0.05, power=0.8)
    assert items_needed(c, effect=5, ratings_per_item=4) == math.ceil(n / RANK_TEST_EFFICIENCY)
    # More ratings per item need fewer items; the answer for ratings inverts the one for items.
    assert items_needed(c, effect=5, ratings_per_item=8) < items_needed(c, effect=5,
                                                                          ratings_per_item=4)
    r = ratings_needed(c, effect=5, items_per_system=items_needed(c, effect=5,
                                                                    ratings_per_item=3))
    assert r <= 3
    assert ratings_needed(c, effect=0.1, items_per_system=10) is None  # items' spread wins
    summary = plan(c, effect=5, items_per_system=30)
    assert summary["more_items_per_system"] == summary["items_per_system_needed"] - 30


def test_bad_planning_input_is_refused():
    frame = _ratings(n_items=5)
    c = variance_components(frame["item"].to_numpy(), frame["value"].to_numpy())
    with pytest.raises(ValueError):
        items_needed(c, effect=0, ratings_per_item=3)
    with pytest.raises(ValueError):
        variance_components(np.array([1]), np.array([3.0]))
