"""Best-worst scaling: per system, best-minus-worst scores with item-bootstrap intervals.

Input frames hold one row per output shown per answer, with columns item, worker, system and
outcome (1 chosen best, -1 chosen worst, 0 neither).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import N_BOOT

ALPHA = 0.05
COLUMNS = ["item", "worker", "system", "outcome"]


def best_minus_worst(frame: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = 0,
                     alpha: float = ALPHA) -> pd.DataFrame:
    """Per system: times best, times worst, appearances, the score (best - worst) /
    appearances in [-1, 1] (Orme 2009; Kiritchenko and Mohammad 2017) and its 95% percentile
    interval from resampling items with replacement (all of an item's answers together)."""
    columns = ["system", "best", "worst", "appearances", "score", "ci_low", "ci_high", "rank"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    systems, at_system = np.unique(frame["system"].to_numpy(), return_inverse=True)
    items, at_item = np.unique(frame["item"].to_numpy(), return_inverse=True)
    outcome = frame["outcome"].to_numpy(dtype=float)
    shape = (len(items), len(systems))
    net = np.zeros(shape)
    shown = np.zeros(shape)
    np.add.at(net, (at_item, at_system), outcome)
    np.add.at(shown, (at_item, at_system), 1.0)
    best = np.bincount(at_system, weights=outcome == 1, minlength=len(systems))
    worst = np.bincount(at_system, weights=outcome == -1, minlength=len(systems))
    appearances = shown.sum(axis=0)
    out = pd.DataFrame({"system": systems, "best": best.astype(int), "worst": worst.astype(int),
                        "appearances": appearances.astype(int),
                        "score": net.sum(axis=0) / appearances})
    out["ci_low"] = out["ci_high"] = None
    if n_boot > 0 and len(items) >= 2:
        rng = np.random.default_rng(seed)
        weights = rng.multinomial(len(items), np.full(len(items), 1 / len(items)), size=n_boot)
        with np.errstate(invalid="ignore", divide="ignore"):
            scores = (weights @ net) / (weights @ shown)
        q = [100 * alpha / 2, 100 * (1 - alpha / 2)]
        low, high = np.nanpercentile(scores, q, axis=0)
        out["ci_low"], out["ci_high"] = low, high
    out["rank"] = out["score"].rank(ascending=False, method="min").astype(int)
    return out[columns].sort_values(["rank", "system"]).reset_index(drop=True)
