"""Bradley-Terry with a position term: strengths that do not credit a system for where it sat.

Every pairwise answer records which system was shown first. With a first-position advantage
and an unbalanced order (an imported study, or a small one by chance), plain Bradley-Terry
credits the position to the system that sat first more often: in simulation an equal system
shown first 90% of the time came out first with rank range 1-1.

The model (the "home advantage" form; Agresti 2013, *Categorical Data Analysis*, §11.6.3):
P(first beats second) = 1 / (1 + exp(-(theta_first - theta_second + gamma))), gamma the
position effect on the log-odds scale. Ties count as half a win for each side (as the plain
fit's default). Fitted by Newton's method on the counts per ordered (first, second) cell, with
theta centred to mean 0; intervals and rank ranges from resampling items with replacement
(each resample refitted, all at once), resamples without a finite fit left out. `elo` is the
Arena display: 1000 + 400 / ln(10) * theta (Chiang et al. 2024, Chatbot Arena).

The order is `unbalanced` when some system sat first in a share of its appearances further
than ORDER_TOLERANCE from one half; then the position-adjusted strengths are the default
(`default` = "position_adjusted"), otherwise both are shown and the plain fit stays the
default.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import N_BOOT

ALPHA = 0.05
ORDER_TOLERANCE = 0.1
ITERATIONS = 50
DIVERGED = 30.0  # a |log-strength| this large: a system never beaten (or never winning)
RIDGE = 1e-9
ELO_SCALE = 400 / np.log(10)
COLUMNS = ["system", "strength", "elo", "ci_low", "ci_high", "rank", "rank_low", "rank_high",
           "first_share", "n_boot_used"]


def _design(k: int) -> np.ndarray:
    """Rows: ordered cells first * k + second; columns theta_1..theta_{k-1} (theta_0 = 0) and
    gamma."""
    first, second = np.divmod(np.arange(k * k), k)
    x = np.zeros((k * k, k))
    x[np.arange(k * k), first] += 1
    x[np.arange(k * k), second] -= 1
    x[:, 0] = 1.0  # column 0 becomes gamma: theta_0 is fixed at 0
    return x


def fit_position(n: np.ndarray, s: np.ndarray, k: int) -> np.ndarray:
    """Newton fits of (theta_1..theta_{k-1}, gamma) for each row of cell counts n[B, k*k] and
    first-side scores s[B, k*k]; returns params[B, k] (column 0 is gamma)."""
    n, s = np.atleast_2d(n), np.atleast_2d(s)
    x = _design(k)
    params = np.zeros((n.shape[0], k))
    for _ in range(ITERATIONS):
        prob = 1 / (1 + np.exp(-(params @ x.T)))
        gradient = (s - n * prob) @ x
        weight = n * prob * (1 - prob)
        hessian = np.einsum("bc,ci,cj->bij", weight, x, x) + RIDGE * np.eye(k)
        step = np.linalg.solve(hessian, gradient[..., None])[..., 0]
        params += step
        if np.nanmax(np.abs(step), initial=0) < 1e-10:
            break
    return params


def _strengths(params: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(centred theta[B, k], gamma[B]) from fitted params."""
    theta = np.concatenate([np.zeros((len(params), 1)), params[:, 1:]], axis=1)
    return theta - theta.mean(axis=1, keepdims=True), params[:, 0]


def _ranks(theta: np.ndarray) -> np.ndarray:
    return (-theta).argsort(axis=-1).argsort(axis=-1) + 1


def _cells(frame: pd.DataFrame):
    systems = np.array(sorted(set(frame["first"].astype(str)) | set(frame["second"].astype(str))))
    k = len(systems)
    first = np.searchsorted(systems, frame["first"].astype(str).to_numpy())
    second = np.searchsorted(systems, frame["second"].astype(str).to_numpy())
    item, _ = pd.factorize(frame["item"])
    return systems, k, first * k + second, item, frame["score"].to_numpy(dtype=float)


def bradley_terry_position(frame: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = 0,
                           alpha: float = ALPHA) -> dict:
    """The position-adjusted fit (see module): `table` (COLUMNS), `position_effect` (gamma,
    its interval, the first side's implied win probability between equals), `unbalanced` and
    `default` ("position_adjusted" or "unadjusted")."""
    empty = {"table": pd.DataFrame(columns=COLUMNS), "position_effect": None,
             "unbalanced": False, "default": "unadjusted"}
    if frame.empty:
        return empty
    systems, k, cell, item, score = _cells(frame)
    if k < 2:
        return empty
    n = np.bincount(cell, minlength=k * k).astype(float)
    s = np.bincount(cell, weights=score, minlength=k * k)
    theta, gamma = _strengths(fit_position(n, s, k))
    if np.abs(theta).max() > DIVERGED:
        return empty
    first = np.divmod(np.arange(k * k), k)
    shown_first = np.bincount(first[0], weights=n, minlength=k)
    shown = shown_first + np.bincount(first[1], weights=n, minlength=k)
    share = shown_first / np.where(shown > 0, shown, 1)
    draws, gammas = _bootstrap(item, cell, score, k, n_boot=n_boot, seed=seed)
    q = [100 * alpha / 2, 100 * (1 - alpha / 2)]
    table = pd.DataFrame({"system": systems, "strength": theta[0], "elo": 1000 + ELO_SCALE
                          * theta[0], "rank": _ranks(theta[0]), "first_share": share,
                          "n_boot_used": len(draws)})
    table["ci_low"] = table["ci_high"] = table["rank_low"] = table["rank_high"] = None
    effect = {"gamma": float(gamma[0]), "first_win_probability": float(1 / (1 + np.exp(
        -gamma[0]))), "ci_low": None, "ci_high": None}
    if len(draws) >= 2:
        table["ci_low"], table["ci_high"] = np.percentile(draws, q, axis=0)
        low, high = np.percentile(_ranks(draws), q, axis=0)
        table["rank_low"], table["rank_high"] = np.floor(low).astype(int), np.ceil(high).astype(int)
        effect["ci_low"], effect["ci_high"] = (float(v) for v in np.percentile(gammas, q))
    unbalanced = bool(np.any(np.abs(share[shown > 0] - 0.5) > ORDER_TOLERANCE))
    return {"table": table[COLUMNS].sort_values(["rank", "system"]).reset_index(drop=True),
            "position_effect": effect, "unbalanced": unbalanced,
            "default": "position_adjusted" if unbalanced else "unadjusted"}


def _bootstrap(item: np.ndarray, cell: np.ndarray, score: np.ndarray, k: int, *, n_boot: int,
               seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Centred strengths[r, k] and gammas[r] of item resamples with a finite fit."""
    if n_boot <= 0:
        return np.empty((0, k)), np.empty(0)
    items = int(item.max()) + 1
    counts = np.zeros((items, k * k))
    scores = np.zeros((items, k * k))
    np.add.at(counts, (item, cell), 1.0)
    np.add.at(scores, (item, cell), score)
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(items, np.full(items, 1 / items), size=n_boot).astype(float)
    theta, gamma = _strengths(fit_position(weights @ counts, weights @ scores, k))
    finite = np.isfinite(theta).all(axis=1) & (np.abs(theta).max(axis=1) <= DIVERGED)
    return theta[finite], gamma[finite]
