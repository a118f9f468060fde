"""Per-system scores: raw means with item-clustered CIs, WMT z-scores and the ranking.

Input frames hold numeric judgments in long form with columns item, system, worker, question,
part, value (floats). Text and nominal answers are left out by the caller. Comparisons
between systems are in comparisons.py.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .crossed import two_way_cluster_ci

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


MIN_BOOTSTRAP_ITEMS = 20  # below this an item bootstrap is too narrow: a t-interval instead
MAX_BOOTSTRAP_ITEMS = 5_000  # above this the normal interval agrees with the bootstrap


def item_cluster_ci(
    items: np.ndarray, values: np.ndarray, *, n_boot: int = N_BOOT, seed: int = 0
) -> tuple[float | None, float | None, str | None]:
    """95% CI of the mean of all ratings that respects ratings sharing an item.

    Items are the clusters: 20 to 5,000 items, a percentile bootstrap that resamples items and
    keeps each item's ratings (the mean of a resample is its ratings' mean); fewer items, a
    t-interval with (items - 1) degrees of freedom on the cluster-robust (ratio-estimator)
    standard error; more, the normal interval on that standard error. With one rating per
    item all three reduce to the usual intervals. Items are sorted first, so the interval does
    not depend on the order rows were read in.
    """
    if n_boot <= 0:  # no interval asked for: nothing to group
        return None, None, None
    sums = pd.Series(values, dtype=float).groupby(np.asarray(items), sort=True).agg(["sum", "size"])
    y, m = sums["sum"].to_numpy(), sums["size"].to_numpy(dtype=float)
    k = len(y)
    if k < 2 or n_boot <= 0:
        return None, None, None
    mean = y.sum() / m.sum()
    se = np.sqrt(k / (k - 1) * ((y - mean * m) ** 2).sum()) / m.sum()
    if k < MIN_BOOTSTRAP_ITEMS or k > MAX_BOOTSTRAP_ITEMS:
        method = "item_cluster_t" if k < MIN_BOOTSTRAP_ITEMS else "item_cluster_normal"
        quantile = stats.t.ppf(0.975, k - 1) if k < MIN_BOOTSTRAP_ITEMS else 1.959964
        return float(mean - quantile * se), float(mean + quantile * se), method
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, k, (n_boot, k))
    means = y[draws].sum(axis=1) / m[draws].sum(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high), "item_bootstrap"


def system_scores(frame: pd.DataFrame, *, n_boot: int = N_BOOT) -> pd.DataFrame:
    """Per (question, part, system): n ratings, items, raters, mean, sd (n-1) and a 95% CI of
    the mean that treats items and raters as samples (crossed.two_way_cluster_ci) when the
    system has at least crossed.MIN_RATERS raters, else resamples items with the raters held
    fixed (`item_cluster_ci`); the method used is in `ci_method`."""
    rows = []
    for (question, part, system), group in frame.groupby([*KEYS, "system"], sort=True):
        values = group["value"].to_numpy(dtype=float)
        low, high, method = (two_way_cluster_ci(group["item"].to_numpy(),
                                                group["worker"].to_numpy(), values)
                             if n_boot > 0 else (None, None, None))
        if method is None:  # too few raters to treat them as a sample: raters held fixed
            low, high, method = item_cluster_ci(group["item"].to_numpy(), values, n_boot=n_boot)
        rows.append({
            "question": question, "part": part, "system": system, "n": len(values),
            "n_items": int(group["item"].nunique()), "mean": float(values.mean()),
            "n_raters": int(group["worker"].nunique()),
            "sd": float(values.std(ddof=1)) if len(values) > 1 else None,
            "ci_low": low, "ci_high": high, "ci_method": method,
        })
    return pd.DataFrame(rows, columns=["question", "part", "system", "n", "n_items", "mean",
                                       "sd", "ci_low", "ci_high", "ci_method", "n_raters"])


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


def system_ranking(frame: pd.DataFrame, *, blocked: dict | None = None) -> pd.DataFrame:
    """Systems ranked by mean z (of item means) per (question, part); rank 1 is best.

    A part in `blocked` (raters nested in systems: every system's mean z is 0 by construction)
    keeps its means but gets no rank.
    """
    blocked = blocked or {}
    items = _item_means(z_scores(frame))
    table = items.groupby([*KEYS, "system"], as_index=False).agg(
        n_items=("item", "nunique"), mean_raw=("value", "mean"), mean_z=("z", "mean")
    )
    table = table.sort_values([*KEYS, "mean_z", "system"], ascending=[True, True, False, True])
    table["rank"] = (table.groupby(KEYS).cumcount() + 1).astype(object)
    if blocked:
        off = [(q, p) in blocked for q, p in zip(table["question"], table["part"], strict=True)]
        table.loc[off, "rank"] = None
    return table.reset_index(drop=True)
