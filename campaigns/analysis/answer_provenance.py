"""Flags on free-text answers from how they came to be (pure Python: the pages use it too).

Each stored record (Annotation.provenance, bounded by pages/answer_provenance.py) describes one
free-text answer: `chars` (the length of the text the server received), `typed` and `pasted`
characters, `pastes` (paste and drop events) and `ms` (from the input's first focus to the
save). Two rules, stated with their thresholds in docs/analysis.md:

- mostly pasted: at least MOSTLY_PASTED_SHARE of the answer's characters were pasted;
- typed faster than a person types: the characters typed, over the time from first focus to
  the save, exceed MAX_CHARS_PER_SECOND. The time includes reading, thinking and pauses, so a
  person's measured rate is below their typing speed; the bound is above the fastest
  sustained typing recorded.

Answers shorter than MIN_CHARS are never flagged: a pasted name or a quick "ok" says little.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

__all__ = ["FLAGS", "MAX_CHARS_PER_SECOND", "MIN_CHARS", "MOSTLY_PASTED", "MOSTLY_PASTED_SHARE",
           "TYPED_TOO_FAST", "add_to_quality", "answer_flags", "flag_counts", "flag_reasons"]

MIN_CHARS = 20
MOSTLY_PASTED_SHARE = 0.5
# 200 words a minute of five characters: above the fastest sustained typing on record (about
# 150 words a minute over 50 minutes, 212 in bursts) and twice the fast end of 168,000
# typists measured online (Dhakal et al. 2018, "Observations on Typing from 136 Million
# Keystrokes", CHI: mean 52 words a minute, the fastest about 120).
MAX_CHARS_PER_SECOND = 200 * 5 / 60

MOSTLY_PASTED, TYPED_TOO_FAST = "mostly_pasted", "typed_too_fast"
FLAGS = {MOSTLY_PASTED: "mostly pasted", TYPED_TOO_FAST: "typed faster than a person types"}


def _number(record: dict, key: str) -> float:
    value = record.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def answer_flags(record: Any) -> list[str]:
    """The flags (MOSTLY_PASTED, TYPED_TOO_FAST) one free-text answer's record raises."""
    if not isinstance(record, dict):
        return []
    chars = _number(record, "chars")
    if chars < MIN_CHARS:
        return []
    flags = []
    if min(_number(record, "pasted"), chars) >= MOSTLY_PASTED_SHARE * chars:
        flags.append(MOSTLY_PASTED)
    typed, seconds = _number(record, "typed"), _number(record, "ms") / 1000
    if typed >= MIN_CHARS and typed > MAX_CHARS_PER_SECOND * max(seconds, 1e-3):
        flags.append(TYPED_TOO_FAST)
    return flags


def flag_counts(rows: Iterable[tuple[Any, Any]]) -> dict[Any, Counter]:
    """{key: Counter(flag -> free-text answers raising it)} from (key, provenance) rows, a
    provenance being an annotation's {answer path: record}; keys without a flag are left out."""
    counts: dict[Any, Counter] = {}
    for key, provenance in rows:
        if not isinstance(provenance, dict):
            continue
        for record in provenance.values():
            for flag in answer_flags(record):
                counts.setdefault(key, Counter())[flag] += 1
    return counts


def flag_reasons(counts: Counter) -> list[str]:
    """Reasons for a review, as the quality table words them."""
    reasons = []
    for flag, words in FLAGS.items():
        n = counts.get(flag, 0)
        if n:
            reasons.append(f"{n} free-text answer{'s' if n != 1 else ''} {words}")
    return reasons


def add_to_quality(table, key: str, counts: dict[Any, Counter]):
    """The quality table (a DataFrame with `key`, `reasons` and `flagged`) with a column per
    flag (answers raising it) and their reasons added: a flagged answer is a reason to look."""
    table = table.copy()
    for flag in FLAGS:
        table[flag] = [int(counts.get(k, Counter()).get(flag, 0)) for k in table[key]]
    added = [flag_reasons(counts.get(k, Counter())) for k in table[key]]
    table["reasons"] = [list(reasons or []) + more
                        for reasons, more in zip(table["reasons"], added, strict=True)]
    table["flagged"] = [bool(flagged) or bool(more)
                        for flagged, more in zip(table["flagged"], added, strict=True)]
    return table
