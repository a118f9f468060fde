"""Paired preferences between systems: win/tie/loss, win rates, Bradley-Terry, position bias.

Input frames hold one row per judged pair in long form with columns item, worker, first,
second (the systems shown in the first and second position) and score (the first system's
result: 1 win, 0.5 tie, 0 loss). In the win rates a tie counts as half a win for each side;
the Bradley-Terry fit does the same by default ("split") or, on request, models ties with
Davidson's (1970) tie parameter ("davidson").
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
# A resample's fit starts from the full data's and stops at this change in log-strength:
# far finer than the intervals' three shown decimals.
BOOT_TOLERANCE = 1e-8
BOOT_CHUNK_CELLS = 4_000_000  # resample weights held at once (resamples x distinct item rows)
# How a tie enters the Bradley-Terry fit: split into half a win for each side (the default,
# consistent with the win rates), or as its own outcome under Davidson's (1970) model.
SPLIT = "split"
DAVIDSON = "davidson"
TIE_MODELS = (SPLIT, DAVIDSON)
DEFAULT_TIES = SPLIT


def _tables(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(outright wins[i, j] of i over j, symmetric ties, system names, judgments' cells)."""
    first, second, systems = _system_codes(frame)
    k = len(systems)
    cells = _outcome_cells(first, second, frame["score"].to_numpy(dtype=float), k)
    wins, ties = _split_tables(np.bincount(cells, minlength=2 * k * k)[None], k)
    return wins[0], ties[0], systems, cells


def win_tie_loss(frame: pd.DataFrame) -> pd.DataFrame:
    """Per unordered system pair (system_a < system_b): a's wins, ties, b's wins, judgments,
    and a's win rate with ties as half."""
    columns = ["system_a", "system_b", "wins_a", "ties", "wins_b", "n", "win_rate_a"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    wins, ties, systems, _ = _tables(frame)
    a, b = np.triu_indices(len(systems), 1)
    out = pd.DataFrame({"system_a": systems[a], "system_b": systems[b], "wins_a": wins[a, b],
                        "ties": ties[a, b], "wins_b": wins[b, a]})
    out["n"] = out["wins_a"] + out["ties"] + out["wins_b"]
    out = out[out["n"] > 0].reset_index(drop=True)
    out["win_rate_a"] = (out["wins_a"] + out["ties"] / 2) / out["n"]
    return out[columns]


def win_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """Per system: wins, ties, losses, judgments and win rate (ties as half) over every pair."""
    columns = ["system", "wins", "ties", "losses", "n", "win_rate"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    wins, ties, systems, _ = _tables(frame)
    out = pd.DataFrame({"system": systems, "wins": wins.sum(axis=1), "ties": ties.sum(axis=1),
                        "losses": wins.sum(axis=0)})
    out["n"] = out["wins"] + out["ties"] + out["losses"]
    out["win_rate"] = (out["wins"] + out["ties"] / 2) / out["n"]
    return out[columns]


def has_finite_fit(wins: np.ndarray) -> bool:
    """Whether the maximum-likelihood strengths are finite: every split of the systems into
    two groups has a (partial) win each way across it, i.e. the graph of wins is strongly
    connected (Zermelo 1929; Ford 1957)."""
    if len(wins) < 2:
        return False
    off_diagonal = ~np.eye(len(wins), dtype=bool)
    if (wins[off_diagonal] > 0).all():  # every pair met and split its games: connected
        return True
    n, _ = connected_components(csr_matrix(wins > 0), directed=True, connection="strong")
    return n == 1


def fit_strengths(wins: np.ndarray) -> np.ndarray | None:
    """Bradley-Terry log-strengths (centred on 0) maximising the likelihood of `wins`, by the
    minorisation-maximisation iteration of Hunter (2004); None when no finite fit exists."""
    if not has_finite_fit(wins):
        return None
    return np.log(_mm(wins[None], np.ones((1, len(wins))))[0])


def _mm(wins: np.ndarray, p: np.ndarray, tolerance: float = TOLERANCE) -> np.ndarray:
    """Hunter's (2004) MM iteration on a stack of win matrices (b, k, k) at once, from the
    strengths p (b, k); every matrix must have a finite fit. Strengths come back with a
    geometric mean of 1."""
    games = wins + wins.transpose(0, 2, 1)
    won = wins.sum(axis=2)
    p = p.copy()
    active = np.arange(len(p))  # the stack's matrices not yet converged
    for _ in range(MAX_ITERATIONS):
        q = p[active]
        new = won[active] / (games[active] / (q[:, :, None] + q[:, None, :])).sum(axis=2)
        new /= np.exp(np.log(new).mean(axis=1, keepdims=True))
        moving = np.max(np.abs(np.log(new) - np.log(q)), axis=1) >= tolerance
        p[active] = new
        active = active[moving]
        if not len(active):
            break
    return p


def fit_davidson(wins: np.ndarray, ties: np.ndarray) -> tuple[np.ndarray, float] | None:
    """Davidson's (1970) model: P(i beats j) = p_i / D, P(tie) = nu sqrt(p_i p_j) / D with
    D = p_i + p_j + nu sqrt(p_i p_j). `wins[i, j]` counts i's outright wins over j, `ties`
    is symmetric. Returns the centred log-strengths and nu, or None without a finite fit."""
    if not _davidson_finite(wins, ties):
        return None
    p, nu = _davidson(wins[None], ties[None], np.ones((1, len(wins))), _start_nu(wins, ties))
    return np.log(p[0]), float(nu[0])


def _davidson_finite(wins: np.ndarray, ties: np.ndarray) -> bool:
    """A tie is half a win each way for the strengths; nu needs a decisive judgment."""
    return wins.sum() > 0 and has_finite_fit(wins + ties / 2)


def _start_nu(wins: np.ndarray, ties: np.ndarray) -> np.ndarray:
    decided, tied = wins.sum(axis=(-2, -1)), ties.sum(axis=(-2, -1)) / 2
    return np.atleast_1d(tied / np.maximum(decided, 1e-300))


def _davidson(wins: np.ndarray, ties: np.ndarray, p: np.ndarray, nu: np.ndarray,
              tolerance: float = TOLERANCE) -> tuple[np.ndarray, np.ndarray]:
    """Davidson's (1970) fixed-point iteration on stacks (b, k, k): the likelihood equations
    p_i = (w_i + t_i / 2) / sum_j n_ij (1 + nu / 2 sqrt(p_j / p_i)) / D_ij and
    nu = T / sum_{i<j} n_ij sqrt(p_i p_j) / D_ij solved for p and nu in turn."""
    games = wins + wins.transpose(0, 2, 1) + ties
    score = wins.sum(axis=2) + ties.sum(axis=2) / 2
    tied = ties.sum(axis=(1, 2)) / 2
    p, nu = p.copy(), np.asarray(nu, dtype=float).copy()
    active = np.arange(len(p))  # the stack's tables not yet converged
    for _ in range(MAX_ITERATIONS):
        # With s = sqrt(p) and g = n / D: sum_j n_ij (1 + nu s_j / (2 s_i)) / D_ij is
        # g.sum(j) + nu / (2 s_i) (g s)_i, and sum_{i<j} n_ij s_i s_j / D_ij is s.(g s) / 2.
        q, v = p[active], nu[active]
        root = np.sqrt(q)
        g = games[active] / (q[:, :, None] + q[:, None, :]
                             + v[:, None, None] * root[:, :, None] * root[:, None, :])
        gs = np.einsum("bij,bj->bi", g, root)
        new = score[active] / (g.sum(axis=2) + v[:, None] / (2 * root) * gs)
        new /= np.exp(np.log(new).mean(axis=1, keepdims=True))
        new_nu = tied[active] / ((root * gs).sum(axis=1) / 2)
        moving = np.maximum(np.max(np.abs(np.log(new) - np.log(q)), axis=1),
                            np.abs(new_nu - nu[active])) >= tolerance
        p[active], nu[active] = new, new_nu
        active = active[moving]
        if not len(active):
            break
    return p, nu


def _outcome_cells(first: np.ndarray, second: np.ndarray, score: np.ndarray,
                   k: int) -> np.ndarray:
    """Each judgment's cell in a flat (2, k, k) table: [0, winner, loser] for a decided one,
    [1, i, j] with i < j for a tie."""
    tie = score == 0.5
    winner = np.where(score >= 0.5, first, second)
    loser = np.where(score >= 0.5, second, first)
    low, high = np.minimum(first, second), np.maximum(first, second)
    return np.where(tie, k * k + low * k + high, winner * k + loser)


def _split_tables(cells: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(wins, ties) stacks (b, k, k) from flat cell counts (b, 2 k k); ties made symmetric."""
    table = cells.reshape(-1, 2, k, k)
    return table[:, 0], table[:, 1] + table[:, 1].transpose(0, 2, 1)


def _fit_stack(wins: np.ndarray, ties: np.ndarray, ties_model: str,
               start: np.ndarray, start_nu: float) -> tuple[np.ndarray, np.ndarray]:
    """Fits a stack of resampled tables at once from the full data's strengths `start` (and
    tie parameter): Newton's method, a few steps from so close a start, with the fixed-point
    iterations for any table it leaves unconverged. Returns (log-strengths (b, k), which
    tables had a finite fit (b,))."""
    davidson = ties_model == DAVIDSON
    if davidson:
        ok = np.array([_davidson_finite(w, t) for w, t in zip(wins, ties, strict=True)])
    else:
        wins, ties = wins + ties / 2, np.zeros_like(wins)
        ok = np.array([has_finite_fit(w) for w in wins])
    theta = np.full(wins.shape[:2], np.nan)
    if not ok.any():
        return theta, ok
    wins, ties, n = wins[ok], ties[ok], int(ok.sum())
    fitted = np.tile(np.log(start), (n, 1))
    log_nu = np.full(n, np.log(start_nu) if davidson and start_nu > 0 else -np.inf)
    fitted, done = _newton(wins, ties, fitted, log_nu)
    if not done.all():
        left = ~done
        if davidson:
            p, _ = _davidson(wins[left], ties[left], np.tile(start, (left.sum(), 1)),
                             np.full(left.sum(), start_nu), BOOT_TOLERANCE)
        else:
            p = _mm(wins[left], np.tile(start, (left.sum(), 1)), BOOT_TOLERANCE)
        fitted[left] = np.log(p)
    theta[ok] = fitted
    return theta, ok


NEWTON_STEPS = 25


def _newton(wins: np.ndarray, ties: np.ndarray, theta: np.ndarray,
            log_nu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Newton's method for the log-strengths theta (b, k) and log nu (b,) of Davidson's model
    (Bradley-Terry's when log nu is -inf and there are no ties). The model is an exponential
    family in (theta, log nu), so the information matrix is the per-pair covariance of the
    outcome's statistics (i wins: e_i; j wins: e_j; a tie: (e_i + e_j) / 2 + e_nu), summed
    over the games; the likelihood is concave. Returns the centred fits and which converged
    to BOOT_TOLERANCE (the others are left for the fixed-point iterations)."""
    b, k = theta.shape
    games = wins + wins.transpose(0, 2, 1) + ties
    score = wins.sum(axis=2) + ties.sum(axis=2) / 2
    tied = ties.sum(axis=(1, 2)) / 2
    fit_nu = np.isfinite(log_nu)
    centre = np.zeros((k + 1, k + 1))
    centre[:k, :k] = 1.0  # theta moves together without changing the likelihood
    theta, log_nu = theta.copy(), log_nu.copy()
    done = np.zeros(b, dtype=bool)
    for _ in range(NEWTON_STEPS):
        e = np.exp(theta)
        tie = np.exp(np.where(fit_nu, log_nu, -np.inf)[:, None, None]
                     + (theta[:, :, None] + theta[:, None, :]) / 2)
        d = e[:, :, None] + e[:, None, :] + tie
        a, c = e[:, :, None] / d, tie / d
        m = a + c / 2  # expected share of pair (i, j)'s game for i
        info = np.zeros((b, k + 1, k + 1))
        info[:, :k, :k] = games * (c / 4 - m * m.transpose(0, 2, 1))
        diagonal = (games * (a + c / 4 - m * m)).sum(axis=2)
        info[:, np.arange(k), np.arange(k)] = diagonal
        info[:, :k, k] = info[:, k, :k] = (games * (c / 2 - m * c)).sum(axis=2)
        info[:, k, k] = np.where(fit_nu, (games * (c - c * c)).sum(axis=(1, 2)) / 2, 1.0)
        gradient = np.concatenate([score - (games * m).sum(axis=2), np.where(
            fit_nu, tied - (games * c).sum(axis=(1, 2)) / 2, 0.0)[:, None]], axis=1)
        with np.errstate(all="ignore"):
            step = np.linalg.solve(info + centre, gradient[:, :, None])[:, :, 0]
        if not np.isfinite(step).all():
            break
        theta += step[:, :k]
        log_nu = np.where(fit_nu, log_nu + step[:, k], log_nu)
        done = np.max(np.abs(step), axis=1) < BOOT_TOLERANCE
        if done.all():
            break
    return theta - theta.mean(axis=1, keepdims=True), done & np.isfinite(theta).all(axis=1)


def _item_rows(at_item: np.ndarray, cells: np.ndarray, size: int):
    """The items' cell counts grouped into distinct rows: (rows as a sparse matrix (d, size),
    how many items have each row). Items with the same judgments count alike in any resample,
    so resampling items is resampling distinct rows by their frequencies."""
    order = np.argsort(at_item, kind="stable")
    item, cell = at_item[order], cells[order]
    starts = np.flatnonzero(np.r_[True, item[1:] != item[:-1]])
    # An exact order-free fingerprint of each item's multiset of cells: sums of random 64-bit
    # keys with wrap-around (two of them; a collision is about 2**-128 per pair of items).
    keys = np.random.default_rng(0).integers(0, 2**63, (2, size), dtype=np.uint64)
    prints = np.stack([np.add.reduceat(keys[i][cell], starts) for i in (0, 1)], axis=1)
    _, first_item, freq = np.unique(prints, axis=0, return_index=True, return_counts=True)
    per_item = csr_matrix((np.ones(len(cell)), (np.repeat(np.arange(len(starts)),
                                                          np.diff(np.r_[starts, len(cell)])),
                                                cell)), shape=(len(starts), size))
    return per_item[first_item], freq


def bradley_terry(frame: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = 0,
                  alpha: float = ALPHA, ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """Per system: the Bradley-Terry log-strength (centred: mean 0), its item-bootstrap
    percentile interval, the rank (1 = strongest) and the bootstrap's rank interval.

    `ties` is "split" (a tie is half a win for each side) or "davidson" (Davidson's 1970 tie
    parameter; its estimate is in `table.attrs["tie_parameter"]`). Items are resampled with
    replacement, keeping every judgment of an item (judgments of one item share its input).
    Resamples without a finite fit (a system never beaten, or never winning, in the resample)
    are left out; `n_boot_used` says how many remained.
    """
    if ties not in TIE_MODELS:
        raise ValueError(f"ties must be one of {', '.join(TIE_MODELS)}, not {ties!r}")
    columns = ["system", "strength", "ci_low", "ci_high", "rank", "rank_low", "rank_high",
               "n", "n_boot_used"]
    empty = pd.DataFrame(columns=columns)
    empty.attrs["tie_parameter"] = None
    if frame.empty:
        return empty
    wins, tied, systems, cells = _tables(frame)
    wins, tied, k = wins.astype(float), tied.astype(float), len(systems)
    nu = None
    if ties == DAVIDSON:
        fitted = fit_davidson(wins, tied)
        theta, nu = fitted if fitted is not None else (None, None)
    else:
        theta = fit_strengths(wins + tied / 2)
    if theta is None:
        return empty
    draws = _bootstrap(frame["item"].to_numpy(), cells, k, n_boot=n_boot, seed=seed,
                       ties=ties, start=np.exp(theta), start_nu=nu or 0.0)
    n = (wins + wins.T + tied).sum(axis=1).astype(int)
    out = pd.DataFrame({"system": systems, "strength": theta, "rank": _ranks(theta), "n": n})
    q = [100 * alpha / 2, 100 * (1 - alpha / 2)]
    if len(draws) >= 2:
        out["ci_low"], out["ci_high"] = np.percentile(draws, q, axis=0)
        boot_ranks = _ranks(draws)
        low, high = np.percentile(boot_ranks, q, axis=0)
        out["rank_low"], out["rank_high"] = np.floor(low).astype(int), np.ceil(high).astype(int)
    else:
        out["ci_low"] = out["ci_high"] = out["rank_low"] = out["rank_high"] = None
    out["n_boot_used"] = len(draws)
    out = out[columns].sort_values(["rank", "system"]).reset_index(drop=True)
    out.attrs["tie_parameter"] = nu
    return out


def _bootstrap(item: np.ndarray, cells: np.ndarray, k: int, *, n_boot: int, seed: int,
               ties: str, start: np.ndarray, start_nu: float) -> np.ndarray:
    """Log-strengths of the item-bootstrap resamples that have a finite fit (r, k)."""
    if n_boot <= 0:
        return np.empty((0, k))
    at_item, _ = pd.factorize(item)
    rows, freq = _item_rows(at_item, cells, 2 * k * k)
    rng = np.random.default_rng(seed)
    chunk = max(1, BOOT_CHUNK_CELLS // len(freq))
    draws = []
    for done in range(0, n_boot, chunk):
        weights = rng.multinomial(freq.sum(), freq / freq.sum(), size=min(chunk, n_boot - done))
        wins, tied = _split_tables(np.asarray((rows.T @ weights.T).T, dtype=float), k)
        theta, ok = _fit_stack(wins, tied, ties, start, start_nu)
        draws.append(theta[ok])
    return np.concatenate(draws)


def _ranks(theta: np.ndarray) -> np.ndarray:
    """1 for the strongest; equal strengths share the best of their ranks (along the last
    axis, so a stack of resamples at once)."""
    return stats.rankdata(-np.round(theta, 9), method="min", axis=-1).astype(int)


def _system_codes(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, second) as codes into the sorted system names, and those names."""
    first, shown_first = pd.factorize(frame["first"])
    second, shown_second = pd.factorize(frame["second"])
    systems = np.union1d(np.asarray(shown_first), np.asarray(shown_second)).astype(object)
    return (np.searchsorted(systems, shown_first)[first],
            np.searchsorted(systems, shown_second)[second], systems)


def position_bias(frame: pd.DataFrame, *, alpha: float = ALPHA) -> dict:
    """How often the output shown first wins, ties left out, on the pairs that were shown
    both ways round (so the systems' quality balances out), with a Wilson interval and an
    exact two-sided binomial test against one half."""
    empty = {"n": 0, "first_wins": 0, "second_wins": 0, "ties": 0, "first_win_rate": None,
             "ci_low": None, "ci_high": None, "p_value": None, "pairs_both_ways": 0}
    if frame.empty:
        return empty
    first, second, systems = _system_codes(frame)
    k = len(systems)
    shown = np.unique(first * k + second)
    both_ways = np.isin(second * k + first, shown)
    both = frame[both_ways]
    if both.empty:
        return empty
    first_wins = int((both["score"] == 1).sum())
    second_wins = int((both["score"] == 0).sum())
    decided = first_wins + second_wins
    out = {**empty, "n": len(both), "first_wins": first_wins, "second_wins": second_wins,
           "ties": int((both["score"] == 0.5).sum()),
           "pairs_both_ways": _pairs_both_ways(shown, k)}
    if decided:
        test = stats.binomtest(first_wins, decided, 0.5)
        ci = test.proportion_ci(confidence_level=1 - alpha, method="wilson")
        out.update(first_win_rate=first_wins / decided, ci_low=float(ci.low),
                   ci_high=float(ci.high), p_value=float(test.pvalue))
    return out


def _pairs_both_ways(shown: np.ndarray, k: int) -> int:
    """How many system pairs the codes first * k + second of `shown` hold in both orders (a
    system against itself counts once)."""
    mirrored = np.isin(shown, (shown % k) * k + shown // k)
    same = shown % k == shown // k
    return int((mirrored & ~same).sum() // 2 + (mirrored & same).sum())


def preference_tables(frame: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = 0,
                      ties: str = DEFAULT_TIES) -> dict:
    """Every preference table of one question: pairs, win rates, strengths (with ties as
    `ties` says, and Davidson's tie parameter when fitted), position bias."""
    if not frame.empty:  # system names coded once for the four tables (factorised cheaply)
        names = pd.CategoricalDtype(sorted(set(frame["first"].unique())
                                           | set(frame["second"].unique())))
        frame = frame.astype({"first": names, "second": names})
    strengths = bradley_terry(frame, n_boot=n_boot, seed=seed, ties=ties)
    return {"pairs": win_tie_loss(frame), "win_rates": win_rates(frame),
            "bradley_terry": strengths, "ties": ties,
            "tie_parameter": strengths.attrs.get("tie_parameter"),
            "position_bias": position_bias(frame)}
