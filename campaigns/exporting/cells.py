"""Cell values for CSV: formula neutralisation, and None/bool/datetime/JSON rendered as text."""
import json
import re
from datetime import datetime
from typing import Any

# A cell starting with one of these is run as a formula by Excel, LibreOffice or Sheets.
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
# ... unless the whole cell is a plain number ("-3", "+1.5e3"): a spreadsheet reads that as data.
PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def neutralise(text: str) -> str:
    """Prefix a formula-looking cell with a single quote so a spreadsheet shows it as text."""
    if text and text[0] in FORMULA_TRIGGERS and not PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


# In formatted CSV text: a field starting like a formula, right after a delimiter or a line break,
# maybe behind an opening quote (inside a quoted field a look-alike may also match: only a hint).
# The text's very first field is checked by formula_in_csv. (A leading alternative such as
# `\A|` would make the search several times slower.)
FORMULA_AT_FIELD_START = re.compile(r'[,\n]"?[=+\-@\t\r]')
FORMULA_START = frozenset(FORMULA_TRIGGERS)


def formula_in_csv(text: str) -> bool:
    """Whether some field of this CSV text may start like a formula (False: surely none)."""
    first = text[1:2] if text[:1] == '"' else text[:1]
    return first in FORMULA_START or FORMULA_AT_FIELD_START.search(text) is not None


def csv_cell(value: Any) -> Any:
    """One CSV cell: numbers stay numbers, text is neutralised, None is empty."""
    kind = type(value)
    if kind is int or kind is float:
        return value
    if kind is str:
        return neutralise(value) if value and value[0] in FORMULA_TRIGGERS else value
    if value is None:
        return ""
    if kind is bool:
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, int | float):
        return value
    return neutralise(json.dumps(value, ensure_ascii=False, sort_keys=True))
