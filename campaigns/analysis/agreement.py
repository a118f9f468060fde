"""Inter-annotator agreement: Krippendorff's alpha at a level of measurement, with a bootstrap CI.

The point estimate comes from the `krippendorff` package, except past PACKAGE_CELLS (units x
values^2: the package holds three float arrays of that size at once, gigabytes for a million
units) where the package's sums run over distinct unit rows instead, each weighted by how many
units share it (identical units contribute identical coincidences; equal to the package to
rounding, tested). The bootstrap resamples
items (units) with replacement; to keep a thousand resamples cheap it works on per-unit
coincidence contributions (one matrix product for all resamples) and reproduces the package's
formula exactly, which tests/analysis/test_agreement.py checks resample by resample.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import krippendorff
import numpy as np
import pandas as pd

from . import N_BOOT

LEVELS = ("nominal", "ordinal", "interval", "ratio")


@dataclass(frozen=True)
class AlphaResult:
    alpha: float | None
    ci_low: float | None
    ci_high: float | None
    n_items: int  # units with at least two ratings (the ones alpha rests on)
    n_raters: int
    n_ratings: int  # pairable ratings

    def as_dict(self) -> dict:
        return asdict(self)


def unit_codes(units: np.ndarray) -> np.ndarray:
    """Codes 0..U-1 for units: integer ids in a dense range are used as they are (no hashing)."""
    if np.issubdtype(units.dtype, np.integer) and len(units):
        low, high = int(units.min()), int(units.max())
        if high - low < 4 * len(units):
            return (units - low).astype(np.int64)
    return pd.factorize(units)[0]


def value_counts(
    units: np.ndarray, values: np.ndarray, *, numeric: bool, codes: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-unit counts of each value: (counts[U, V], domain[V]); units with < 2 ratings dropped.

    Linear in the number of ratings: unit codes, the sorted domain, one bincount.
    """
    unit_index = unit_codes(units) if codes is None else codes
    domain = np.sort(pd.unique(values))
    value_index = np.searchsorted(domain, values)
    n_units, n_values = int(unit_index.max(initial=-1)) + 1, len(domain)
    counts = np.bincount(unit_index * n_values + value_index,
                         minlength=n_units * n_values).reshape(n_units, n_values)
    counts = counts[counts.sum(axis=1) >= 2]
    domain = np.asarray(domain, dtype=float if numeric else object)
    return counts, domain


def _rated(values: np.ndarray, numeric: bool) -> tuple[np.ndarray, np.ndarray]:
    """(mask of present values, those values as floats, or as strings for nominal)."""
    values = values.astype(float) if numeric and values.dtype != object else values
    keep = pd.notna(values)
    values = values[keep] if not keep.all() else values
    return keep, values.astype(float) if numeric else values.astype(str)


def rating_counts(units, values, *, level: str) -> tuple[np.ndarray, np.ndarray]:
    """value_counts of (unit, value) ratings read as krippendorff_alpha reads them."""
    units, values = np.asarray(units), np.asarray(values)
    keep, values = _rated(values, level != "nominal")
    return value_counts(units[keep], values, numeric=level != "nominal")


def alpha_from_counts(counts: np.ndarray, domain: np.ndarray, level: str) -> float | None:
    """Krippendorff's alpha from the package; None when it is undefined (no pairs, one value).
    Past PACKAGE_CELLS the same formula over distinct unit rows (see the module docstring)."""
    if counts.shape[0] == 0 or counts.sum() < 2 or (counts.sum(axis=0) > 0).sum() < 2:
        return None
    if level == "nominal":
        domain = np.arange(len(domain))  # the package wants numbers; codes keep nominal meaning
    if counts.shape[0] * counts.shape[1] ** 2 > PACKAGE_CELLS:
        # Units with fewer than two ratings pair with nothing (zero in the package too).
        flat, sizes = _unit_coincidences(counts[counts.sum(axis=1) >= 2])
        value = _alphas((sizes.astype(float) @ flat)[None, :], domain, level)[0]
    else:
        value = krippendorff.alpha(value_counts=counts, value_domain=domain,
                                   level_of_measurement=level)
    return None if not np.isfinite(value) else float(value)


PACKAGE_CELLS = 4_000_000


def _unit_coincidences(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(flat coincidences of each distinct unit row [G, V*V], how many units have it [G]).
    The distinct rows come sorted, so sums over them do not depend on the order the units
    were read in."""
    groups, sizes = np.unique(counts, axis=0, return_counts=True)
    n_values = groups.shape[1]
    m = groups.sum(axis=1)
    # Each unit's coincidences: (n_u n_u^T - diag(n_u)) / (m_u - 1).
    per_unit = (groups[:, :, None] * groups[:, None, :]).astype(float)
    per_unit[:, np.arange(n_values), np.arange(n_values)] -= groups
    per_unit /= (m - 1)[:, None, None]
    return per_unit.reshape(len(groups), -1), sizes


def _alphas(coincidences: np.ndarray, domain: np.ndarray, level: str) -> np.ndarray:
    """Alpha of each row of flat coincidence matrices [B, V*V] (NaN where undefined)."""
    n_values = len(domain)
    coincidences = coincidences.reshape(len(coincidences), n_values, n_values)
    n_v = coincidences.sum(axis=2)
    n = n_v.sum(axis=1)
    delta = _distances(domain, n_v, level)
    observed = (coincidences * delta).sum(axis=(1, 2))
    expected = (n_v[:, :, None] * n_v[:, None, :] * delta).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 - (n - 1) * observed / expected


def _distances(domain: np.ndarray, n_v: np.ndarray, level: str) -> np.ndarray:
    """delta(c, k) for every pair of values; n_v has shape (B, V) for ordinal (per resample)."""
    if level == "nominal":
        return 1.0 - np.eye(len(domain))
    d = domain.astype(float)
    if level == "interval":
        return (d[:, None] - d[None, :]) ** 2
    if level == "ratio":
        total = d[:, None] + d[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            out = ((d[:, None] - d[None, :]) / total) ** 2
        return np.nan_to_num(out)
    # ordinal: (sum of n_g for g between c and k) - (n_c + n_k) / 2, squared
    cum = np.cumsum(n_v, axis=-1)
    lo = np.minimum.outer(np.arange(len(d)), np.arange(len(d)))
    hi = np.maximum.outer(np.arange(len(d)), np.arange(len(d)))
    before = np.concatenate([np.zeros(n_v.shape[:-1] + (1,)), cum], axis=-1)
    between = before[..., hi + 1] - before[..., lo]
    return (between - (n_v[..., :, None] + n_v[..., None, :]) / 2) ** 2


def bootstrap_alphas(
    counts: np.ndarray, domain: np.ndarray, level: str, *, n_boot: int = N_BOOT, seed: int = 0
) -> np.ndarray:
    """Alpha for `n_boot` resamples of units (rows of counts), vectorised over resamples.

    Units with the same counts are interchangeable, so a resample is described by how many
    units of each distinct row it drew (`resample_weights`); every resample's coincidences
    are then one matrix product. The distinct rows come sorted, so the CI depends on the
    data only, not on the order the units were read in.
    """
    flat, sizes = _unit_coincidences(counts)
    if level != "ordinal":
        return _fixed_distance_alphas(flat, sizes, domain, level, n_boot=n_boot, seed=seed)
    coincidences = np.empty((n_boot, flat.shape[1]))
    for start, weights in resample_weights(sizes, n_boot=n_boot, seed=seed):
        coincidences[start:start + len(weights)] = weights @ flat
    alphas = _alphas(coincidences, domain, level)
    return alphas[np.isfinite(alphas)]


def _fixed_distance_alphas(flat: np.ndarray, sizes: np.ndarray, domain: np.ndarray, level: str,
                           *, n_boot: int, seed: int) -> np.ndarray:
    """bootstrap_alphas where delta does not depend on the margins (every level but ordinal):
    a resample's observed disagreement and its margins are sums of its units' own, so each is
    one product of the weights with a vector [G] or a matrix [G, V], never the resamples'
    V x V coincidences (a slider's 101 values make 10,201 cells per resample)."""
    n_values = len(domain)
    delta = _distances(domain, None, level)
    per_unit = flat.reshape(len(flat), n_values, n_values)
    unit_observed = (per_unit * delta).sum(axis=(1, 2))
    unit_margins = per_unit.sum(axis=2)
    alphas = np.empty(n_boot)
    for start, weights in resample_weights(sizes, n_boot=n_boot, seed=seed):
        observed = weights @ unit_observed
        n_v = weights @ unit_margins
        expected = ((n_v @ delta) * n_v).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            alphas[start:start + len(weights)] = 1.0 - (n_v.sum(axis=1) - 1) * observed / expected
    return alphas[np.isfinite(alphas)]


def resample_weights(sizes: np.ndarray, *, n_boot: int, seed: int = 0):
    """Yield (first resample, weights[b, g]): how many units of group g resample b drew.

    Each resample draws as many units as there are, uniformly with replacement. With few
    distinct groups (a 1-5 scale rated five times has a few hundred, however many items) the
    group counts are drawn directly from the multinomial distribution they follow; otherwise
    units are drawn one by one, in chunks that keep the weights matrix near 32 MB.
    """
    rng = np.random.default_rng(seed)
    n_units, n_groups = int(sizes.sum()), len(sizes)
    if 4 * n_groups <= n_units:
        yield 0, rng.multinomial(n_units, sizes / n_units, size=n_boot).astype(float)
        return
    group_of_unit = np.repeat(np.arange(n_groups), sizes)
    chunk = max(1, 4_000_000 // max(n_groups, 1))
    for start in range(0, n_boot, chunk):
        stop = min(n_boot, start + chunk)
        yield start, np.stack([
            np.bincount(group_of_unit[rng.integers(0, n_units, n_units)], minlength=n_groups)
            for _ in range(start, stop)
        ]).astype(float)


def krippendorff_alpha(
    units, raters, values, *, level: str, n_boot: int = N_BOOT, seed: int = 0
) -> AlphaResult:
    """Alpha over (unit, rater, value) triples, one rating per unit and rater, with a 95% CI."""
    if level not in LEVELS:
        raise ValueError(f"unknown level of measurement {level!r}")
    units, raters, values = (np.asarray(a) for a in (units, raters, values))
    numeric = level != "nominal"
    keep, values = _rated(values, numeric)
    if not keep.all():
        units, raters = units[keep], raters[keep]
    unit_index = unit_codes(units)
    counts, domain = value_counts(units, values, numeric=numeric, codes=unit_index)
    pairable = np.bincount(unit_index)[unit_index] >= 2
    n_raters = len(pd.unique(raters[pairable]))
    return alpha_result(counts, domain, level, n_raters=n_raters, n_boot=n_boot, seed=seed)


def alpha_result(
    counts: np.ndarray, domain: np.ndarray, level: str, *, n_raters: int,
    n_boot: int = N_BOOT, seed: int = 0,
) -> AlphaResult:
    """Alpha, its bootstrap CI and what it rests on, from per-unit value counts."""
    value = alpha_from_counts(counts, domain, level)
    low = high = None
    if value is not None and n_boot > 0:
        boots = bootstrap_alphas(counts, domain, level, n_boot=n_boot, seed=seed)
        if len(boots):
            low, high = (float(x) for x in np.percentile(boots, [2.5, 97.5]))
    return AlphaResult(
        alpha=value, ci_low=low, ci_high=high, n_items=int(counts.shape[0]),
        n_raters=n_raters, n_ratings=int(counts.sum()),
    )


def agreement_table(frame: pd.DataFrame, levels: dict, *, n_boot: int = N_BOOT) -> pd.DataFrame:
    """One row per (question, part): alpha, CI, items, raters, level.

    `frame` holds columns unit, worker, question, part, value (one rating per unit and worker;
    a repeated rating keeps the last); `levels` maps (question, part) to a level.
    """
    rows = []
    frame = frame.dropna(subset=["value"]).drop_duplicates(
        ["question", "part", "unit", "worker"], keep="last"
    )
    for (question, part), group in frame.groupby(["question", "part"], sort=False):
        level = levels.get((question, part))
        if level is None:
            continue
        result = krippendorff_alpha(
            group["unit"].to_numpy(), group["worker"].to_numpy(), group["value"].to_numpy(),
            level=level, n_boot=n_boot,
        )
        rows.append({"question": question, "part": part, "level": level, **result.as_dict()})
    columns = ["question", "part", "level", "alpha", "ci_low", "ci_high", "n_items", "n_raters",
               "n_ratings"]
    return pd.DataFrame(rows, columns=columns)


def subset_agreement(
    frame: pd.DataFrame, levels: dict, subsets: dict[str, pd.Series | None], *,
    n_boot: int = N_BOOT
) -> pd.DataFrame:
    """agreement_table pooled (subset None) and within each value of each subset field.

    `frame` as for agreement_table plus column `item`; `subsets` maps a field name (e.g.
    "system" or an item field such as a language pair) to item id -> value. A pooled alpha
    over subsets that differ describes none of them (a language pair that agrees well pooled
    with one that does not), so each subset gets its own row with `subset` = {field: value}.
    A field given as None is read from the frame's own column of that name (`system`, where a
    rating of one output of an item is that output's system's).
    """
    tables = [agreement_table(frame, levels, n_boot=n_boot).assign(subset=None)]
    for field, values in subsets.items():
        keys = (frame[field].to_numpy() if values is None
                else values.reindex(frame["item"]).to_numpy())
        for value in sorted({v for v in keys if v is not None and v == v}, key=str):
            table = agreement_table(frame[keys == value], levels, n_boot=n_boot)
            tables.append(table.assign(subset=[{field: value}] * len(table)))
    table = pd.concat([t for t in tables if len(t)] or tables[:1], ignore_index=True)
    return table.astype({"subset": object})
