"""System-level figures of a rater against a reference: intervals from resampling items
within systems, and the split-half ceiling of one human's system means.

Inputs are aligned arrays over paired items: the item's system, the reference (human) value
and the rater's (judge's) value. Pure functions.
"""
from __future__ import annotations

import numpy as np
from scipy import stats

MAX_RESAMPLED_VALUES = 5_000_000  # draws x items held at once; fewer draws above it
MIN_SYSTEMS = 3  # a correlation over two systems is +-1 whatever the data
MIN_ITEMS_PER_HALF = 2  # the split-half ceiling needs two items in each half of each system
SPLITS = 200  # random splits averaged for the split-half correlation


def system_means_resampled(systems: np.ndarray, values: list[np.ndarray], *, n_boot: int,
                           seed: int) -> list[np.ndarray]:
    """Per resample and system (sorted by name), the mean of each array in `values` over the
    system's items drawn with replacement, the same draws for every array (the pairs stay
    paired): [n_boot, n_systems] each. Systems are drawn in sorted order, each with
    rng.integers(0, n_s, (n_boot, n_s))."""
    rng = np.random.default_rng(seed)
    names = np.unique(systems)
    out = [np.empty((n_boot, len(names))) for _ in values]
    for s, name in enumerate(names):
        rows = np.flatnonzero(systems == name)
        draws = rows[rng.integers(0, len(rows), (n_boot, len(rows)))]
        for array, resampled in zip(values, out, strict=True):
            resampled[:, s] = array[draws].mean(axis=1)
    return out


def _rank_rows(x: np.ndarray) -> np.ndarray:
    return stats.rankdata(x, axis=1)


def pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson's r of each row pair (NaN where a row does not vary)."""
    x = x - x.mean(axis=1, keepdims=True)
    y = y - y.mean(axis=1, keepdims=True)
    denominator = np.sqrt((x * x).sum(axis=1) * (y * y).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (x * y).sum(axis=1) / np.where(
            denominator > 0, denominator, 1), np.nan)


def _kendall_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b per row (systems are few: all pairs at once)."""
    i, j = np.triu_indices(x.shape[1], 1)
    dx, dy = np.sign(x[:, i] - x[:, j]), np.sign(y[:, i] - y[:, j])
    untied_x, untied_y = (dx != 0).sum(axis=1), (dy != 0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((untied_x > 0) & (untied_y > 0), (dx * dy).sum(axis=1) / np.sqrt(
            untied_x.astype(float) * untied_y), np.nan)


def percentile_interval(values: np.ndarray) -> tuple[float | None, float | None]:
    """The 95% percentile interval of resampled figures, leaving out the undefined ones;
    none from fewer than two."""
    values = values[np.isfinite(values)]
    if len(values) < 2:
        return None, None
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


def system_correlation_intervals(systems: np.ndarray, human: np.ndarray, judge: np.ndarray,
                                 *, n_boot: int, seed: int = 0) -> dict:
    """95% percentile intervals of the system-level Pearson, Spearman and Kendall
    correlations, resampling items within each system (the systems are the ones compared;
    the items are the sample): `system_{pearson,spearman,kendall}_boot_ci_{low,high}`."""
    n_boot = max(min(n_boot, MAX_RESAMPLED_VALUES // max(len(systems), 1)), 0)
    if n_boot < 2 or len(np.unique(systems)) < MIN_SYSTEMS:
        return {}
    h, j = system_means_resampled(systems, [human, judge], n_boot=n_boot, seed=seed)
    figures = {"pearson": pearson_rows(h, j),
               "spearman": pearson_rows(_rank_rows(h), _rank_rows(j)),
               "kendall": _kendall_rows(h, j)}
    out = {}
    for name, values in figures.items():
        low, high = percentile_interval(values)
        out[f"system_{name}_boot_ci_low"], out[f"system_{name}_boot_ci_high"] = low, high
    return out


def split_half_ceiling(systems: np.ndarray, values: np.ndarray, *, splits: int = SPLITS,
                       seed: int = 0) -> dict | None:
    """The split-half reliability of one rater's system means, and the ceiling it puts on a
    system-level Pearson correlation with them (None below MIN_SYSTEMS systems with
    2 * MIN_ITEMS_PER_HALF items each).

    Per random split, each system's items are shuffled and cut in two halves (the odd item to
    the first); Pearson's r between the halves' system means across systems; r averaged over
    `splits` splits. Spearman-Brown (Spearman 1910; Brown 1910) steps it up to the full set of
    items: reliability = 2r / (1 + r). A judge whose system means were the true ones would
    correlate with the human's at sqrt(reliability) on average: the ceiling (0 when r <= 0).
    `split_low`/`split_high` are the 2.5th/97.5th percentiles of r over the splits: how much
    the figure depends on the split, not a sampling interval.
    """
    names, codes = np.unique(systems, return_inverse=True)
    sizes = np.bincount(codes, minlength=len(names))
    keep = sizes >= 2 * MIN_ITEMS_PER_HALF
    if keep.sum() < MIN_SYSTEMS:
        return None
    rng = np.random.default_rng(seed)
    # Sorted first, so that the splits depend on the values and not on the order the rows
    # were read in (the database gives no order): the same data, the same figure.
    groups = [np.sort(values[codes == s]) for s in np.flatnonzero(keep)]
    halves = np.empty((splits, 2, len(groups)))
    for g, group in enumerate(groups):
        cut = (len(group) + 1) // 2
        step = max(1, MAX_RESAMPLED_VALUES // len(group))  # splits held at once
        for start in range(0, splits, step):
            size = min(step, splits - start)
            order = rng.permuted(np.tile(np.arange(len(group)), (size, 1)), axis=1)
            halves[start:start + size, 0, g] = group[order[:, :cut]].mean(axis=1)
            halves[start:start + size, 1, g] = group[order[:, cut:]].mean(axis=1)
    r = pearson_rows(halves[:, 0], halves[:, 1])
    if not np.isfinite(r).any():
        return None
    mean_r = float(np.nanmean(r))
    reliability = 2 * mean_r / (1 + mean_r) if mean_r > -1 else -np.inf
    low, high = np.percentile(r[np.isfinite(r)], [2.5, 97.5])
    return {"systems": int(keep.sum()), "split_half_r": mean_r,
            "spearman_brown": float(reliability),
            "ceiling_pearson": float(np.sqrt(reliability)) if reliability > 0 else 0.0,
            "split_low": float(low), "split_high": float(high)}
