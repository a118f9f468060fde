"""Bradley-Terry with style covariates: strengths that do not credit a system for being longer
or more heavily formatted ("style control", Chatbot Arena: Chiang et al. 2024 and the LMSYS
post "Does style matter?", Aug 2024).

People (and judges) tend to prefer the longer, better formatted answer whatever its content.
A system that writes long answers with lists and bold text then ranks above an equally good
terse one. Style control asks which system would win if both answered in the same style.

Features of each output shown (STYLE_FEATURES, counted as Arena counts them): `length` in
words (whitespace-separated; Arena counts tokens, which needs no tokenizer here), Markdown
`headers` (lines starting with 1-6 `#` and a space), `lists` (ordered `1. ` and unordered
`- `, `* `, `+ ` items) and `bold` spans (`**...**` and `__...__`). For each judgment the
covariate is the normalised difference (first - second) / (first + second + 1), divided by its
standard deviation over the judgments (Arena also centres it; without a position term that
does not matter, with one it would move the position term away from "equal style"). A feature
in which fewer than MIN_DIFFERING judgments differ is left out (its effect cannot be estimated
with any precision) and listed in `dropped`.

The model: logit P(first beats second) = theta_first - theta_second + gamma + beta . z, gamma
the position effect (analysis/preference_position.py: every answer records the order shown),
beta the style effects per standard deviation of z. Ties count as half a win for each side.
Fitted by maximum likelihood (Newton's method, no penalty: Arena adds a small ridge, which
only matters for systems with very few games), theta centred to mean 0. Intervals for theta,
ranks and beta resample items with replacement (every judgment of an item together), each
resample refitted from the full fit; resamples without a finite fit are left out. Elo scale:
1000 + 400 / ln(10) * theta, as Arena reports.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
from scipy.special import expit

from . import N_BOOT
from .preference_position import DIVERGED, ELO_SCALE

ALPHA = 0.05
STYLE_FEATURES = ("length", "headers", "lists", "bold")
PATTERNS = {
    "headers": (re.compile(r"^#{1,6}\s", re.MULTILINE),),
    "lists": (re.compile(r"^\s*\d+\.\s", re.MULTILINE), re.compile(r"^\s*[-*+]\s", re.MULTILINE)),
    "bold": (re.compile(r"\*\*[^*\n]+\*\*"), re.compile(r"__[^_\n]+__")),
}
ITERATIONS = 50
TOLERANCE = 1e-10
RIDGE = 1e-9  # keeps the Newton step defined when a resample leaves a system out
BOOT_CHUNK = 100  # resamples fitted at once
MIN_DIFFERING = 20  # judgments whose outputs differ in a feature before it is modelled
COLUMNS = ["system", "strength", "elo", "ci_low", "ci_high", "elo_low", "elo_high", "rank",
           "rank_low", "rank_high", "unadjusted_strength", "n_boot_used"]
EFFECT_COLUMNS = ["term", "coefficient", "ci_low", "ci_high", "mean_difference"]


def style_counts(text: str) -> tuple[int, ...]:
    """(words, Markdown headers, list items, bold spans) of one output's text."""
    text = text or ""
    return (len(text.split()),
            *(sum(len(p.findall(text)) for p in PATTERNS[name]) for name in STYLE_FEATURES[1:]))


def style_covariates(first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, list, list]:
    """(covariates [n, f], the features kept, the features dropped) from the counts
    [n, len(STYLE_FEATURES)] of the outputs shown first and second. A feature is kept when at
    least MIN_DIFFERING judgments differ in it (fewer nearly separate the data)."""
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    diff = (first - second) / (first + second + 1)
    sd = diff.std(axis=0)
    kept = (np.count_nonzero(diff, axis=0) >= MIN_DIFFERING) & (sd > 0)
    # Scaled, not centred: z = 0 stays "the same style", so the position term keeps its
    # meaning (the first side's advantage between equal systems in equal style).
    z = diff[:, kept] / sd[kept]
    names = np.array(STYLE_FEATURES)
    return z, names[kept].tolist(), names[~kept].tolist()


def _design(first: np.ndarray, second: np.ndarray, k: int, z: np.ndarray) -> np.ndarray:
    """Columns: gamma (the position intercept), theta_1..theta_{k-1} (theta_0 = 0), beta."""
    n = len(first)
    systems = np.zeros((n, k))
    systems[np.arange(n), first] += 1
    systems[np.arange(n), second] -= 1
    return np.column_stack([np.ones(n), systems[:, 1:], z])


def fit_style(x: np.ndarray, y: np.ndarray, weights: np.ndarray,
              start: np.ndarray | None = None) -> np.ndarray:
    """Newton fits of the logistic model for each row of judgment weights [B, n] (a resample's
    count of each judgment): params [B, d]. y holds each judgment's first-side score. Each
    row stops once its step is below TOLERANCE (rows without a finite fit run ITERATIONS)."""
    weights = np.atleast_2d(weights)
    d = x.shape[1]
    outer = (x[:, :, None] * x[:, None, :]).reshape(len(x), d * d)
    params = np.zeros((len(weights), d)) if start is None else np.tile(start, (len(weights), 1))
    active = np.arange(len(weights))
    for _ in range(ITERATIONS):
        w, q = weights[active], params[active]
        prob = expit(q @ x.T)
        gradient = (w * (y - prob)) @ x
        hessian = ((w * prob * (1 - prob)) @ outer).reshape(-1, d, d) + RIDGE * np.eye(d)
        step = np.linalg.solve(hessian, gradient[..., None])[..., 0]
        params[active] = q + step
        moving = np.isfinite(step).all(axis=1) & (np.abs(step).max(axis=1) >= TOLERANCE)
        active = active[moving]
        if not len(active):
            break
    return params


def _thetas(params: np.ndarray, k: int) -> np.ndarray:
    theta = np.concatenate([np.zeros((len(params), 1)), params[:, 1:k]], axis=1)
    return theta - theta.mean(axis=1, keepdims=True)


def _ranks(theta: np.ndarray) -> np.ndarray:
    return (-theta).argsort(axis=-1).argsort(axis=-1) + 1


def _codes(frame: pd.DataFrame):
    systems = np.array(sorted(set(frame["first"].astype(str)) | set(frame["second"].astype(str))))
    first = np.searchsorted(systems, frame["first"].astype(str).to_numpy())
    second = np.searchsorted(systems, frame["second"].astype(str).to_numpy())
    return systems, first, second


def bradley_terry_style(frame: pd.DataFrame, first_counts: np.ndarray,
                        second_counts: np.ndarray, *, n_boot: int = N_BOOT, seed: int = 0,
                        alpha: float = ALPHA) -> dict:
    """The style-adjusted fit (see module) of a preference frame (item, worker, first, second,
    score) whose judgments showed outputs with the style counts first_counts / second_counts
    [n, len(STYLE_FEATURES)] (style_counts): `table` (COLUMNS; `unadjusted_strength` from the
    same model without the style terms), `effects` (EFFECT_COLUMNS: each style term and the
    position term), `dropped` (features that never differ)."""
    empty = {"table": pd.DataFrame(columns=COLUMNS), "effects": pd.DataFrame(
        columns=EFFECT_COLUMNS), "dropped": list(STYLE_FEATURES), "n_boot_used": 0}
    if frame.empty:
        return empty
    systems, first, second = _codes(frame)
    k = len(systems)
    z, kept, dropped = style_covariates(first_counts, second_counts)
    if k < 2 or not kept:
        return {**empty, "dropped": dropped}
    x, y = _design(first, second, k, z), frame["score"].to_numpy(dtype=float)
    ones = np.ones(len(y))
    params = fit_style(x, y, ones)
    plain = _thetas(fit_style(x[:, :k], y, ones), k)[0]
    theta = _thetas(params, k)[0]
    if not np.isfinite(theta).all() or np.abs(theta).max() > DIVERGED:
        return {**empty, "dropped": dropped}
    draws = _bootstrap(frame["item"].to_numpy(), x, y, params[0], n_boot=n_boot, seed=seed)
    q = [100 * alpha / 2, 100 * (1 - alpha / 2)]
    table = pd.DataFrame({"system": systems, "strength": theta, "elo": 1000 + ELO_SCALE * theta,
                          "rank": _ranks(theta), "unadjusted_strength": plain,
                          "n_boot_used": len(draws)})
    terms = ["position", *kept]
    effects = pd.DataFrame({"term": terms, "coefficient": params[0, [0, *range(k, k + len(kept))]],
                            "mean_difference": [None, *(
                                (np.asarray(first_counts, float) - np.asarray(second_counts, float))
                                [:, STYLE_FEATURES.index(f)].mean() for f in kept)]})
    for column in ("ci_low", "ci_high", "elo_low", "elo_high", "rank_low", "rank_high"):
        table[column] = None
    effects["ci_low"] = effects["ci_high"] = None
    if len(draws) >= 2:
        thetas = _thetas(draws, k)
        table["ci_low"], table["ci_high"] = np.percentile(thetas, q, axis=0)
        table["elo_low"] = 1000 + ELO_SCALE * table["ci_low"].astype(float)
        table["elo_high"] = 1000 + ELO_SCALE * table["ci_high"].astype(float)
        low, high = np.percentile(_ranks(thetas), q, axis=0)
        table["rank_low"], table["rank_high"] = np.floor(low).astype(int), np.ceil(high).astype(int)
        coefficients = draws[:, [0, *range(k, k + len(kept))]]
        effects["ci_low"], effects["ci_high"] = np.percentile(coefficients, q, axis=0)
    return {"table": table[COLUMNS].sort_values(["rank", "system"]).reset_index(drop=True),
            "effects": effects[EFFECT_COLUMNS], "dropped": dropped, "n_boot_used": len(draws)}


def _bootstrap(item: np.ndarray, x: np.ndarray, y: np.ndarray, start: np.ndarray, *,
               n_boot: int, seed: int) -> np.ndarray:
    """Params [r, d] of the item resamples with a finite fit."""
    if n_boot <= 0:
        return np.empty((0, x.shape[1]))
    at_item, items = pd.factorize(item)
    rng = np.random.default_rng(seed)
    k_end = x.shape[1]
    out = []
    for done in range(0, n_boot, BOOT_CHUNK):
        counts = rng.multinomial(len(items), np.full(len(items), 1 / len(items)),
                                 size=min(BOOT_CHUNK, n_boot - done)).astype(float)
        params = fit_style(x, y, counts[:, at_item], start)
        finite = np.isfinite(params).all(axis=1) & (np.abs(params[:, :k_end]).max(axis=1)
                                                    <= DIVERGED)
        out.append(params[finite])
    return np.concatenate(out)
