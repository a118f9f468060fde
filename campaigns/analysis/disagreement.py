"""Disagreement between raters, item by item: soft labels, entropy, split votes, spread.

Agreement coefficients summarise a question in one number; a researcher also wants to know
which items people disagreed on, and how (Uma et al. 2021, "Learning from Disagreement: A
Survey", JAIR 72; Plank 2022, "The 'Problem' of Human Label Variation", EMNLP).

Input: one row per rating with columns unit (an item, or an item's line or output: the unit
the agreement tables use), question, part, value and level (nominal, ordinal, interval,
ratio). Only units with at least two ratings count: one rating cannot disagree.

- Label parts (nominal and ordinal levels, and numeric parts with at most MAX_LABELS distinct
  values, such as a 1-5 scale read as interval) get each unit's soft label: the count and
  share of each label. Entropy is Shannon's in bits (log base 2); the normalised entropy
  divides it by log2 K, K the number of distinct labels the part received in the campaign
  (0 = unanimous, 1 = votes spread evenly over every label; None when K < 2).
- A unit's vote is `split` when not unanimous, and has `no_majority` when no label holds more
  than half of its ratings (a 2-2 tie, or 1-1-1). Pairwise questions enter through their
  `winner` part (the system preferred, or "tie"), so a split there is a preference split.
- Numeric parts (interval, ratio, and ordinal answers that are numbers) get each unit's
  spread: the standard deviation (n - 1 denominator) and the range, also divided by the range
  of the part's values in the campaign (`normalised_range`).

The most disputed units are the TOP_N with the highest entropy (label parts) or standard
deviation (numeric parts), more ratings first on a tie, then by unit.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

MAX_LABELS = 11  # a 0-10 scale still reads as labels; a 0-100 slider does not
TOP_N = 10
LABEL_LEVELS = ("nominal", "ordinal")
NUMERIC_LEVELS = ("ordinal", "interval", "ratio")
KEYS = ["question", "part"]
SUMMARY_COLUMNS = [
    "question", "part", "level", "units", "ratings_per_unit", "labels", "mean_entropy",
    "mean_normalised_entropy", "share_split", "share_no_majority", "mean_sd", "median_sd",
    "mean_range", "mean_normalised_range"]
SOFT_COLUMNS = ["question", "part", "unit", "n", "label", "count", "share", "entropy",
                "normalised_entropy", "majority_share"]
SPREAD_COLUMNS = ["question", "part", "unit", "n", "mean", "sd", "range", "normalised_range"]


def _numbers(values: pd.Series) -> pd.Series | None:
    numbers = pd.to_numeric(values, errors="coerce")
    return numbers.astype(float) if numbers.notna().all() else None


def _label_text(values: np.ndarray) -> np.ndarray:
    """Distinct labels as text; whole numbers without a trailing .0 (4.0 from a float is 4)."""
    numbers = _numbers(pd.Series(values))
    if numbers is not None and (numbers == numbers.round()).all():
        return numbers.astype(np.int64).astype(str).to_numpy()
    return pd.Series(values).astype(str).to_numpy()


def _rated(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame's present values on units with at least two ratings."""
    frame = frame[frame["value"].notna()]
    n = frame.groupby("unit", sort=False)["unit"].transform("size")
    return frame[n >= 2]


def _tally(frame: pd.DataFrame) -> dict:
    """Label counts of rated rows (each unit rated twice or more), as sorted cell arrays:
    `unit` and `label` codes with `count` and `share` per (unit, label) cell; per unit its id
    (`units`), `n`, `entropy` and `majority_share`; `text` the labels, `first` the first cell
    of each unit."""
    unit_code, units = pd.factorize(frame["unit"], sort=True)
    label_code, labels = pd.factorize(frame["value"])
    text = _label_text(np.asarray(labels))
    # Labels that read alike (4 and 4.0) are one label.
    label_code = pd.factorize(text)[0][label_code]
    text = pd.unique(text)
    k = len(text)
    cells, count = np.unique(unit_code.astype(np.int64) * k + label_code, return_counts=True)
    unit, label = np.divmod(cells, k)
    first = np.flatnonzero(np.r_[True, unit[1:] != unit[:-1]])
    n = np.add.reduceat(count, first)
    share = count / np.repeat(n, np.diff(np.r_[first, len(unit)]))
    return {"unit": unit, "label": label, "count": count, "share": share, "text": text,
            "units": np.asarray(units), "n": n, "first": first,
            "entropy": np.add.reduceat(-share * np.log2(share), first) + 0.0,  # no -0.0
            "majority_share": np.maximum.reduceat(share, first)}


def _per_unit(tally: dict) -> pd.DataFrame:
    k = len(tally["text"])
    return pd.DataFrame({"unit": tally["units"], "n": tally["n"], "entropy": tally["entropy"],
                         "normalised_entropy": tally["entropy"] / np.log2(k) if k >= 2
                         else np.nan, "majority_share": tally["majority_share"]})


def _long(tally: dict) -> pd.DataFrame:
    """The tally as SOFT_COLUMNS (but question, part): a row per unit and label received."""
    unit, label, count = tally["unit"], tally["label"], tally["count"]
    per_unit = _per_unit(tally).iloc[unit].reset_index(drop=True)
    per_unit["label"], per_unit["count"], per_unit["share"] = (
        tally["text"][label], count, tally["share"])
    order = np.lexsort((np.argsort(np.argsort(tally["text"]))[label], -count, unit))
    return per_unit.iloc[order][SOFT_COLUMNS[2:]].reset_index(drop=True)


def soft_labels(frame: pd.DataFrame) -> pd.DataFrame:
    """One part's label distribution per unit in long form (SOFT_COLUMNS but question, part):
    a row per unit and label received, with the unit's entropy (bits), normalised entropy and
    the share of its most frequent label."""
    frame = _rated(frame)
    if frame.empty:
        return pd.DataFrame(columns=SOFT_COLUMNS[2:])
    return _long(_tally(frame))


def spreads(frame: pd.DataFrame) -> pd.DataFrame:
    """One numeric part's spread per unit (SPREAD_COLUMNS but question, part)."""
    frame = _rated(frame)
    columns = SPREAD_COLUMNS[2:]
    numbers = _numbers(frame["value"]) if len(frame) else None
    if numbers is None:
        return pd.DataFrame(columns=columns)
    grouped = numbers.groupby(frame["unit"].to_numpy())
    out = pd.DataFrame({"n": grouped.size(), "mean": grouped.mean(), "sd": grouped.std(ddof=1),
                        "range": grouped.max() - grouped.min()})
    scale = numbers.max() - numbers.min()
    out["normalised_range"] = out["range"] / scale if scale > 0 else np.nan
    return out.rename_axis("unit").reset_index()[columns]


def _is_label_part(level: str, values: pd.Series) -> bool:
    return level in LABEL_LEVELS or values.nunique() <= MAX_LABELS


def _is_numeric_part(level: str, values: pd.Series) -> bool:
    return level in NUMERIC_LEVELS and _numbers(values) is not None


def _label_summary(units: pd.DataFrame, k: int) -> dict:
    return {"labels": k, "mean_entropy": units["entropy"].mean(),
            "mean_normalised_entropy": units["normalised_entropy"].mean(),
            "share_split": (units["majority_share"] < 1).mean(),
            "share_no_majority": (units["majority_share"] <= 0.5).mean()}


def _spread_summary(spread: pd.DataFrame) -> dict:
    return {"mean_sd": spread["sd"].mean(), "median_sd": spread["sd"].median(),
            "mean_range": spread["range"].mean(),
            "mean_normalised_range": spread["normalised_range"].mean()}


def _label_counts(tally: dict | None, unit_ids) -> dict:
    """unit -> {label: count} (most frequent first) for the given units."""
    if tally is None:
        return {}
    position = pd.Index(tally["units"]).get_indexer(list(unit_ids))
    bounds = np.r_[tally["first"], len(tally["unit"])]
    out = {}
    for p in position:
        cells = range(bounds[p], bounds[p + 1])
        pairs = sorted(((int(tally["count"][c]), str(tally["text"][tally["label"][c]]))
                        for c in cells), key=lambda pair: (-pair[0], pair[1]))
        out[tally["units"][p]] = {label: count for count, label in pairs}
    return out


def _most_disputed(units: pd.DataFrame | None, tally: dict | None, spread: pd.DataFrame,
                   top_n: int) -> list[dict]:
    """The top_n units by entropy (label parts) or sd (numeric parts), with label counts."""
    table = units[["unit", "n", "entropy"]] if units is not None else None
    if len(spread):
        table = spread[["unit", "n", "sd"]] if table is None else table.merge(
            spread[["unit", "sd"]], on="unit", how="left")
    if table is None or table.empty:
        return []
    table = table.reindex(columns=["unit", "n", "entropy", "sd"])
    by = "entropy" if units is not None else "sd"
    top = table.sort_values([by, "n", "unit"], ascending=[False, False, True]).head(top_n)
    counts = _label_counts(tally, top["unit"])
    return [{"unit": row.unit, "n": int(row.n), "label_counts": counts.get(row.unit),
             "entropy": _float(row.entropy), "sd": _float(row.sd)}
            for row in top.itertuples(index=False)]


def _float(value) -> float | None:
    value = float(value) if value is not None else np.nan
    return value if np.isfinite(value) else None


def disagreement(frame: pd.DataFrame, *, top_n: int = TOP_N, soft: bool = False) -> dict:
    """Per (question, part): the `summary` (SUMMARY_COLUMNS), the `disputed` units (a list of
    dicts), the per-unit `spreads` and, with `soft`, the per-unit `soft_labels` (long tables;
    without `soft` an empty table: the statistics need only the summary)."""
    summaries, soft_tables, spread_tables, disputed = [], [], [], []
    for (question, part), rows in frame.groupby(KEYS, sort=False):
        rows = _rated(rows)
        if rows.empty:
            continue
        level = rows["level"].iloc[0]
        tally = _tally(rows) if _is_label_part(level, rows["value"]) else None
        units = _per_unit(tally) if tally is not None else None
        spread = spreads(rows) if _is_numeric_part(level, rows["value"]) else \
            pd.DataFrame(columns=SPREAD_COLUMNS[2:])
        n_units = rows["unit"].nunique()
        summaries.append({"question": question, "part": part, "level": level, "units": n_units,
                          "ratings_per_unit": len(rows) / n_units,
                          **(_label_summary(units, len(tally["text"])) if tally else {}),
                          **(_spread_summary(spread) if len(spread) else {})})
        if soft and tally is not None:
            soft_tables.append(_long(tally).assign(question=question, part=part))
        spread_tables.append(spread.assign(question=question, part=part))
        disputed += [{"question": question, "part": part, "rank": rank, **row} for rank, row
                     in enumerate(_most_disputed(units, tally, spread, top_n), 1)]
    return {"summary": pd.DataFrame(summaries, columns=SUMMARY_COLUMNS),
            "soft_labels": _concat(soft_tables, SOFT_COLUMNS),
            "spreads": _concat(spread_tables, SPREAD_COLUMNS),
            "disputed": disputed}


def _concat(tables: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
    tables = [t for t in tables if len(t)]
    return pd.concat(tables, ignore_index=True)[columns] if tables else \
        pd.DataFrame(columns=columns)
