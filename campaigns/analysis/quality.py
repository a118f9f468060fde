"""Quality control per worker: attention checks, gold, speed, straight-lining, bad references.

Input: the long frame of human judgments (all items, control ones included) with columns
annotation, item, worker, control ("", "attention", "gold"), control_passed (True/False/None),
seconds, question, part, value, gold (the expected atom or None), gold_tolerance,
bad_reference (the row belongs to a degraded "bad reference" item of a slider question) and
rated (the atom is a judgment, not free text).
"""
from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np
import pandas as pd
from scipy import stats

from . import ATTENTION_FAILURES_TO_FLAG

# The default reading-speed floor, used when a campaign sets no per-word floor of its own:
# 0.06 s per displayed word is 1,000 words per minute, about four times the average silent
# reading rate of adults (238 words per minute for English non-fiction, 260 for fiction;
# Brysbaert 2019, "How many words do we read per minute?", J. Memory and Language 109) and
# faster than skimming. A person who reads the item at all stays above it; a script
# answering in a fraction of a second does not.
DEFAULT_SECONDS_PER_WORD = 0.06


def effective_word_floor(setting: float | None) -> float | None:
    """The per-word floor a campaign's setting stands for: empty is the default reading floor,
    0 switches the rule off (None), any other value is that floor."""
    if setting is None:
        return DEFAULT_SECONDS_PER_WORD
    return setting if setting > 0 else None


@dataclass(frozen=True)
class QualityRules:
    attention_failures_to_flag: int = ATTENTION_FAILURES_TO_FLAG
    min_gold_accuracy: float = 0.5  # flagged below this, once the worker has min_gold items
    min_gold: int = 2
    too_fast_fraction: float = 0.25  # median seconds below this share of the typical worker's
    # Absolute floors a researcher sets (None: unset): a worker whose median seconds per item
    # is below min_seconds_per_item, or whose median seconds per displayed word is below
    # min_seconds_per_word (needs a `words` column), is too fast whatever the others do.
    min_seconds_per_item: float | None = None
    min_seconds_per_word: float | None = None
    straight_lining_min_items: int = 5
    alpha: float = 0.05  # bad-reference test


COLUMNS = [
    "worker", "n_items", "attention_n", "attention_failures", "gold_n", "gold_accuracy",
    "median_seconds", "too_fast", "straight_lining", "bad_reference_n", "bad_reference_p",
    "bad_reference_unreliable", "flagged", "reasons",
]


def atom_matches_gold(value, gold, tolerance) -> bool:
    """Numbers match within the tolerance (0 when unset); anything else must be equal."""
    try:
        return abs(float(value) - float(gold)) <= (float(tolerance) if pd.notna(tolerance) else 0.0)
    except (TypeError, ValueError):
        return str(value) == str(gold)


def annotation_outcomes(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per annotation with its control outcome (stored, else computed from gold)."""
    per = frame.groupby("annotation", sort=False).agg(
        worker=("worker", "first"), item=("item", "first"), control=("control", "first"),
        control_passed=("control_passed", "first"), seconds=("seconds", "first"),
    )
    checked = frame[frame["control"].ne("") & frame["gold"].notna()]
    if len(checked):
        ok = [atom_matches_gold(v, g, t) for v, g, t in
              zip(checked["value"], checked["gold"], checked["gold_tolerance"], strict=True)]
        computed = pd.Series(ok, index=checked.index).groupby(checked["annotation"]).all()
        missing = per["control_passed"].isna() & per.index.isin(computed.index)
        per.loc[missing, "control_passed"] = computed[per.index[missing]]
    return per.reset_index()


def straight_liners(frame: pd.DataFrame, min_items: int) -> set:
    """Workers who gave the very same answer to every regular item (at least min_items):
    one distinct value in every rated part they answered."""
    rated = frame[frame["rated"] & frame["control"].eq("")]
    if rated.empty:
        return set()
    distinct = rated.groupby(["worker", "question", "part"])["value"].nunique()
    same = distinct.groupby(level=0).max() == 1
    items = rated.groupby("worker")["annotation"].nunique()
    return set(same.index[same & (items[same.index] >= min_items)])


def bad_reference_test(frame: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """WMT's check: do a worker's bad references score significantly lower than real items?

    One-sided Mann-Whitney U (bad < real) per worker over the slider questions with bad
    references. p is None when the worker saw too few items for the test to ever reach alpha.
    """
    rows = []
    bad = frame[frame["bad_reference"]]
    for (worker, question), group in bad.groupby(["worker", "question"], sort=True):
        real = frame[frame["worker"].eq(worker) & frame["question"].eq(question)
                     & frame["control"].eq("") & frame["part"].eq(group["part"].iloc[0])]
        x = group["value"].astype(float).to_numpy()
        y = real["value"].astype(float).to_numpy()
        p = None
        if len(y) and 1 / comb(len(x) + len(y), len(x)) < alpha:
            p = float(stats.mannwhitneyu(x, y, alternative="less").pvalue)
        rows.append({"worker": worker, "bad_reference_n": len(x), "bad_reference_p": p})
    table = pd.DataFrame(rows, columns=["worker", "bad_reference_n", "bad_reference_p"])
    # A worker with several slider questions keeps the weakest evidence (largest p).
    return table.groupby("worker", as_index=False).agg(
        bad_reference_n=("bad_reference_n", "sum"),
        bad_reference_p=("bad_reference_p", lambda s: s.max() if s.notna().any() else None),
    )


def worker_quality(frame: pd.DataFrame, rules: QualityRules | None = None) -> pd.DataFrame:
    """One row per worker with each check, a `flagged` verdict and the reasons."""
    rules = rules or QualityRules()
    if frame.empty:
        return pd.DataFrame(columns=COLUMNS)
    per = annotation_outcomes(frame)
    regular = per[per["control"].eq("")]
    attention = per[per["control"].eq("attention")]
    gold = per[per["control"].eq("gold") & per["control_passed"].notna()]
    table = pd.DataFrame({"worker": sorted(per["worker"].unique())}).set_index("worker")
    table["n_items"] = regular.groupby("worker").size()
    table["attention_n"] = attention.groupby("worker").size()
    table["attention_failures"] = attention[attention["control_passed"].eq(False)].groupby(
        "worker").size()
    table["gold_n"] = gold.groupby("worker").size()
    table[["n_items", "attention_n", "attention_failures", "gold_n"]] = table[
        ["n_items", "attention_n", "attention_failures", "gold_n"]].fillna(0).astype(int)
    table["gold_accuracy"] = gold.groupby("worker")["control_passed"].apply(
        lambda s: float(np.mean(s.astype(bool))))
    table["median_seconds"] = per.groupby("worker")["seconds"].median()
    typical = table["median_seconds"].median()
    table["too_fast"] = (table["median_seconds"] < rules.too_fast_fraction * typical).fillna(False)
    table["typical_seconds"] = typical
    table = _absolute_speed(table, per, frame, rules)
    table["straight_lining"] = table.index.isin(
        straight_liners(frame, rules.straight_lining_min_items))
    table = table.join(bad_reference_test(frame, rules.alpha).set_index("worker"))
    table["bad_reference_n"] = table["bad_reference_n"].fillna(0).astype(int)
    table["bad_reference_unreliable"] = table["bad_reference_p"].apply(
        lambda p: bool(p >= rules.alpha) if pd.notna(p) else False)
    table["reasons"] = [_reasons(row, rules) for row in table.itertuples()]
    table["flagged"] = table["reasons"].map(bool)
    # The column says whether any speed rule fired; the reasons say which one.
    table["too_fast"] = table["too_fast"] | table["below_item_floor"] | table["below_word_floor"]
    table = table.reset_index()
    return table.astype(object).where(table.notna(), None)[COLUMNS]


def _reasons(row, rules: QualityRules) -> list[str]:
    reasons = []
    if row.attention_failures >= rules.attention_failures_to_flag:
        reasons.append(f"failed {row.attention_failures} attention checks")
    if row.gold_n >= rules.min_gold and row.gold_accuracy < rules.min_gold_accuracy:
        reasons.append(f"gold accuracy {row.gold_accuracy:.0%}")
    if row.too_fast:
        reasons.append(f"too fast (median {row.median_seconds:.1f} s, under "
                       f"{rules.too_fast_fraction:.0%} of the typical worker's "
                       f"{row.typical_seconds:.1f} s)")
    if row.below_item_floor:
        reasons.append(f"too fast (median {row.median_seconds:.1f} s per item, under the "
                       f"minimum of {rules.min_seconds_per_item:g} s)")
    if row.below_word_floor:
        reasons.append(f"too fast (median {row.median_seconds_per_word:.2f} s per word, under "
                       f"the minimum of {rules.min_seconds_per_word:g} s)")
    if row.straight_lining:
        reasons.append("same answer for every item")
    if row.bad_reference_unreliable:
        reasons.append(f"bad references not scored lower (p = {row.bad_reference_p:.2f})")
    return reasons


def _absolute_speed(table: pd.DataFrame, per: pd.DataFrame, frame: pd.DataFrame,
                    rules: QualityRules) -> pd.DataFrame:
    """The researcher's absolute floors: per item, and per word of the displayed text."""
    floor = rules.min_seconds_per_item
    table["below_item_floor"] = (table["median_seconds"] < floor).fillna(False) \
        if floor is not None else False
    table["median_seconds_per_word"] = np.nan
    table["below_word_floor"] = False
    if rules.min_seconds_per_word is not None and "words" in frame.columns:
        words = frame.groupby("annotation")["words"].first()
        rate = per.set_index("annotation")["seconds"] / words.reindex(
            per["annotation"]).where(lambda w: w > 0).to_numpy()
        per_word = rate.groupby(per.set_index("annotation")["worker"]).median()
        table["median_seconds_per_word"] = per_word
        table["below_word_floor"] = (per_word < rules.min_seconds_per_word).reindex(
            table.index).fillna(False).astype(bool)
    return table
