"""Judge alignment: each LLM judge (and, as the ceiling, each human) against the human consensus.

Frames hold columns item, system, worker, question, part, value; `levels` maps (question, part)
to a level of measurement. Every figure has a percentile bootstrap interval over items.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from . import N_BOOT
from .agreement import alpha_from_counts, bootstrap_alphas, value_counts
from .judges import consensus_values, human_consensus
from .system_level import pearson_rows, percentile_interval, system_correlation_intervals

KEYS = ["question", "part"]
FIGURES = ["exact", "kappa", "kappa_weighted", "kappa_quadratic", "alpha", "pearson", "spearman",
           "kendall"]
COLUMNS = (["judge", "question", "part", "level", "n"]
           + [c for f in FIGURES for c in (f, f"{f}_ci_low", f"{f}_ci_high")]
           + ["top_share_judge", "top_share_human", "mean_judge", "mean_human",
              "mean_difference", "n_systems", "system_pearson", "system_spearman",
              "system_kendall", "system_pearson_ci_low", "system_pearson_ci_high",
              *[f"system_{f}_boot_ci_{end}" for f in ("pearson", "spearman", "kendall")
                for end in ("low", "high")],
              "system_means"])
MIN_ALL_MINIMUM_PARTS = 3  # one low rating is a judgment; every criterion at zero is a failure
MIN_IDENTICAL_ITEMS = 5
ALL_MINIMUM = "all_minimum"
ALL_IDENTICAL = "all_identical"
CHUNK_CELLS = 4_000_000
MAX_KENDALL_BOOTSTRAP = 1_000
MAX_RESAMPLED_VALUES = 5_000_000
MIN_RESAMPLES = 100  # items; Kendall's tau costs n^2 per resample beyond that


def failed_outputs(judged: pd.DataFrame, minima: dict) -> pd.DataFrame:
    """Judge answers that are failed runs, not judgments: columns judge, item, reason.

    - all_minimum: an answer with at least MIN_ALL_MINIMUM_PARTS numeric parts (a rubric's
      criteria; a total is not counted) and every one at its minimum (`minima`, (question,
      part) -> the scale's lowest value), as a run that returned an empty score dict;
    - all_identical: a judge whose answers are the same for every item (at least
      MIN_IDENTICAL_ITEMS items): a template echoed, not a reading of the items.
    """
    columns = ["judge", "item", "reason"]
    if judged.empty:
        return pd.DataFrame(columns=columns)
    numeric = judged[judged["level"].isin(("ordinal", "interval", "ratio"))
                     & judged["part"].ne("total")]
    low = np.array([minima.get((q, p)) for q, p in zip(numeric["question"], numeric["part"],
                                                      strict=True)], dtype=float)
    at_min = numeric.assign(at_min=np.isclose(numeric["value"].astype(float), low))
    per = at_min.groupby(["worker", "item"]).agg(n=("at_min", "size"), low=("at_min", "all"))
    rows = [(j, i, ALL_MINIMUM) for (j, i), r in per.iterrows()
            if r["n"] >= MIN_ALL_MINIMUM_PARTS and r["low"]]
    answers = judged.assign(text=judged["question"] + "|" + judged["part"] + "="
                            + judged["value"].astype(str))
    signature = answers.sort_values(["question", "part"]).groupby(["worker", "item"])[
        "text"].agg("\n".join)
    for judge, group in signature.groupby(level=0):
        if len(group) >= MIN_IDENTICAL_ITEMS and group.nunique() == 1:
            rows += [(judge, item, ALL_IDENTICAL) for _, item in group.index]
    return pd.DataFrame(rows, columns=columns).drop_duplicates(["judge", "item"])


def cohen_kappa(a: np.ndarray, b: np.ndarray, categories: np.ndarray,
                weighted: bool = False, quadratic: bool = False) -> np.ndarray:
    """Cohen's kappa of rows a[B, n] and b[B, n] (category indices); linear weights
    |i - j| / (k - 1) when `weighted`, quadratic ((i - j) / (k - 1))^2 when `quadratic`
    (Cohen 1968; Fleiss & Cohen 1973: the quadratic one approximates the intraclass
    correlation, the agreement figure for ordered scales)."""
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    k = len(categories)
    n_rows, n = a.shape
    # From the margins and the weight of each pair, not the rows' k x k tables: with a
    # slider's 101 values a thousand resamples' tables would be 10 million cells per kappa.
    weights = _kappa_weights(k, weighted, quadratic)
    offsets = (np.arange(n_rows) * k)[:, None]
    margin_a = np.bincount((offsets + a).ravel(), minlength=n_rows * k).reshape(n_rows, k) / n
    margin_b = np.bincount((offsets + b).ravel(), minlength=n_rows * k).reshape(n_rows, k) / n
    observed_d = weights[a, b].mean(axis=1)
    expected_d = ((margin_a @ weights) * margin_b).sum(axis=1)
    return _kappa(observed_d, expected_d)


def _kappa_weights(k: int, weighted: bool, quadratic: bool) -> np.ndarray:
    """Disagreement weights of categories i, j: 1 - [i == j], or linear / quadratic in |i - j|."""
    if (weighted or quadratic) and k > 1:
        index = np.arange(k)
        weights = np.abs(index[:, None] - index[None, :]) / (k - 1)
        return weights ** 2 if quadratic else weights
    return 1.0 - np.eye(k)


def _kappa(observed_d: np.ndarray, expected_d: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected_d > 0, 1.0 - observed_d / np.where(expected_d > 0, expected_d, 1),
                        np.nan)


def _kappa_from_table(table: np.ndarray, k: int, weighted: bool = False,
                      quadratic: bool = False) -> np.ndarray:
    """Cohen's kappa of tables[B, k, k] of proportions (cohen_kappa's weights)."""
    weights = _kappa_weights(k, weighted, quadratic)
    expected = table.sum(axis=2)[:, :, None] * table.sum(axis=1)[:, None, :]
    return _kappa((table * weights).sum(axis=(1, 2)), (expected * weights).sum(axis=(1, 2)))


def _kendall_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row pair (as scipy.stats.kendalltau), O(n^2) per row."""
    out = np.empty(len(x))
    n = x.shape[1]
    upper = np.triu_indices(n, 1)
    step = max(1, CHUNK_CELLS // max(1, len(upper[0])))
    for start in range(0, len(x), step):
        xs, ys = x[start:start + step], y[start:start + step]
        dx = np.sign(xs[:, upper[0]] - xs[:, upper[1]])
        dy = np.sign(ys[:, upper[0]] - ys[:, upper[1]])
        concordant = (dx * dy).sum(axis=1)
        tied_x, tied_y = (dx != 0).sum(axis=1), (dy != 0).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start:start + step] = np.where((tied_x > 0) & (tied_y > 0), concordant / np.sqrt(
                tied_x.astype(float) * tied_y), np.nan)
    return out


def _figures(h: np.ndarray, j: np.ndarray, level: str, categories: np.ndarray,
             hc: np.ndarray, jc: np.ndarray, kendall: bool = True) -> dict[str, np.ndarray]:
    """Every figure for rows of paired values h[B, n], j[B, n] (hc, jc: category indices)."""
    # A total or a slider (interval): exact agreement on 0-19 points means little, no kappa.
    out = {"exact": (hc == jc).mean(axis=1),
           "kappa": (np.full(len(hc), np.nan) if level == "interval"
                     else cohen_kappa(hc, jc, categories))}
    if level == "nominal":
        return out
    out["kappa_weighted"] = cohen_kappa(hc, jc, categories, weighted=True)
    out["kappa_quadratic"] = cohen_kappa(hc, jc, categories, quadratic=True)
    out["pearson"] = pearson_rows(h, j)
    out["spearman"] = pearson_rows(stats.rankdata(h, axis=1), stats.rankdata(j, axis=1))
    if kendall:
        out["kendall"] = _kendall_rows(h, j)
    return out


def _resampled_figures(hc: np.ndarray, jc: np.ndarray, categories: np.ndarray, level: str,
                       *, n_boot: int, seed: int, kendall: bool) -> dict[str, np.ndarray]:
    """_figures of `n_boot` resamples of the paired items (rows drawn with replacement), each
    resample held as its table of (human, judge) category counts: every figure is a function
    of that table, so memory is bounded by a chunk of draws whatever n_boot is."""
    rng = np.random.default_rng(seed)
    n, k = len(hc), len(categories)
    pair = hc * k + jc
    parts: dict[str, list] = {}
    chunk = max(1, CHUNK_CELLS // max(n, min(k * k, 4 * n)))
    by_rows = k * k > 4 * n  # many distinct values (interval data): rows beat tables
    numeric = level != "nominal"
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        draws = rng.integers(0, n, (size, n))
        if by_rows:
            figures = _figures(categories[hc[draws]] if numeric else None,
                               categories[jc[draws]] if numeric else None, level, categories,
                               hc[draws], jc[draws], kendall=kendall)
        else:
            drawn = pair[draws] + (np.arange(size) * k * k)[:, None]
            table = np.bincount(drawn.ravel(), minlength=size * k * k).reshape(size, k, k)
            figures = table_figures(table.astype(float), categories, level, kendall=kendall)
        for name, values in figures.items():
            parts.setdefault(name, []).append(values)
    return {name: np.concatenate(values) for name, values in parts.items()}


def table_figures(table: np.ndarray, categories: np.ndarray, level: str, *,
                  kendall: bool = True) -> dict[str, np.ndarray]:
    """_figures from tables[B, K, K] of (human, judge) category counts: exact agreement,
    kappas, and for numeric levels Pearson on the values, Spearman on the average ranks the
    margins give each category, and Kendall's tau-b from concordant and discordant pairs."""
    n = table.sum(axis=(1, 2))
    out = {"exact": np.trace(table, axis1=1, axis2=2) / n,
           "kappa": (np.full(len(table), np.nan) if level == "interval"  # as _figures
                     else _kappa_from_table(table / n[:, None, None], len(categories)))}
    if level == "nominal":
        return out
    out["kappa_weighted"] = _kappa_from_table(table / n[:, None, None], len(categories),
                                              weighted=True)
    out["kappa_quadratic"] = _kappa_from_table(table / n[:, None, None], len(categories),
                                               quadratic=True)
    rows, cols = table.sum(axis=2), table.sum(axis=1)
    values = np.broadcast_to(categories.astype(float), rows.shape)
    out["pearson"] = _table_pearson(table, values, values, rows, cols)
    out["spearman"] = _table_pearson(table, np.cumsum(rows, axis=1) - (rows - 1) / 2,
                                     np.cumsum(cols, axis=1) - (cols - 1) / 2, rows, cols)
    if kendall:
        out["kendall"] = _table_kendall(table, rows, cols, n)
    return out


def _table_pearson(table, x, y, rows, cols) -> np.ndarray:
    """Pearson's r of paired values whose (x, y) categories are counted in `table`."""
    n = rows.sum(axis=1, keepdims=True)
    x = x - (rows * x).sum(axis=1, keepdims=True) / n
    y = y - (cols * y).sum(axis=1, keepdims=True) / n
    covariance = np.einsum("bij,bi,bj->b", table, x, y)
    denominator = np.sqrt((rows * x * x).sum(axis=1) * (cols * y * y).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, covariance / np.where(denominator > 0, denominator, 1),
                        np.nan)


def _table_kendall(table, rows, cols, n) -> np.ndarray:
    """Kendall's tau-b from tables of counts: (concordant - discordant) pairs over the pairs
    not tied in each variable, as _kendall_rows counts them pair by pair."""
    # above[b, i, j]: pairs of a cell (i, j) with cells strictly greater in both; beside:
    # strictly greater human value, strictly smaller judge value.
    later = np.cumsum(table[:, ::-1, :], axis=1)[:, ::-1, :] - table  # rows after i
    after = np.cumsum(later[:, :, ::-1], axis=2)[:, :, ::-1]
    greater = np.concatenate([after[:, :, 1:], np.zeros_like(after[:, :, :1])], axis=2)
    before = np.cumsum(later, axis=2)
    smaller = np.concatenate([np.zeros_like(before[:, :, :1]), before[:, :, :-1]], axis=2)
    score = (table * (greater - smaller)).sum(axis=(1, 2))
    pairs = n * (n - 1) / 2
    untied_x = pairs - (rows * (rows - 1) / 2).sum(axis=1)
    untied_y = pairs - (cols * (cols - 1) / 2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((untied_x > 0) & (untied_y > 0), score / np.sqrt(untied_x * untied_y),
                        np.nan)


def _number(value) -> float | None:
    return None if value is None or not np.isfinite(value) else float(value)


def align(pairs: pd.DataFrame, level: str, *, n_boot: int = N_BOOT, seed: int = 0) -> dict:
    """Figures for one rater against a reference over paired items: columns item, system,
    value_judge, value_human (the reference). Bootstrap over items, sorted first so the
    interval does not depend on row order."""
    pairs = pairs.sort_values("item", kind="stable")
    n = len(pairs)
    if level == "nominal":
        hv, jv = pairs["value_human"].astype(str).to_numpy(), pairs["value_judge"].astype(
            str).to_numpy()
    else:
        hv, jv = (pairs["value_human"].astype(float).to_numpy(),
                  pairs["value_judge"].astype(float).to_numpy())
    categories, codes = np.unique(np.concatenate([hv, jv]), return_inverse=True)
    hc, jc = codes[:n], codes[n:]
    numeric = level != "nominal"
    h = hv[None, :] if numeric else None
    j = jv[None, :] if numeric else None
    point = _figures(h, j, level, categories, hc[None, :], jc[None, :], kendall=False)
    if numeric:  # scipy's O(n log n) tau-b for the point; the O(n^2) rows only in resamples
        point["kendall"] = np.array([stats.kendalltau(hv, jv).statistic if n >= 2
                                     else np.nan])
    units = np.concatenate([pairs["item"].to_numpy()] * 2)
    counts, domain = value_counts(units, np.concatenate([hv, jv]) if numeric else codes,
                                  numeric=True)
    alpha = alpha_from_counts(counts, domain, level) if n >= 2 else None
    row: dict = {"n": n, "alpha": alpha}
    for name, values in point.items():
        row[name] = _number(values[0]) if n >= 2 or name == "exact" else None
    if n_boot > 0 and n >= 3:
        # Big pooled tables get fewer resamples (never under MIN_RESAMPLES), whose
        # percentiles are already steady at that size: the time stays linear in ratings.
        n_boot = max(min(n_boot, MAX_RESAMPLED_VALUES // n), MIN_RESAMPLES)
        boot = _resampled_figures(hc, jc, categories, level, n_boot=n_boot, seed=seed,
                                  kendall=n <= MAX_KENDALL_BOOTSTRAP)
        for name, values in boot.items():
            row[f"{name}_ci_low"], row[f"{name}_ci_high"] = percentile_interval(values)
        if alpha is not None:
            row["alpha_ci_low"], row["alpha_ci_high"] = percentile_interval(
                bootstrap_alphas(counts, domain, level, n_boot=n_boot, seed=seed))
    if numeric:
        top = max(hv.max(), jv.max())
        row.update(top_share_judge=float((jv == top).mean()),
                   top_share_human=float((hv == top).mean()),
                   mean_judge=float(jv.mean()), mean_human=float(hv.mean()),
                   mean_difference=float((jv - hv).mean()),
                   **_system_figures(pairs["system"].to_numpy(), hv, jv))
        if n_boot > 0 and row.get("system_pearson") is not None:
            row.update(system_correlation_intervals(pairs["system"].to_numpy(), hv, jv,
                                                    n_boot=n_boot, seed=seed))
    else:
        top = pd.Series(np.concatenate([hv, jv])).mode().iloc[0]
        row.update(top_share_judge=float((jv == top).mean()),
                   top_share_human=float((hv == top).mean()))
    return row


def _system_figures(systems: np.ndarray, hv: np.ndarray, jv: np.ndarray) -> dict:
    """Per system the human and the judge means, and their correlations across systems
    (Pearson's with its Fisher-z 95% interval from four systems on)."""
    system = pd.DataFrame({"system": systems, "value_human": hv, "value_judge": jv}
                          ).groupby("system").mean()
    out = {"n_systems": len(system),
           "system_means": [{"system": str(name), "human": float(h), "judge": float(j)}
                            for name, h, j in system.itertuples()]}
    sh, sj = system["value_human"].to_numpy(), system["value_judge"].to_numpy()
    if len(system) >= 3 and np.ptp(sh) > 0 and np.ptp(sj) > 0:
        pearson = stats.pearsonr(sh, sj)
        if len(system) >= 4:  # Fisher's z interval needs n - 3 > 0
            ci = pearson.confidence_interval(0.95)
            out.update(system_pearson_ci_low=float(ci.low), system_pearson_ci_high=float(ci.high))
        out.update(system_pearson=float(pearson.statistic),
                   system_spearman=float(stats.spearmanr(sh, sj).statistic),
                   system_kendall=float(stats.kendalltau(sh, sj).statistic))
    return out


def _rows(reference: pd.DataFrame, raters: pd.DataFrame, levels: dict, n_boot: int) -> list:
    judged = raters.dropna(subset=["value"]).drop_duplicates(["worker", *KEYS, "item"],
                                                             keep="last")
    paired = judged.merge(reference, on=[*KEYS, "item"], suffixes=("_judge", "_human"))
    rows = []
    for (worker, question, part), group in paired.groupby(["worker", *KEYS], sort=True):
        level = levels.get((question, part))
        if level is None:
            continue
        rows.append({"judge": worker, "question": question, "part": part, "level": level,
                     **align(group, level, n_boot=n_boot)})
    return rows


def judge_alignment(humans: pd.DataFrame, judges: pd.DataFrame, levels: dict, *,
                    n_boot: int = N_BOOT) -> pd.DataFrame:
    """Each judge against the human consensus (judges.human_consensus: median for ordinal,
    mean for interval and ratio, mode for nominal), per question and part."""
    consensus = human_consensus(humans, levels)
    systems = humans.drop_duplicates("item")[["item", "system"]]
    reference = consensus.merge(systems, on="item")
    rows = _rows(reference, judges.drop(columns=["system"], errors="ignore"), levels, n_boot)
    return pd.DataFrame(rows, columns=COLUMNS)


def human_ceiling(humans: pd.DataFrame, levels: dict, *, n_boot: int = N_BOOT,
                  per_worker: bool = True) -> pd.DataFrame:
    """Each human against the consensus of the other humans on the items they share (leave
    one out): how well a human matches the rest, the ceiling a judge can be held to.

    Per part, every rating is paired with the other ratings of its item (index arrays, not a
    joined frame: a million ratings by five raters per item make four million pairs), and the
    consensus rule runs once over (rater, item) keys. With `per_worker` False (large crowds)
    one pooled row, `judge` "all humans", pairs every rating with the consensus of the others.
    """
    ratings = humans.dropna(subset=["value"]).drop_duplicates(["worker", *KEYS, "item"],
                                                               keep="last")
    if ratings.empty:
        return pd.DataFrame(columns=COLUMNS)
    # One integer per (rater, item), numbered in sorted order: a compact key, and the pooled
    # row's resamples do not depend on the order rows were read in.
    key = ratings.groupby(["worker", "item"], sort=True).ngroup().to_numpy()
    columns = {name: ratings[name].to_numpy() for name in ("worker", "item", "system", "value")}
    rows = []
    for (question, part), at in ratings.groupby(KEYS, sort=True).indices.items():
        level = levels.get((question, part))
        if level is None:
            continue
        paired = _ceiling_pairs(key[at], {k: v[at] for k, v in columns.items()}, level)
        if not per_worker:
            paired = paired.assign(worker="all humans")
        for worker, group in paired.groupby("worker", sort=True):
            unit = group["key"] if not per_worker else group["item"]
            rows.append({"judge": worker, "question": question, "part": part, "level": level,
                         **align(group.assign(item=unit.to_numpy()), level, n_boot=n_boot)})
    rows.sort(key=lambda row: (row["judge"], row["question"], row["part"]))
    return pd.DataFrame(rows, columns=COLUMNS)


def _ceiling_pairs(key: np.ndarray, columns: dict, level: str) -> pd.DataFrame:
    """One part's ratings that have other ratings of their item, each with the consensus of
    those others (value_human) beside its own value (value_judge)."""
    own, other = _other_ratings(pd.factorize(columns["item"])[0])
    if not len(own):
        return pd.DataFrame(columns=["key", "worker", "item", "system", "value_judge",
                                     "value_human"])
    others = pd.DataFrame({"key": key[own], "value": columns["value"][other]})
    reference = consensus_values(others, level, keys=("key",)).set_index("key")["value"]
    del others
    rated = np.unique(own)
    return pd.DataFrame({"key": key[rated], "worker": columns["worker"][rated],
                         "item": columns["item"][rated], "system": columns["system"][rated],
                         "value_judge": columns["value"][rated],
                         "value_human": reference.reindex(key[rated]).to_numpy()})


def _other_ratings(units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(own, other): every pair of two different ratings of one unit, as row indices, the
    others of a rating in the order the ratings came."""
    order = np.argsort(units, kind="stable")
    ordered = units[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    sizes = np.diff(np.r_[starts, len(units)])
    size_of = np.repeat(sizes, sizes)  # per ordered rating: how many ratings its unit has
    own = np.repeat(np.arange(len(units)), size_of)
    first = np.repeat(np.cumsum(size_of) - size_of, size_of)  # where own's block begins
    other = np.repeat(np.repeat(starts, sizes), size_of) + (np.arange(len(own)) - first)
    del first
    keep = own != other
    return order[own[keep]], order[other[keep]]
