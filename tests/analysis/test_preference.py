"""Pairwise preference statistics against hand-solved cases and an independent ML fit."""
import numpy as np
import pandas as pd
import pytest
from scipy import optimize
from scipy.special import expit

from campaigns.analysis.preference import (
    bradley_terry,
    fit_strengths,
    position_bias,
    win_rates,
    win_tie_loss,
)


def judgments(rows):
    """rows: (item, first, second, score)."""
    return pd.DataFrame([{"item": i, "worker": f"w{n}", "first": a, "second": b, "score": s}
                         for n, (i, a, b, s) in enumerate(rows)])


def test_win_tie_loss_and_win_rates_count_ties_as_half():
    frame = judgments([(1, "x", "y", 1), (2, "y", "x", 1), (3, "x", "y", 0.5),
                       (4, "y", "x", 0), (5, "x", "z", 0)])
    pairs = win_tie_loss(frame).set_index(["system_a", "system_b"])
    assert pairs.loc[("x", "y")].to_dict() == {"wins_a": 2, "ties": 1, "wins_b": 1, "n": 4,
                                               "win_rate_a": 2.5 / 4}
    assert pairs.loc[("x", "z")].to_dict() == {"wins_a": 0, "ties": 0, "wins_b": 1, "n": 1,
                                               "win_rate_a": 0.0}
    rates = win_rates(frame).set_index("system")
    assert rates.loc["x"].to_dict() == {"wins": 2, "ties": 1, "losses": 2, "n": 5,
                                        "win_rate": 2.5 / 5}
    assert rates.loc["z", "win_rate"] == 1.0


def test_bradley_terry_matches_a_hand_solved_pair():
    # x beats y twice and ties twice, y never wins outright: with ties split, x has 3 wins and
    # y 1 of 4, so the likelihood peaks at p_x / p_y = 3: strengths +-log(3)/2 around 0.
    frame = judgments([(1, "x", "y", 1), (2, "y", "x", 0), (3, "x", "y", 0.5),
                       (4, "y", "x", 0.5)])
    table = bradley_terry(frame, n_boot=0).set_index("system")
    assert table.loc["x", "strength"] == pytest.approx(np.log(3) / 2, abs=1e-9)
    assert table.loc["y", "strength"] == pytest.approx(-np.log(3) / 2, abs=1e-9)
    assert list(table["rank"]) == [1, 2]


def _scipy_fit(wins: np.ndarray) -> np.ndarray:
    """Direct maximum likelihood: minimise -sum w_ij log sigmoid(t_i - t_j) with t_0 = 0."""
    k = len(wins)

    def negative_log_likelihood(free):
        theta = np.concatenate([[0.0], free])
        diff = theta[:, None] - theta[None, :]
        return -(wins * np.log(expit(diff))).sum()

    result = optimize.minimize(negative_log_likelihood, np.zeros(k - 1), method="BFGS",
                               options={"gtol": 1e-10})
    theta = np.concatenate([[0.0], result.x])
    return theta - theta.mean()


def test_bradley_terry_matches_a_direct_maximum_likelihood_fit():
    rng = np.random.default_rng(7)
    true = {"a": 1.0, "b": 0.3, "c": 0.0, "d": -0.8}
    systems = list(true)
    rows = []
    for item in range(300):
        a, b = rng.choice(systems, 2, replace=False)
        p = expit(true[a] - true[b])
        u = rng.random()
        rows.append((item, a, b, 1.0 if u < p * 0.9 else 0.5 if u < p * 0.9 + 0.1 else 0.0))
    frame = judgments(rows)
    table = bradley_terry(frame, n_boot=200, seed=1).set_index("system")
    index = {s: i for i, s in enumerate(sorted(systems))}
    wins = np.zeros((4, 4))
    for _, a, b, s in rows:
        wins[index[a], index[b]] += s
        wins[index[b], index[a]] += 1 - s
    expected = _scipy_fit(wins)
    for system, i in index.items():
        assert table.loc[system, "strength"] == pytest.approx(expected[i], abs=1e-5)
        assert table.loc[system, "ci_low"] < table.loc[system, "strength"] \
            < table.loc[system, "ci_high"]
    assert list(table.index) == ["a", "b", "c", "d"]  # sorted by rank
    assert table.loc["a", "rank_low"] == 1 and table.loc["d", "rank_high"] == 4
    assert (table["n_boot_used"] == 200).all()


def test_no_finite_fit_when_a_system_never_loses():
    frame = judgments([(1, "x", "y", 1), (2, "y", "x", 0)])
    assert fit_strengths(np.array([[0.0, 2.0], [0.0, 0.0]])) is None
    assert bradley_terry(frame, n_boot=10).empty


def test_the_bootstrap_keeps_an_items_judgments_together_and_is_reproducible():
    rows = [(item, "x", "y", s) for item in range(30) for s in (1, 1, 0.5, 0)]
    frame = judgments(rows)
    one = bradley_terry(frame, n_boot=100, seed=3)
    assert one.equals(bradley_terry(frame, n_boot=100, seed=3))
    # Every item has the same four judgments: every resample gives the same fit.
    assert one["ci_low"].to_numpy() == pytest.approx(one["strength"].to_numpy())


def test_position_bias_counts_pairs_shown_both_ways_only():
    frame = judgments([(1, "x", "y", 1), (2, "y", "x", 1), (3, "x", "y", 1), (4, "y", "x", 0),
                       (5, "x", "y", 0.5), (6, "x", "z", 1)])
    bias = position_bias(frame)
    assert (bias["n"], bias["first_wins"], bias["second_wins"], bias["ties"]) == (5, 3, 1, 1)
    assert bias["first_win_rate"] == 0.75 and bias["pairs_both_ways"] == 1
    assert bias["p_value"] == pytest.approx(0.625)  # exact binomial: 2 * P(X >= 3 | 4, 1/2)
    assert bias["ci_low"] < 0.75 < bias["ci_high"]
    assert position_bias(judgments([(1, "x", "z", 1)]))["n"] == 0


# --- best-worst scaling --------------------------------------------------------------------

def test_best_minus_worst_counts_by_hand_and_bootstraps_items():
    from campaigns.analysis.bestworst import best_minus_worst

    rows = []
    # Item 1 shows a, b, c twice: a best both times, c worst once and b worst once.
    for n, (best, worst) in enumerate([("a", "c"), ("a", "b")]):
        rows += [{"item": 1, "worker": n, "system": s,
                  "outcome": 1 if s == best else -1 if s == worst else 0} for s in "abc"]
    # Item 2 shows a, b, d once: d best, a worst.
    rows += [{"item": 2, "worker": 9, "system": s,
              "outcome": {"d": 1, "a": -1, "b": 0}[s]} for s in "abd"]
    table = best_minus_worst(pd.DataFrame(rows), n_boot=500, seed=2).set_index("system")
    assert table.loc["a", ["best", "worst", "appearances"]].tolist() == [2, 1, 3]
    assert table.loc["a", "score"] == pytest.approx(1 / 3)
    assert table.loc["b", "score"] == pytest.approx(-1 / 3)
    assert table.loc["c", "score"] == pytest.approx(-1 / 2)
    assert table.loc["d", "score"] == 1.0 and table.loc["d", "rank"] == 1
    # Two items: a resample holds item 1 twice (a: 2/2 = 1), item 2 twice (a: -1) or both.
    assert table.loc["a", "ci_low"] == pytest.approx(-1) and table.loc["a", "ci_high"] == 1
    # d appears on item 2 only: its score is 1 in every resample that holds it.
    assert table.loc["d", "ci_low"] == table.loc["d", "ci_high"] == 1.0
