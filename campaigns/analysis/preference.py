"""Paired preferences between systems: win/tie/loss, win rates, Bradley-Terry, position bias.

Input frames hold one row per judged pair in long form with columns item, worker, first,
second (the systems shown in the first and second position) and score (the first system's
result: 1 win, 0.5 tie, 0 loss). Ties are split: a tie counts as half a win for each side,
in the win rates and in the Bradley-Terry fit alike.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from . import N_BOOT

ALPHA = 0.05
COLUMNS = ["item", "worker", "first", "second", "score"]
MAX_ITERATIONS = 10_000
TOLERANCE = 1e-10


def win_tie_loss(frame: pd.DataFrame) -> pd.DataFrame:
    """Per unordered system pair (system_a < system_b): a's wins, ties, b's wins, judgments,
    and a's win rate with ties as half."""
    if frame.empty:
        return pd.DataFrame(columns=["system_a", "system_b", "wins_a", "ties", "wins_b", "n",
                                     "win_rate_a"])
    swap = frame["first"] > frame["second"]
    a = frame["first"].where(~swap, frame["second"])
    b = frame["second"].where(~swap, frame["first"])
    score_a = frame["score"].where(~swap, 1 - frame["score"])
    table = pd.DataFrame({"system_a": a, "system_b": b,
                          "wins_a": (score_a == 1).astype(int), "ties": (score_a == 0.5)
                          .astype(int), "wins_b": (score_a == 0).astype(int), "points": score_a})
    out = table.groupby(["system_a", "system_b"], sort=True).sum().reset_index()
    out["n"] = out["wins_a"] + out["ties"] + out["wins_b"]
    out["win_rate_a"] = out.pop("points") / out["n"]
    return out


def win_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """Per system: wins, ties, losses, judgments and win rate (ties as half) over every pair."""
    both = pd.concat([
        pd.DataFrame({"system": frame["first"], "score": frame["score"]}),
        pd.DataFrame({"system": frame["second"], "score": 1 - frame["score"]})])
    table = both.assign(wins=(both["score"] == 1).astype(int),
                        ties=(both["score"] == 0.5).astype(int),
                        losses=(both["score"] == 0).astype(int))
    out = table.groupby("system", sort=True).agg(
        wins=("wins", "sum"), ties=("ties", "sum"), losses=("losses", "sum"),
        n=("score", "size"), win_rate=("score", "mean")).reset_index()
    return out


def _wins_matrix(first: np.ndarray, second: np.ndarray, score: np.ndarray, k: int,
                 weights: np.ndarray | None = None) -> np.ndarray:
    """wins[i, j]: how often i beat j, a tie counting half to each side."""
    w = np.ones(len(score)) if weights is None else weights
    wins = np.zeros((k, k))
    np.add.at(wins, (first, second), w * score)
    np.add.at(wins, (second, first), w * (1 - score))
    return wins


def has_finite_fit(wins: np.ndarray) -> bool:
    """Whether the maximum-likelihood strengths are finite: every split of the systems into
    two groups has a (partial) win each way across it, i.e. the graph of wins is strongly
    connected (Zermelo 1929; Ford 1957)."""
    if len(wins) < 2:
        return False
    n, _ = connected_components(csr_matrix(wins > 0), directed=True, connection="strong")
    return n == 1


def fit_strengths(wins: np.ndarray) -> np.ndarray | None:
    """Bradley-Terry log-strengths (centred on 0) maximising the likelihood of `wins`, by the
    minorisation-maximisation iteration of Hunter (2004); None when no finite fit exists."""
    if not has_finite_fit(wins):
        return None
    games = wins + wins.T
    won = wins.sum(axis=1)
    p = np.ones(len(wins))
    for _ in range(MAX_ITERATIONS):
        denominators = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = won / denominators
        new /= np.exp(np.log(new).mean())
        done = np.max(np.abs(np.log(new) - np.log(p))) < TOLERANCE
        p = new
        if done:
            break
    return np.log(p)


def bradley_terry(frame: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = 0,
                  alpha: float = ALPHA) -> pd.DataFrame:
    """Per system: the Bradley-Terry log-strength (centred: mean 0), its item-bootstrap
    percentile interval, the rank (1 = strongest) and the bootstrap's rank interval.

    Items are resampled with replacement, keeping every judgment of an item (judgments of one
    item share its input). Resamples without a finite fit (a system never beaten, or never
    winning, in the resample) are left out; `n_boot_used` says how many remained.
    """
    columns = ["system", "strength", "ci_low", "ci_high", "rank", "rank_low", "rank_high",
               "n", "n_boot_used"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    systems = np.array(sorted(set(frame["first"]) | set(frame["second"])))
    index = {s: i for i, s in enumerate(systems)}
    first = frame["first"].map(index).to_numpy()
    second = frame["second"].map(index).to_numpy()
    score = frame["score"].to_numpy(dtype=float)
    k = len(systems)
    theta = fit_strengths(_wins_matrix(first, second, score, k))
    if theta is None:
        return pd.DataFrame(columns=columns)
    items, at_item = np.unique(frame["item"].to_numpy(), return_inverse=True)
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(max(n_boot, 0)):
        counts = np.bincount(rng.integers(0, len(items), len(items)), minlength=len(items))
        fitted = fit_strengths(_wins_matrix(first, second, score, k, counts[at_item]))
        if fitted is not None:
            draws.append(fitted)
    ranks = _ranks(theta)
    n = np.bincount(first, minlength=k) + np.bincount(second, minlength=k)
    out = pd.DataFrame({"system": systems, "strength": theta, "rank": ranks, "n": n})
    q = [100 * alpha / 2, 100 * (1 - alpha / 2)]
    if len(draws) >= 2:
        draws_array = np.array(draws)
        out["ci_low"], out["ci_high"] = np.percentile(draws_array, q, axis=0)
        boot_ranks = np.array([_ranks(d) for d in draws_array])
        low, high = np.percentile(boot_ranks, q, axis=0)
        out["rank_low"], out["rank_high"] = np.floor(low).astype(int), np.ceil(high).astype(int)
    else:
        out["ci_low"] = out["ci_high"] = out["rank_low"] = out["rank_high"] = None
    out["n_boot_used"] = len(draws)
    return out[columns].sort_values(["rank", "system"]).reset_index(drop=True)


def _ranks(theta: np.ndarray) -> np.ndarray:
    """1 for the strongest; equal strengths share the best of their ranks."""
    return stats.rankdata(-np.round(theta, 9), method="min").astype(int)


def position_bias(frame: pd.DataFrame, *, alpha: float = ALPHA) -> dict:
    """How often the output shown first wins, ties left out, on the pairs that were shown
    both ways round (so the systems' quality balances out), with a Wilson interval and an
    exact two-sided binomial test against one half."""
    empty = {"n": 0, "first_wins": 0, "second_wins": 0, "ties": 0, "first_win_rate": None,
             "ci_low": None, "ci_high": None, "p_value": None, "pairs_both_ways": 0}
    if frame.empty:
        return empty
    shown = set(zip(frame["first"], frame["second"], strict=True))
    both = frame[[(b, a) in shown for a, b in zip(frame["first"], frame["second"],
                                                   strict=True)]]
    if both.empty:
        return empty
    first_wins = int((both["score"] == 1).sum())
    second_wins = int((both["score"] == 0).sum())
    decided = first_wins + second_wins
    out = {**empty, "n": len(both), "first_wins": first_wins, "second_wins": second_wins,
           "ties": int((both["score"] == 0.5).sum()),
           "pairs_both_ways": len({frozenset(p) for p in shown if (p[1], p[0]) in shown})}
    if decided:
        test = stats.binomtest(first_wins, decided, 0.5)
        ci = test.proportion_ci(confidence_level=1 - alpha, method="wilson")
        out.update(first_win_rate=first_wins / decided, ci_low=float(ci.low),
                   ci_high=float(ci.high), p_value=float(test.pvalue))
    return out


def preference_tables(frame: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = 0) -> dict:
    """Every preference table of one question: pairs, win rates, strengths, position bias."""
    return {"pairs": win_tie_loss(frame), "win_rates": win_rates(frame),
            "bradley_terry": bradley_terry(frame, n_boot=n_boot, seed=seed),
            "position_bias": position_bias(frame)}
