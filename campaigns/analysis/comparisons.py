"""Cross-system conclusions that hold: design checks, paired/unpaired tests, corrections, clusters.

Input frames hold numeric judgments of one or more question parts in long form with columns
question, part, system, item, worker, value and optionally `segment` (the source an item was
generated from: items of different systems with the same segment answer the same input, which
makes a paired comparison possible). Every function is pure.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from . import N_BOOT
from .connectivity import describe, rater_connectivity

ALPHA = 0.05
CORRECTIONS = ("holm", "bh")
KEYS = ["question", "part"]
MIN_ITEMS_PER_SYSTEM = 10
MIN_RATERS_PER_ITEM = 2
UNBALANCED_RATIO = 2.0
# Two means this close (relative to their size) are the same number written twice: rounding
# noise, as z-scores that are zero by construction, never a winner.
EQUAL_TOLERANCE = 1e-9
# Effect intervals resample at most this many values per comparison at once (memory bound).
CHUNK_CELLS = 2_000_000

NESTED = "raters_nested_in_systems"
WEAKLY_CONNECTED = "raters_weakly_connect_systems"
BLOCKING = (NESTED, WEAKLY_CONNECTED)
FEW_ITEMS = "few_items_per_system"
FEW_RATERS = "few_raters_per_item"
UNBALANCED = "unbalanced_design"

COLUMNS = [
    "question", "part", "system_a", "system_b", "n_a", "n_b", "basis", "test", "paired",
    "statistic", "p", "p_adjusted", "correction", "effect_measure", "effect", "effect_ci_low",
    "effect_ci_high", "mean_a", "mean_b", "mean_difference", "mean_difference_ci_low",
    "mean_difference_ci_high", "distinguishable", "better", "blocked_by",
]


@dataclass(frozen=True)
class DesignWarning:
    code: str
    message: str
    question: str
    part: str = ""

    def as_dict(self) -> dict:
        return {"code": self.code, "message": self.message, "question": self.question,
                "part": self.part}


def _label(question: str, part: str) -> str:
    return f"{question}.{part}" if part else question


def design_checks(frame: pd.DataFrame) -> list[DesignWarning]:
    """What the design of each (question, part) cannot support, before any cross-system claim.

    - raters nested in systems: two or more systems and no rater rated more than one of them;
      every rater's z-scores average 0, so each system's mean z is 0 by construction and any
      difference between systems is confounded with the raters' leniency;
    - raters weakly connect systems: some raters rated several systems, but too few to
      compare them (connectivity.rater_connectivity below its stated thresholds); the same
      confound holds for the ratings of raters who saw one system;
    - few items per system: fewer than MIN_ITEMS_PER_SYSTEM items for some system;
    - few raters per item: the median item has fewer than MIN_RATERS_PER_ITEM ratings
      (agreement rests on few items, and one rater's leniency moves an item's mean);
    - unbalanced: the largest system has more than UNBALANCED_RATIO times the items of the
      smallest one.
    """
    out: list[DesignWarning] = []
    for (question, part), group in frame.groupby(KEYS, sort=True):
        label = _label(question, part)
        items = group.groupby("system")["item"].nunique()
        if len(items) >= 2:
            figures = rater_connectivity(group)
            if figures["crossed_raters"] == 0:
                out.append(DesignWarning(NESTED, (
                    f"{label}: every rater rated only one system, so raters are nested in "
                    "systems: each system's mean z-score is 0 by construction and raw "
                    "differences mix systems with their raters' leniency. No z-based ranking "
                    "and no winner is reported."), question, part))
            elif not figures["adequate"]:
                out.append(DesignWarning(WEAKLY_CONNECTED, (
                    f"{describe(label, figures)} Per-rater z-scores cannot compare the "
                    "systems: no z-based ranking and no winner is reported; the raw means "
                    "shown mix systems with their raters' leniency."), question, part))
            if items.max() > UNBALANCED_RATIO * items.min():
                out.append(DesignWarning(UNBALANCED, (
                    f"{label}: systems have between {items.min()} and {items.max()} items; "
                    "comparisons of the smaller systems have little power."), question, part))
        few = items[items < MIN_ITEMS_PER_SYSTEM]
        if len(few):
            names = ", ".join(f"{s or '(no system)'} ({n})" for s, n in few.items())
            out.append(DesignWarning(FEW_ITEMS, (
                f"{label}: fewer than {MIN_ITEMS_PER_SYSTEM} items for {names}: intervals "
                "use the t distribution over item means and tests can rarely reach "
                "significance."), question, part))
        raters = group.groupby("item")["worker"].nunique()
        if len(raters) and raters.median() < MIN_RATERS_PER_ITEM:
            out.append(DesignWarning(FEW_RATERS, (
                f"{label}: the median item has {raters.median():g} rater(s): agreement cannot "
                "be estimated from most items and an item's mean rests on one rater."),
                question, part))
    return out


def blocked_parts(warnings: list[DesignWarning]) -> dict[tuple[str, str], str]:
    """(question, part) -> the warning code that switches off rankings and winners."""
    return {(w.question, w.part): w.code for w in warnings if w.code in BLOCKING}


def adjust_pvalues(p: np.ndarray, method: str = "holm") -> np.ndarray:
    """Holm's step-down (family-wise error) or Benjamini-Hochberg (false discovery rate)."""
    if method not in CORRECTIONS:
        raise ValueError(f"unknown correction {method!r}; use one of {', '.join(CORRECTIONS)}")
    p = np.asarray(p, dtype=float)
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ranked))
    else:
        adjusted = np.minimum.accumulate((m * ranked / np.arange(1, m + 1))[::-1])[::-1]
        adjusted = np.minimum(1.0, adjusted)
    out = np.empty(m)
    out[order] = adjusted
    return out


def cliffs_delta(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """P(a > b) - P(a < b) for each row of a[B, n_a] and b[B, n_b] (ranks of the pooled row).

    Equal to the rank-biserial correlation 2U/(n_a n_b) - 1 of the Mann-Whitney U of a.
    """
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    n_a, n_b = a.shape[1], b.shape[1]
    ranks = stats.rankdata(np.concatenate([a, b], axis=1), axis=1)
    u = ranks[:, :n_a].sum(axis=1) - n_a * (n_a + 1) / 2
    return 2 * u / (n_a * n_b) - 1


def rank_biserial_paired(d: np.ndarray) -> np.ndarray:
    """Matched-pairs rank-biserial correlation of differences d[B, n]: (R+ - R-) / (R+ + R-)
    over the ranks of |d| without zero differences (Kerby 2014); 0 when every d is 0."""
    d = np.atleast_2d(d)
    ranks = stats.rankdata(np.abs(d), axis=1)
    ranks = np.where(d == 0, 0.0, ranks - (d == 0).sum(axis=1, keepdims=True))
    positive = (ranks * (d > 0)).sum(axis=1)
    total = ranks.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, 2 * positive / np.where(total > 0, total, 1) - 1, 0.0)


# scipy's wilcoxon (method "auto") enumerates every sign flip of up to this many differences
# when some tie or are zero, through its generic permutation test; wilcoxon_signed_rank does
# the same enumeration as one matrix product.
EXACT_SIGN_FLIPS = 13


def wilcoxon_signed_rank(d: np.ndarray) -> tuple[float, float]:
    """Two-sided Wilcoxon signed-rank test of differences d (zeros dropped, Wilcoxon's rule):
    (min(R+, R-), p), the statistic and p-value of scipy's `wilcoxon(d)` with its defaults.

    With ties or zeros among at most EXACT_SIGN_FLIPS differences, scipy's p is the exact
    permutation p over all 2^n sign flips of d; here the same distribution comes from one
    matrix product (the ranks of |d| do not change when signs flip), compared to the observed
    R+ with scipy's relative tolerance. Every other case is scipy's own: the exact Wilcoxon
    distribution without ties or zeros up to 50 differences, the normal approximation (with
    tie and continuity corrections) beyond.
    """
    d = np.asarray(d, dtype=float)
    nonzero = d[d != 0]
    magnitudes = np.abs(nonzero)
    tied = len(np.unique(magnitudes)) < len(magnitudes) or len(nonzero) < len(d)
    if not tied or len(d) > EXACT_SIGN_FLIPS or not len(nonzero):
        result = stats.wilcoxon(d, zero_method="wilcox", alternative="two-sided")
        return float(result.statistic), float(result.pvalue)
    ranks = stats.rankdata(magnitudes)
    flips = (np.arange(2 ** len(ranks))[:, None] >> np.arange(len(ranks))) & 1
    null = flips @ ranks  # R+ under every sign flip
    observed = float(ranks[nonzero > 0].sum())
    gamma = abs(observed) * np.finfo(float).eps * 100
    p = 2 * min((null <= observed + gamma).mean(), (null >= observed - gamma).mean())
    return min(observed, float(ranks.sum()) - observed), float(min(p, 1.0))


def _percentile(values: np.ndarray) -> tuple[float | None, float | None]:
    values = values[np.isfinite(values)]
    if not len(values):
        return None, None
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


def _resample_counts(codes: np.ndarray, n_codes: int, rng, size: int) -> np.ndarray:
    """How often each value code occurs in each of `size` resamples of `codes` (rows drawn
    with replacement, as codes[rng.integers(0, n, (size, n))]): counts[size, n_codes]."""
    n = len(codes)
    drawn = codes[rng.integers(0, n, (size, n))]
    drawn += (np.arange(size) * n_codes)[:, None]
    return np.bincount(drawn.ravel(), minlength=size * n_codes).reshape(size, n_codes)


def _boot_unpaired(a, b, n_boot, seed):
    """Cliff's delta and the mean difference of `n_boot` resamples of a and of b (each drawn
    within its own sample). A resample is held as counts per distinct value, so Cliff's delta
    is P(a > b) - P(a < b) from cumulative counts (no ranking, memory independent of the
    number of resamples), exactly cliffs_delta of the resampled rows."""
    rng = np.random.default_rng(seed)
    domain, codes = np.unique(np.concatenate([a, b]), return_inverse=True)
    codes_a, codes_b, v = codes[:len(a)], codes[len(a):], len(domain)
    effects, diffs = np.empty(n_boot), np.empty(n_boot)
    chunk = max(1, CHUNK_CELLS // (len(a) + len(b)))
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        ca = _resample_counts(codes_a, v, rng, size).astype(float)
        cb = _resample_counts(codes_b, v, rng, size).astype(float)
        below = np.cumsum(cb, axis=1) - cb  # b values smaller than each value
        above = len(b) - below - cb
        rows = slice(start, start + size)
        effects[rows] = ((ca * below).sum(axis=1) - (ca * above).sum(axis=1)) / (len(a) * len(b))
        diffs[rows] = ca @ domain / len(a) - cb @ domain / len(b)
    return effects, diffs


def _boot_paired(d, n_boot, seed):
    """The matched-pairs rank-biserial correlation and the mean of `n_boot` resamples of the
    differences d, from counts per distinct |d| and sign: the average rank of a value among
    the nonzero |d| of its resample comes from cumulative counts, as rank_biserial_paired
    computes it from ranks."""
    rng = np.random.default_rng(seed)
    domain, codes = np.unique(d, return_inverse=True)
    magnitude = np.abs(domain)
    order = np.unique(magnitude)
    level = np.searchsorted(order, magnitude)  # each value's |d| level
    positive, nonzero = (domain > 0).astype(float), (domain != 0).astype(float)
    v, m = len(domain), len(order)
    effects, diffs = np.empty(n_boot), np.empty(n_boot)
    chunk = max(1, CHUNK_CELLS // len(d))
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        counts = _resample_counts(codes, v, rng, size).astype(float)
        per_level = np.zeros((size, m))
        np.add.at(per_level.T, level, (counts * nonzero).T)  # nonzero values per |d| level
        rank = np.cumsum(per_level, axis=1) - per_level + (per_level + 1) / 2
        value_rank = rank[:, level]  # each value's average rank among the nonzero |d|
        plus = (counts * positive * value_rank).sum(axis=1)
        total = (counts * nonzero * value_rank).sum(axis=1)
        rows = slice(start, start + size)
        with np.errstate(invalid="ignore", divide="ignore"):
            effects[rows] = np.where(total > 0, 2 * plus / np.where(total > 0, total, 1) - 1,
                                     0.0)
        diffs[rows] = counts @ domain / len(d)
    return effects, diffs


def _unit_means(group: pd.DataFrame, basis: str) -> dict[str, pd.Series]:
    """Per system: the mean of `basis` per item (sorted by item, so results do not depend on the
    order rows were read in), or per segment when segments pair the systems."""
    return {s: g.groupby("unit", sort=True)[basis].mean()
            for s, g in group.groupby("system", sort=True)}


def snap_ties(values: np.ndarray) -> np.ndarray:
    """Values that differ only by floating-point noise made equal (neighbours in sorted order
    within EQUAL_TOLERANCE of the largest magnitude): z-scores of equal ratings can differ in
    the last bits, and a rank test must see them as the ties they are."""
    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        return values
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    tolerance = EQUAL_TOLERANCE * max(1.0, float(np.abs(values).max()))
    starts = np.concatenate([[True], np.diff(ordered) > tolerance])
    snapped = np.empty_like(values)
    snapped[order] = ordered[np.flatnonzero(starts)[np.cumsum(starts) - 1]]
    return snapped


def shares_segments(group: pd.DataFrame) -> bool:
    """Systems share their inputs when every item (columns item, system, segment) has a
    segment, each system has one item per segment and all systems cover the same segments
    (e.g. every system answered the same questions)."""
    if group["system"].nunique() < 2 or group["segment"].isna().any():
        return False
    per_system = group.groupby("system")
    segments = per_system["segment"].apply(lambda s: frozenset(s))
    one_item_each = (per_system.apply(
        lambda g: g.groupby("segment")["item"].nunique().max(), include_groups=False) == 1).all()
    return len(segments) >= 2 and len(set(segments)) == 1 and bool(one_item_each)


def _equal(x: float, y: float) -> bool:
    return abs(x - y) <= EQUAL_TOLERANCE * max(1.0, abs(x), abs(y))


def _compare(a: pd.Series, b: pd.Series, paired: bool, n_boot: int, seed: int) -> dict | None:
    if paired:
        common = a.index.intersection(b.index)
        if not len(common):
            return None
        xa, xb = a[common].to_numpy(float), b[common].to_numpy(float)
        d = xa - xb
        d = np.sign(d) * snap_ties(np.abs(d))
        d[np.abs(d) <= EQUAL_TOLERANCE * max(1.0, float(np.abs(xa).max(initial=0)))] = 0.0
        if not np.any(d):
            statistic, p = 0.0, 1.0
        else:
            statistic, p = wilcoxon_signed_rank(d)
        effect = float(rank_biserial_paired(d)[0])
        boots = _boot_paired(d, n_boot, seed) if n_boot > 0 and len(d) > 1 else None
        row = {"test": "wilcoxon_signed_rank", "effect_measure": "rank_biserial_paired",
               "n_a": len(xa), "n_b": len(xb)}
    else:
        pooled = snap_ties(np.concatenate([a.to_numpy(float), b.to_numpy(float)]))
        xa, xb = pooled[:len(a)], pooled[len(a):]
        result = stats.mannwhitneyu(xa, xb, alternative="two-sided")
        statistic, p = float(result.statistic), float(result.pvalue)
        effect = float(cliffs_delta(xa, xb)[0])
        boots = (_boot_unpaired(xa, xb, n_boot, seed)
                 if n_boot > 0 and len(xa) > 1 and len(xb) > 1 else None)
        row = {"test": "mann_whitney_u", "effect_measure": "cliffs_delta",
               "n_a": len(xa), "n_b": len(xb)}
    effect_ci = _percentile(boots[0]) if boots is not None else (None, None)
    diff_ci = _percentile(boots[1]) if boots is not None else (None, None)
    mean_a, mean_b = float(xa.mean()), float(xb.mean())
    return {**row, "paired": paired, "statistic": statistic, "p": p, "effect": effect,
            "effect_ci_low": effect_ci[0], "effect_ci_high": effect_ci[1],
            "mean_a": mean_a, "mean_b": mean_b, "mean_difference": mean_a - mean_b,
            "mean_difference_ci_low": diff_ci[0], "mean_difference_ci_high": diff_ci[1]}


def compare_systems(
    frame: pd.DataFrame, *, alpha: float = ALPHA, correction: str = "holm",
    blocked: dict | None = None, n_boot: int = N_BOOT, seed: int = 0,
) -> pd.DataFrame:
    """Every pair of systems per (question, part), corrected over the pairs of that part.

    The values compared are item means of the WMT z-scores (column `z`) or, for a part in
    `blocked` (raters nested in systems: z is meaningless), of the raw values. Systems that
    have segments (the campaign's items pair the systems: `shares_segments`) are compared on
    the segments both rated, paired (Wilcoxon signed-rank on per-segment means, effect
    the matched-pairs rank-biserial correlation), others unpaired (Mann-Whitney U, effect
    Cliff's delta); both effects have a percentile bootstrap interval over items (segments
    when paired), as has the mean difference. `better` names a system only when p_adjusted <
    alpha, the effect points to it, the means differ beyond rounding and the design allows it.
    """
    blocked = blocked or {}
    rows = []
    for (question, part), group in frame.groupby(KEYS, sort=True):
        reason = blocked.get((question, part))
        basis = "raw" if reason or "z" not in group else "z"
        paired = "segment" in group and bool(group["segment"].notna().all())
        group = group.assign(unit=group["segment"] if paired else group["item"],
                             raw=group["value"])
        means = _unit_means(group, "raw" if basis == "raw" else "z")
        part_rows = []
        for a, b in itertools.combinations(sorted(means), 2):
            result = _compare(means[a], means[b], paired, n_boot, seed)
            if result is None:  # paired systems that share no rated segment yet
                continue
            part_rows.append({"question": question, "part": part, "system_a": a,
                              "system_b": b, "basis": basis, "blocked_by": reason, **result})
        adjusted = adjust_pvalues(np.array([r["p"] for r in part_rows]), correction)
        for row, p_adj in zip(part_rows, adjusted, strict=True):
            significant = bool(p_adj < alpha)
            better = None
            if significant and not reason and row["effect"] != 0 and not _equal(
                    row["mean_a"], row["mean_b"]):
                better = row["system_a"] if row["effect"] > 0 else row["system_b"]
            rows.append({**row, "p_adjusted": float(p_adj), "correction": correction,
                         "distinguishable": significant and not reason, "better": better})
    return pd.DataFrame(rows, columns=COLUMNS)


def significance_clusters(ranking: pd.DataFrame, comparisons: pd.DataFrame) -> pd.Series:
    """WMT-style clusters over a ranking sorted best first per (question, part): a boundary
    falls between two neighbours when every system above it is significantly better (after
    correction) than every system below it. Returns cluster numbers (1 = top) aligned with
    `ranking`; None where the ranking has no rank (design blocked)."""
    wins = {(r.question, r.part, r.better, r.system_b if r.better == r.system_a else r.system_a)
            for r in comparisons.itertuples() if r.better is not None}
    out = pd.Series([None] * len(ranking), index=ranking.index, dtype=object)
    for (question, part), group in ranking.groupby(KEYS, sort=False):
        if group["rank"].isna().any():
            continue
        systems = group.sort_values("rank")["system"].tolist()
        cluster, numbers = 1, []
        for k, _system in enumerate(systems):
            if k and all((question, part, hi, lo) in wins
                         for hi in systems[:k] for lo in systems[k:]):
                cluster += 1
            numbers.append(cluster)
        out[group.sort_values("rank").index] = numbers
    return out
