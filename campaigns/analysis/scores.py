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


SCORE_COLUMNS = ["question", "part", "system", "n", "n_items", "mean", "sd", "ci_low", "ci_high",
                 "ci_method", "n_raters"]


def system_scores(frame: pd.DataFrame, *, n_boot: int = N_BOOT) -> pd.DataFrame:
    """Per (question, part, system): n ratings, items, raters, mean, sd (n-1) and a 95% CI of
    the mean that treats items and raters as samples (crossed.two_way_cluster_ci) when the
    system has at least crossed.MIN_RATERS raters, else resamples items with the raters held
    fixed (`item_cluster_ci`); the method used is in `ci_method`.

    The frame is grouped once: counts come from that grouping, and each group's values (in
    the frame's order) are one slice of the rows sorted by group, so mean and sd are numpy's
    on the same values in the same order as a loop over the groups would give."""
    grouped = frame.groupby([*KEYS, "system"], sort=True)
    counts = grouped.agg(n=("value", "size"), n_items=("item", "nunique"),
                         n_raters=("worker", "nunique"))
    group = grouped.ngroup().to_numpy()
    order = np.argsort(group, kind="stable")
    order = order[group[order] >= 0]  # rows with a missing key are in no group, as in groupby
    ends = np.cumsum(counts["n"].to_numpy())
    values = frame["value"].to_numpy(dtype=float)[order]
    items = frame["item"].to_numpy()[order] if n_boot > 0 else None
    workers = frame["worker"].to_numpy()[order] if n_boot > 0 else None
    rows = []
    for (question, part, system), end, count in zip(counts.index, ends, counts.itertuples(),
                                                    strict=True):
        rows_of = slice(end - count.n, end)
        group_values = values[rows_of]
        low, high, method = _system_ci(items[rows_of], workers[rows_of], group_values,
                                       n_boot) if n_boot > 0 else (None, None, None)
        rows.append({
            "question": question, "part": part, "system": system, "n": int(count.n),
            "n_items": int(count.n_items), "mean": float(group_values.mean()),
            "n_raters": int(count.n_raters),
            "sd": float(group_values.std(ddof=1)) if count.n > 1 else None,
            "ci_low": low, "ci_high": high, "ci_method": method,
        })
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)


def _system_ci(items: np.ndarray, workers: np.ndarray, values: np.ndarray,
               n_boot: int) -> tuple[float | None, float | None, str | None]:
    low, high, method = two_way_cluster_ci(items, workers, values)
    if method is None:  # too few raters to treat them as a sample: raters held fixed
        low, high, method = item_cluster_ci(items, values, n_boot=n_boot)
    return low, high, method


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
