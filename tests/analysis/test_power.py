"""Planning by simulation through the analysis: a plan for k systems under a correction
delivers its power when the same analysis is run on studies drawn from the plan."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from campaigns.analysis.planning import VarianceComponents, items_needed
from campaigns.analysis.power import (
    numeric_power,
    pairwise_power,
    plan_numeric,
    plan_pairwise,
)
from campaigns.analysis.preference_tests import preference_comparisons

COMPONENTS = VarianceComponents(item_variance=64.0, rating_variance=144.0, n_items=60,
                                ratings_per_item=4)


def test_a_one_test_plan_underdelivers_with_five_systems_and_the_simulated_plan_does_not():
    one_test = items_needed(COMPONENTS, effect=5, ratings_per_item=4)
    # With two systems the one-test formula is right: the simulation agrees with it.
    assert numeric_power(COMPONENTS, effect=5, items_per_system=one_test, ratings_per_item=4,
                         systems=2, n_sim=150, seed=3) == pytest.approx(0.8, abs=0.08)
    # With five systems and Holm over ten pairs it is not (was the planning helper's answer).
    short = numeric_power(COMPONENTS, effect=5, items_per_system=one_test, ratings_per_item=4,
                          systems=5, n_sim=40, seed=4)
    assert short < 0.6
    plan = plan_numeric(COMPONENTS, effect=5, ratings_per_item=4, systems=5, n_sim=40, seed=1)
    assert plan["pairs"] == 10 and plan["correction"] == "holm"
    assert plan["items_per_system_needed"] > 1.4 * one_test
    checked = numeric_power(COMPONENTS, effect=5, items_per_system=plan["items_per_system_needed"],
                            ratings_per_item=4, systems=5, n_sim=40, seed=99)
    assert checked >= 0.7


def test_paired_designs_need_fewer_items_when_segments_carry_the_item_variance():
    unpaired = plan_numeric(COMPONENTS, effect=5, ratings_per_item=4, n_sim=60, seed=2)
    paired = plan_numeric(COMPONENTS, effect=5, ratings_per_item=4, paired=True, n_sim=60,
                          seed=2)
    assert paired["paired"] and paired["items_per_system_needed"] < unpaired[
        "items_per_system_needed"]


def _exact_sign_test_power(n: int, p_win: float, alpha: float = 0.05) -> float:
    """Exact power of the two-sided binomial test of n decisive items in the right direction."""
    wins = np.arange(n + 1)
    p = np.array([stats.binomtest(int(w), n, 0.5).pvalue for w in wins])
    return float(stats.binom.pmf(wins, n, p_win)[(p < alpha) & (wins > n / 2)].sum())


def test_pairwise_power_of_one_pair_matches_the_exact_binomial_power():
    effect = 0.5
    p_win = 1 / (1 + np.exp(-effect))
    simulated = pairwise_power(effect=effect, judgments_per_pair=60, n_sim=200, seed=5)
    exact = _exact_sign_test_power(60, p_win)
    assert simulated == pytest.approx(exact, abs=3 * np.sqrt(exact * (1 - exact) / 200))
    plan = plan_pairwise(effect=effect, systems=4, n_sim=50, seed=0)
    assert plan["pairs"] == 6 and plan["simulated_power"] >= 0.77
    assert plan["judgments_per_pair_needed"] > 60


def test_pairwise_comparisons_are_sign_tests_over_items_corrected_like_statsmodels():
    rng = np.random.default_rng(7)
    rows = []
    for item in range(120):
        a, b = sorted(rng.choice(["A", "B", "C"], 2, replace=False))
        p_a = {"A": 0.75, "B": 0.5, "C": 0.3}[a] if b != "A" else 0.5
        for worker in range(2):
            win = rng.random() < p_a
            rows.append((f"i{item}", f"w{worker}", a, b, float(win)))
    frame = pd.DataFrame(rows, columns=["item", "worker", "first", "second", "score"])
    table = preference_comparisons(frame)
    for row in table.itertuples():
        pair = frame[(frame["first"] == row.system_a) & (frame["second"] == row.system_b)]
        per_item = pair.groupby("item")["score"].mean()
        won_a, won_b = int((per_item > 0.5).sum()), int((per_item < 0.5).sum())
        assert (row.items_a, row.items_b) == (won_a, won_b)
        assert row.p == pytest.approx(stats.binomtest(won_a, won_a + won_b).pvalue)
    assert table["p_adjusted"].to_numpy() == pytest.approx(
        multipletests(table["p"].to_numpy(), method="holm")[1])
    assert table.loc[table["p_adjusted"] < 0.05, "better"].notna().all()
    assert table.loc[table["p_adjusted"] >= 0.05, "better"].isna().all()


def test_a_plan_asked_again_is_the_one_kept_and_a_caller_cannot_change_it(monkeypatch):
    from campaigns.analysis import power

    first = plan_numeric(COMPONENTS, effect=6, ratings_per_item=4, systems=3, n_sim=30, seed=5)
    first["items_per_system_needed"] = -1  # a caller's copy

    def no_simulation(*args, **kwargs):
        raise AssertionError("simulated again")

    monkeypatch.setattr(power, "numeric_power", no_simulation)
    again = plan_numeric(COMPONENTS, effect=6, ratings_per_item=4, systems=3, n_sim=30, seed=5)
    assert again["items_per_system_needed"] > 0 and again["systems"] == 3
    with pytest.raises(AssertionError, match="simulated again"):  # other arguments: a new plan
        plan_numeric(COMPONENTS, effect=6, ratings_per_item=4, systems=3, n_sim=30, seed=6)
    pairwise = plan_pairwise(effect=0.8, systems=3, n_sim=20, seed=5)
    monkeypatch.setattr(power, "pairwise_power", no_simulation)
    assert plan_pairwise(effect=0.8, systems=3, n_sim=20, seed=5) == pairwise
