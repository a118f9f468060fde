"""Bradley-Terry with a position term: an equal system shown first more often is not ranked
first, and the fit is a logistic regression with an intercept (statsmodels)."""
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from campaigns.analysis.preference import bradley_terry, position_bias
from campaigns.analysis.preference_position import ELO_SCALE, bradley_terry_position


def unbalanced_study(n_items=300, seed=0, k=4, gamma=0.8, skew=0.9, ties=False):
    """k equal systems; s0 sits first in `skew` of its pairs, the others half the time; the
    first position wins with log-odds `gamma` (a few ties when `ties`)."""
    rng = np.random.default_rng(seed)
    rows = []
    for n in range(n_items):
        a, b = sorted(rng.choice(k, 2, replace=False))
        on_top = skew if a == 0 else 0.5
        first, second = (a, b) if rng.random() < on_top else (b, a)
        score = float(rng.random() < 1 / (1 + np.exp(-gamma)))
        if ties and rng.random() < 0.1:
            score = 0.5
        rows.append((f"i{n}", "w", f"s{first}", f"s{second}", score))
    return pd.DataFrame(rows, columns=["item", "worker", "first", "second", "score"])


def test_the_fit_is_statsmodels_logistic_regression_with_a_position_intercept():
    frame = unbalanced_study(seed=3, ties=True)
    ours = bradley_terry_position(frame, n_boot=0)
    systems = sorted(set(frame["first"]) | set(frame["second"]))
    x = np.zeros((len(frame), len(systems)))
    for j, s in enumerate(systems):
        x[:, j] = (frame["first"] == s).astype(float) - (frame["second"] == s).astype(float)
    design = np.column_stack([np.ones(len(frame)), x[:, 1:]])  # theta_0 = 0
    fit = sm.GLM(frame["score"].to_numpy(), design, family=sm.families.Binomial()).fit()
    theta = np.concatenate([[0.0], fit.params[1:]])
    theta -= theta.mean()
    table = ours["table"].set_index("system")
    assert table.loc[systems, "strength"].to_numpy() == pytest.approx(theta, abs=1e-7)
    assert ours["position_effect"]["gamma"] == pytest.approx(fit.params[0], abs=1e-7)
    assert table["elo"].to_numpy() == pytest.approx(1000 + ELO_SCALE * table["strength"])


def test_an_equal_system_shown_first_more_often_is_not_ranked_first():
    frame = unbalanced_study(seed=0)
    plain = bradley_terry(frame, n_boot=300).set_index("system")
    assert plain.loc["s0", "rank"] == 1 and plain.loc["s0", "ci_low"] > 0  # the old answer
    assert position_bias(frame)["p_value"] < 1e-6
    adjusted = bradley_terry_position(frame, n_boot=500)
    table = adjusted["table"].set_index("system")
    assert adjusted["unbalanced"] and adjusted["default"] == "position_adjusted"
    assert table.loc["s0", "ci_low"] < 0 < table.loc["s0", "ci_high"]
    assert (table["rank_low"] == 1).sum() >= 3  # no system is first with certainty
    effect = adjusted["position_effect"]
    assert effect["ci_low"] < 0.8 < effect["ci_high"]


def test_a_balanced_order_keeps_the_plain_fit_as_default():
    balanced = bradley_terry_position(unbalanced_study(n_items=400, seed=1, skew=0.5),
                                      n_boot=0)
    assert not balanced["unbalanced"] and balanced["default"] == "unadjusted"


def test_the_report_puts_the_adjusted_strengths_forward_when_the_order_was_unbalanced():
    from campaigns.analysis.report import _position_adjusted_markdown
    from campaigns.selectors.analysis.frames import records

    fitted = bradley_terry_position(unbalanced_study(seed=0), n_boot=100)
    entry = {"bradley_terry_position": records(fitted["table"]),
             "position_effect": fitted["position_effect"], "order_unbalanced": True}
    text = "\n".join(_position_adjusted_markdown(entry))
    assert "these position-adjusted strengths are the result to report" in text
    assert "| s0 |" in text and "90%" in text
