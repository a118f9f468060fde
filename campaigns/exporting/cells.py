"""Cell values for CSV: formula neutralisation, and None/bool/datetime/JSON rendered as text."""
import json
import re
from datetime import datetime
from typing import Any

# A cell starting with one of these is run as a formula by Excel, LibreOffice or Sheets.
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
FORMULA_START = frozenset(FORMULA_TRIGGERS)
# ... unless the whole cell is a plain number ("-3", "+1.5e3"): a spreadsheet reads that as data.
PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def neutralise(text: str) -> str:
    """Prefix a formula-looking cell with a single quote so a spreadsheet shows it as text."""
    if text and text[0] in FORMULA_TRIGGERS and not PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


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


def json_value(value: Any) -> Any:
    """json.dumps's `default`: datetimes as ISO 8601 text."""
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
