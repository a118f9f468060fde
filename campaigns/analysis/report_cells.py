"""Markdown cells of the evaluation report, shared by report.py and its section modules."""
from __future__ import annotations

import re

MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")
DEGENERATE_MARK = "†"


def _md(value) -> str:
    """A table cell or inline text: Markdown's special characters escaped, one line."""
    text = "–" if value is None else str(value)
    return MARKDOWN_SPECIAL.sub(r"\\\1", text).replace("\n", " ")


def _num(value, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _interval(row: dict, name: str = "") -> str:
    low, high = row.get(f"{name}ci_low"), row.get(f"{name}ci_high")
    if low is None:
        return "–"
    # An interval of zero width is not certainty: every resample gave the same value.
    return f"[{low:.3f}, {high:.3f}]" + (DEGENERATE_MARK if low == high else "")


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *["| " + " | ".join(row) + " |" for row in rows], ""]


def _label(row: dict) -> str:
    return _md(f"{row['question']}.{row['part']}" if row["part"] else row["question"])
