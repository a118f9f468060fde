"""Check item records against a campaign's schema (fields, control items, gold answers).

Pure checking: no database access. campaigns/services/items.py stores the rows.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..schema import AnswerInvalid, TaskSchema, validate_answers
from ..schema.images import image_problem
from ..schema.kinds.lines import split_segments
from ..schema.outputs import outputs_from_columns
from .conversations import check_transcripts, hh_rlhf_record, read_chat_fields
from .records import FORMATS, Collector, ImportRejected, RowError, decode, json_cell, read_records

RESERVED = ("id", "external_id", "system", "control", "gold", "gold_tolerance")


@dataclass
class ParsedItem:
    row: int
    line: int | None
    external_id: str
    system: str
    control: str
    data: dict[str, Any]
    gold: dict | None = None
    gold_tolerance: float | None = None



def check_record(
    record: Any, row: int, line: int | None, schema: TaskSchema, out: Collector,
    transcripts: str = "messages",
) -> ParsedItem | None:
    """Turn one record into a ParsedItem, or report why it cannot be one (conversations read
    as `transcripts` says: importing/conversations.py)."""
    if isinstance(record, RowError):
        out.errors.append(record)
        return None
    if not isinstance(record, dict):
        out.add(row, "", "expected an object with the item's fields", line)
        return None
    record = hh_rlhf_record(outputs_from_columns(record), row, transcripts)
    n_errors = len(out.errors)
    external_id = record.get("id", record.get("external_id"))
    if external_id is None or str(external_id).strip() == "":
        out.add(row, "id", "missing: every item needs an id", line)
    elif len(str(external_id)) > 200:
        out.add(row, "id", "longer than 200 characters", line)
    elif problem := invisible_character(str(external_id)):
        out.add(row, "id", problem, line)
    system = record.get("system")
    system = "" if system is None else str(system).strip()
    if len(system) > 200:
        out.add(row, "system", f"{len(system)} characters; at most 200", line)
    elif problem := invisible_character(system):
        out.add(row, "system", problem, line)
    data = {k: v for k, v in record.items() if k not in RESERVED}
    if isinstance(data.get("data"), dict) and len(data) == 1:
        data = dict(data["data"])
    read_chat_fields(data, row, line, schema, transcripts, out)
    _check_fields(data, row, line, schema, out)
    control = str(record.get("control") or "").strip().lower()
    gold = json_cell(record.get("gold"), row, line, "gold", out)
    tolerance = json_cell(record.get("gold_tolerance"), row, line, "gold_tolerance", out)
    control = _check_control(control, gold, tolerance, data, row, line, schema, out)
    if len(out.errors) > n_errors:
        return None
    return ParsedItem(
        row=row,
        line=line,
        external_id=str(external_id).strip(),
        system=system,
        control=control,
        data=data,
        gold=gold,
        gold_tolerance=None if tolerance is None else float(tolerance),
    )


def invisible_character(value: str) -> str:
    """Why `value` cannot be an id or a system name, or '': it holds a control character (C0,
    DEL, C1; a tab or a line break too) or an invisible format character such as a bidi
    override (U+202E), which would make two different ids look alike or reorder a page."""
    for char in value:
        if unicodedata.category(char) in ("Cc", "Cf"):
            name = unicodedata.name(char, "a control character")
            return (f"contains U+{ord(char):04X} ({name}); ids and system names must be "
                    "visible text")
    return ""


def _check_fields(data: dict, row: int, line: int | None, schema: TaskSchema, out: Collector):
    for name in out.required_fields:
        value = data.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            out.add(row, name, "missing or empty (the task shows this field)", line)
    for q in schema.questions:
        for name, problem in q.prepare_item(data).items():
            out.add(row, name, problem, line)
    for d in schema.display:
        if d.format == "lines" and isinstance(data.get(d.field), str):
            data[d.field] = split_segments(data[d.field], d.split) or data[d.field]
        if d.format == "image" and data.get(d.field) not in (None, ""):
            problem = image_problem(data[d.field])
            if problem:
                out.add(row, d.field, problem, line)


def _check_control(control, gold, tolerance, data, row, line, schema, out) -> str:
    if control not in ("", "attention", "gold"):
        out.add(row, "control", f"{control!r} is not one of: (empty), attention, gold", line)
        return control
    if gold is not None and not control:
        control = "gold"
    if control and gold is None:
        out.add(row, "gold", f"a {control} item needs expected answers", line)
    elif gold is not None:
        if not isinstance(gold, dict) or not gold:
            out.add(row, "gold", "expected an object {question_id: answer}", line)
        else:
            try:
                validate_answers(schema, gold, data, partial=True)
            except AnswerInvalid as exc:
                for path, message in exc.errors.items():
                    out.add(row, f"gold.{path}" if path else "gold", message, line)
    if tolerance is not None and (
        isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or tolerance < 0
    ):
        out.add(row, "gold_tolerance", "expected a number >= 0", line)
    return control


def parse_items(
    content: bytes, fmt: str, schema: TaskSchema,
    existing_ids: Callable[[list[str]], set[str]] | None = None,
    transcripts: str = "messages",
) -> list[ParsedItem]:
    """Parse and check a whole file; raise ImportRejected with every problem found.

    `existing_ids(ids)` answers which of the file's ids are taken already (the caller's
    database); they are reported in the same pass as every other problem, by row.
    """
    if fmt not in FORMATS:
        raise ImportRejected([RowError(None, "", f"unknown format {fmt!r}; use one of {FORMATS}")])
    transcripts = check_transcripts(transcripts)
    text = decode(content)
    out = Collector(required_fields=tuple(schema.item_fields))
    items: list[ParsedItem] = []
    first_row: dict[str, tuple[int, int | None]] = {}
    for row, line, record in read_records(text, fmt):
        parsed = check_record(record, row, line, schema, out, transcripts)
        external_id = parsed.external_id if parsed is not None else _record_id(record)
        if external_id is None:
            continue
        if external_id in first_row:
            out.add(row, "id", f"{external_id!r} repeats row {first_row[external_id][0]}", line)
            continue
        first_row[external_id] = (row, line)
        if parsed is not None:
            items.append(parsed)
    if existing_ids is not None and first_row:
        for taken in sorted(existing_ids(list(first_row)), key=lambda i: first_row[i][0]):
            row, line = first_row[taken]
            out.add(row, "id", f"{taken!r} already exists in this campaign", line)
    if not items and not out.errors:
        out.add(None, "", "the file has no items")
    if out.errors:
        out.errors.sort(key=lambda e: -1 if e.row is None else e.row)  # stable: row order kept
        raise ImportRejected(out.errors)
    return items


def _record_id(record: Any) -> str | None:
    """The row's id as check_record() reads it, or None when it has none usable."""
    if not isinstance(record, dict):
        return None
    external_id = record.get("id", record.get("external_id"))
    if external_id is None or not str(external_id).strip() or len(str(external_id)) > 200:
        return None
    return str(external_id).strip()
