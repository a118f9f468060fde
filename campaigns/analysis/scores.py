"""Per-system scores: raw means with bootstrap CIs, WMT z-scores, ranking and rank tests.

Input frames hold numeric judgments in long form with columns item, system, worker, question,
part, value (floats). Text and nominal answers are left out by the caller.
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy import stats

N_BOOT = 1000
ALPHA = 0.05
LARGE_SAMPLE = 20_000
KEYS = ["question", "part"]


def bootstrap_mean_ci(
    values: np.ndarray, *, n_boot: int = N_BOOT, seed: int = 0
) -> tuple[float | None, float | None]:
    """Percentile 95% CI of the mean by resampling values with replacement."""
    values = np.asarray(values, dtype=float)
    if len(values) < 2 or n_boot <= 0:
        return None, None
    if len(values) > LARGE_SAMPLE:
        # The bootstrap would cost n_boot x n draws; at this size the normal CI agrees with it.
        half = 1.959964 * values.std(ddof=1) / np.sqrt(len(values))
        return float(values.mean() - half), float(values.mean() + half)
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), (n_boot, len(values)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def system_scores(frame: pd.DataFrame, *, n_boot: int = N_BOOT) -> pd.DataFrame:
    """Per (question, part, system): n, mean, sd (n-1), 95% bootstrap CI of the mean."""
    rows = []
    for (question, part, system), group in frame.groupby([*KEYS, "system"], sort=True):
        values = group["value"].to_numpy(dtype=float)
        low, high = bootstrap_mean_ci(values, n_boot=n_boot)
        rows.append({
            "question": question, "part": part, "system": system, "n": len(values),
            "mean": float(values.mean()),
            "sd": float(values.std(ddof=1)) if len(values) > 1 else None,
            "ci_low": low, "ci_high": high,
        })
    return pd.DataFrame(
        rows, columns=["question", "part", "system", "n", "mean", "sd", "ci_low", "ci_high"]
    )


def z_scores(frame: pd.DataFrame) -> pd.DataFrame:
    """Add column `z`: each worker's scores standardised by that worker's own mean and sd
    (per question and part; the WMT convention). A worker with one score or no spread gets 0."""
    groups = frame.groupby(["worker", *KEYS], sort=False)["value"]
    mean = groups.transform("mean")
    sd = groups.transform("std")  # ddof=1, as WMT's scripts
    z = (frame["value"] - mean) / sd
    return frame.assign(z=z.where(sd > 0, 0.0).fillna(0.0))


def _item_means(frame: pd.DataFrame) -> pd.DataFrame:
    """Average raw and z per item first, so items with more ratings do not weigh more (WMT)."""
    return frame.groupby([*KEYS, "system", "item"], sort=False, as_index=False).agg(
        value=("value", "mean"), z=("z", "mean")
    )


def system_ranking(frame: pd.DataFrame) -> pd.DataFrame:
    """Systems ranked by mean z (of item means) per (question, part); rank 1 is best."""
    items = _item_means(z_scores(frame))
    table = items.groupby([*KEYS, "system"], as_index=False).agg(
        n_items=("item", "nunique"), mean_raw=("value", "mean"), mean_z=("z", "mean")
    )
    table = table.sort_values([*KEYS, "mean_z"], ascending=[True, True, False])
    table["rank"] = table.groupby(KEYS).cumcount() + 1
    return table.reset_index(drop=True)


def pairwise_tests(frame: pd.DataFrame, *, alpha: float = ALPHA) -> pd.DataFrame:
    """Two-sided Mann-Whitney U between every pair of systems on item-level mean z-scores.

    `distinguishable` is p < alpha; `better` names the system with the higher mean z then.
    """
    items = _item_means(z_scores(frame))
    rows = []
    for (question, part), group in items.groupby(KEYS, sort=True):
        by_system = {s: g["z"].to_numpy() for s, g in group.groupby("system", sort=True)}
        for a, b in itertools.combinations(sorted(by_system), 2):
            za, zb = by_system[a], by_system[b]
            if len(za) < 1 or len(zb) < 1:
                continue
            u, p = stats.mannwhitneyu(za, zb, alternative="two-sided")
            significant = bool(p < alpha)
            better = (a if za.mean() > zb.mean() else b) if significant else None
            rows.append({
                "question": question, "part": part, "system_a": a, "system_b": b,
                "n_a": len(za), "n_b": len(zb), "u": float(u), "p": float(p),
                "distinguishable": significant, "better": better,
            })
    return pd.DataFrame(rows, columns=["question", "part", "system_a", "system_b", "n_a", "n_b",
                                       "u", "p", "distinguishable", "better"])
