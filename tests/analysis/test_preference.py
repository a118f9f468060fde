"""Pairwise preference statistics against hand-solved cases and an independent ML fit."""
import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import optimize
from scipy.special import expit

from campaigns.analysis.preference import (
    bradley_terry,
    fit_davidson,
    fit_strengths,
    position_bias,
    win_rates,
    win_tie_loss,
)
from tests.shared_data import SHARED, require


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


# --- ties: split or Davidson (1970), and an implementation the product does not use ----------

def rubric_preferences():
    """Real-ish pairs: the expert rubric totals of 25 systems on 5 comparative questions
    (shared data), every two systems on the same question compared (higher total wins, equal
    totals tie): 1,500 judgments, a fifth of them ties."""
    folder = SHARED / "realdata" / "comparative_rubric"
    require(folder)
    table = pd.read_csv(folder / "small_dataset_hum_evaluation.tsv", sep="\t")
    table["question"] = table["object1"] + "|" + table["object2"] + "|" \
        + table["aspect"].fillna("")
    rows = []
    for question, group in table.groupby("question"):
        scored = list(zip(group["filename"], group["score"], strict=True))
        for (a, x), (b, y) in itertools.combinations(scored, 2):
            rows.append((question, a, b, 1.0 if x > y else 0.5 if x == y else 0.0))
    return judgments(rows)


def _counts(frame):
    systems = sorted(set(frame["first"]) | set(frame["second"]))
    index = {s: i for i, s in enumerate(systems)}
    wins, ties = np.zeros((len(systems),) * 2), np.zeros((len(systems),) * 2)
    for a, b, s in zip(frame["first"].map(index), frame["second"].map(index), frame["score"],
                       strict=True):
        if s == 0.5:
            ties[a, b] += 1
            ties[b, a] += 1
        else:
            wins[(a, b) if s == 1 else (b, a)] += 1
    return systems, wins, ties


def _scipy_davidson(wins, ties):
    """Direct maximum likelihood of Davidson's model over (theta_1..k-1, log nu), theta_0 = 0."""
    k = len(wins)
    upper = np.triu(np.ones((k, k), dtype=bool), 1)

    def negative_log_likelihood(free):
        theta = np.concatenate([[0.0], free[:-1]])
        log_nu = free[-1]
        mid = (theta[:, None] + theta[None, :]) / 2
        log_d = np.logaddexp(np.logaddexp(theta[:, None], theta[None, :]), log_nu + mid)
        return -((wins * (theta[:, None] - log_d)).sum()
                 + (ties * (log_nu + mid - log_d))[upper].sum())

    result = optimize.minimize(negative_log_likelihood, np.zeros(k), method="BFGS",
                               options={"gtol": 1e-9})
    theta = np.concatenate([[0.0], result.x[:-1]])
    return theta - theta.mean(), float(np.exp(result.x[-1]))


def test_davidson_matches_a_hand_solved_pair():
    # x wins 3, y wins 1, 2 ties. Two systems leave the three outcomes' probabilities free, so
    # the fit reproduces the proportions: p_x / p_y = 3 / 1 and nu sqrt(p_x p_y) / p_y = 2 / 1,
    # i.e. strengths +-log(3)/2 and nu = 2 / sqrt(3). Splitting the ties gives 4 to 2 instead.
    frame = judgments([(1, "x", "y", 1), (2, "y", "x", 0), (3, "x", "y", 1), (4, "y", "x", 1),
                       (5, "x", "y", 0.5), (6, "y", "x", 0.5)])
    davidson = bradley_terry(frame, n_boot=0, ties="davidson")
    table = davidson.set_index("system")
    assert table.loc["x", "strength"] == pytest.approx(np.log(3) / 2, abs=1e-8)
    assert table.loc["y", "strength"] == pytest.approx(-np.log(3) / 2, abs=1e-8)
    assert davidson.attrs["tie_parameter"] == pytest.approx(2 / np.sqrt(3), abs=1e-8)
    split = bradley_terry(frame, n_boot=0).set_index("system")
    assert split.loc["x", "strength"] == pytest.approx(np.log(2) / 2, abs=1e-9)
    assert bradley_terry(frame, n_boot=0).attrs["tie_parameter"] is None


def test_davidson_matches_a_direct_maximum_likelihood_fit_on_real_scores():
    frame = rubric_preferences()
    assert len(frame) == 1500 and (frame["score"] == 0.5).mean() > 0.1
    systems, wins, ties = _counts(frame)
    expected, nu = _scipy_davidson(wins, ties)
    fitted = fit_davidson(wins, ties)
    assert fitted is not None
    assert fitted[0] == pytest.approx(expected, abs=1e-5)
    assert fitted[1] == pytest.approx(nu, rel=1e-5)
    table = bradley_terry(frame, n_boot=100, seed=4, ties="davidson").set_index("system")
    assert table.loc[systems, "strength"].to_numpy() == pytest.approx(expected, abs=1e-5)
    assert (table["ci_low"] <= table["strength"]).all()
    assert (table["strength"] <= table["ci_high"]).all()
    assert (table["ci_low"] < table["ci_high"]).all()


def test_split_ties_match_choix_on_real_scores():
    # choix takes (winner, loser) pairs only: a decided judgment entered twice and a tie once
    # each way is the split likelihood doubled, which has the same maximum.
    choix = pytest.importorskip("choix")
    frame = rubric_preferences()
    systems, wins, ties = _counts(frame)
    data = [(i, j) for i, j in zip(*np.nonzero(wins), strict=True)
            for _ in range(2 * int(wins[i, j]))]
    data += [(i, j) for i, j in zip(*np.nonzero(ties), strict=True) for _ in range(int(ties[i, j]))]
    expected = choix.ilsr_pairwise(len(systems), data, tol=1e-12, max_iter=1000)
    table = bradley_terry(frame, n_boot=0).set_index("system")
    assert table.loc[systems, "strength"].to_numpy() == pytest.approx(
        expected - expected.mean(), abs=1e-6)


def test_davidson_without_ties_is_bradley_terry_and_without_wins_has_no_fit():
    frame = judgments([(1, "x", "y", 1), (2, "y", "x", 1), (3, "x", "y", 1), (4, "x", "z", 0),
                       (5, "z", "y", 0), (6, "y", "z", 0)])
    davidson = bradley_terry(frame, n_boot=0, ties="davidson")
    assert davidson["strength"].to_numpy() == pytest.approx(
        bradley_terry(frame, n_boot=0)["strength"].to_numpy(), abs=1e-8)
    assert davidson.attrs["tie_parameter"] == 0
    assert bradley_terry(judgments([(1, "x", "y", 0.5), (2, "y", "x", 0.5)]),
                         ties="davidson").empty


def test_an_unknown_tie_model_is_refused():
    with pytest.raises(ValueError, match="ties must be one of split, davidson"):
        bradley_terry(judgments([(1, "x", "y", 1)]), ties="rao-kupper")


def test_the_bootstrap_resamples_items_as_distinct_rows_like_one_by_one():
    # Resampling the distinct rows of items by their frequency is resampling items: with
    # many items and few distinct rows, the intervals match a plain item bootstrap's.
    rng = np.random.default_rng(5)
    rows = [(item, *rng.permutation(["x", "y", "z"])[:2], float(rng.choice([1, 0.5, 0])))
            for item in range(400)]
    frame = judgments(rows)
    table = bradley_terry(frame, n_boot=400, seed=1).set_index("system")
    systems, _, _ = _counts(frame)
    index = {s: i for i, s in enumerate(systems)}
    first, second = frame["first"].map(index).to_numpy(), frame["second"].map(index).to_numpy()
    plain = []
    for _ in range(400):  # items drawn one by one; each judgment weighted by its item's draws
        weight = np.bincount(rng.integers(0, 400, 400), minlength=400)[frame["item"]]
        wins = np.zeros((3, 3))
        np.add.at(wins, (first, second), weight * frame["score"])
        np.add.at(wins, (second, first), weight * (1 - frame["score"]))
        plain.append(fit_strengths(wins))
    low, high = np.percentile(np.array(plain), [2.5, 97.5], axis=0)
    assert table.loc[systems, "ci_low"].to_numpy() == pytest.approx(low, abs=0.06)
    assert table.loc[systems, "ci_high"].to_numpy() == pytest.approx(high, abs=0.06)


@pytest.mark.parametrize("newton_steps", [25, 0])  # 0: every resample by the fixed point
@pytest.mark.parametrize("ties", ["split", "davidson"])
def test_resamples_fitted_as_one_stack_match_each_fitted_alone(monkeypatch, ties,
                                                              newton_steps):
    from campaigns.analysis import preference

    monkeypatch.setattr(preference, "NEWTON_STEPS", newton_steps)
    frame = rubric_preferences()
    systems, wins, tied = _counts(frame)
    rng = np.random.default_rng(8)
    stack_wins, stack_ties = [], []
    for _ in range(12):  # resample the 5 questions' judgments
        questions = rng.choice(frame["item"].unique(), 5)
        sample = pd.concat([frame[frame["item"] == q] for q in questions])
        _, w, t = _counts(sample)
        stack_wins.append(w)
        stack_ties.append(t)
    if ties == "davidson":
        start, nu = fit_davidson(wins, tied)
    else:
        start, nu = fit_strengths(wins + tied / 2), 0.0
    theta, ok = preference._fit_stack(np.array(stack_wins), np.array(stack_ties), ties,
                                      np.exp(start), nu)
    for n in np.flatnonzero(ok):
        alone = fit_davidson(stack_wins[n], stack_ties[n]) if ties == "davidson" \
            else (fit_strengths(stack_wins[n] + stack_ties[n] / 2),)
        assert theta[n] == pytest.approx(alone[0], abs=1e-6)
    assert ok.sum() >= 6


def test_position_bias_counts_each_pair_shown_both_ways_once():
    frame = judgments([(1, "x", "y", 1), (2, "y", "x", 1), (3, "x", "y", 0), (4, "z", "x", 1),
                       (5, "x", "z", 0), (6, "w", "w", 1), (7, "y", "z", 1)])
    bias = position_bias(frame)
    # x-y and x-z both ways; w against itself; y-z one way only (left out).
    assert bias["pairs_both_ways"] == 3 and bias["n"] == 6
    assert (bias["first_wins"], bias["second_wins"]) == (4, 2)
