"""Parse item files (CSV, TSV, JSON list, JSONL) into rows, reporting problems by row and field.

Pure parsing and checking: no database access. campaigns/services/items.py stores the rows.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .schema import AnswerInvalid, TaskSchema, validate_answers
from .schema.kinds.lines import split_segments

FORMATS = ("csv", "tsv", "json", "jsonl")
RESERVED = ("id", "external_id", "system", "control", "gold", "gold_tolerance")
MAX_REPORTED_ERRORS = 100
csv.field_size_limit(10 * 1024 * 1024)


@dataclass(frozen=True)
class RowError:
    row: int | None  # 1-based data row (the header is not counted); None for the whole file
    field: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = "file" if self.row is None else f"row {self.row}"
        if self.line is not None and self.row is not None:
            where += f" (line {self.line})"
        return (
            f"{where}, {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


class ImportRejected(Exception):
    """The file was rejected as a whole; nothing was stored."""

    def __init__(self, errors: list[RowError], total: int | None = None):
        self.errors = errors[:MAX_REPORTED_ERRORS]
        self.total = total if total is not None else len(errors)
        more = self.total - len(self.errors)
        super().__init__(
            "\n".join(str(e) for e in self.errors) + (f"\n... and {more} more" if more > 0 else "")
        )


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


@dataclass
class _Collector:
    required_fields: tuple[str, ...] = ()
    errors: list[RowError] = field(default_factory=list)

    def add(self, row: int | None, fld: str, message: str, line: int | None = None) -> None:
        self.errors.append(RowError(row, fld, message, line))


def detect_format(filename: str) -> str:
    ext = filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    if ext == "txt":
        ext = "tsv"
    if ext not in FORMATS:
        raise ImportRejected(
            [RowError(None, "", f"unknown file type {ext!r}; use .csv, .tsv, .json or .jsonl")]
        )
    return ext


def decode(content: bytes) -> str:
    """UTF-8 with or without a BOM; anything else is rejected with the line it fails on."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = content[: exc.start].count(b"\n") + 1
        raise ImportRejected(
            [
                RowError(
                    None,
                    "",
                    f"not UTF-8 text: byte 0x{content[exc.start]:02x} on line {line}"
                    " (save the file as UTF-8)",
                )
            ]
        ) from None
    if not text.strip():
        raise ImportRejected([RowError(None, "", "the file is empty")])
    if "\x00" in text:  # PostgreSQL cannot store NUL characters in text or JSON
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise ImportRejected([RowError(None, "", f"a NUL character on line {line}")])
    return text


def read_records(text: str, fmt: str) -> Iterator[tuple[int, int | None, Any]]:
    """Yield (row, line, record) for each record; malformed input raises ImportRejected."""
    if fmt in ("csv", "tsv"):
        yield from _read_delimited(text, "," if fmt == "csv" else "\t")
    elif fmt == "jsonl":
        yield from _read_jsonl(text)
    else:
        yield from _read_json(text)


def _read_delimited(text: str, delimiter: str) -> Iterator[tuple[int, int | None, Any]]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader)
    except csv.Error as exc:
        raise ImportRejected([RowError(None, "", f"the header line is malformed: {exc}")]) from None
    header = [h.strip() for h in header]
    repeated = sorted({h for h in header if header.count(h) > 1})
    if repeated or "" in header:
        problem = f"repeated columns {repeated}" if repeated else "a column without a name"
        raise ImportRejected([RowError(None, "", f"the header has {problem}")])
    row = 0
    start_line = reader.line_num + 1
    try:
        for values in reader:
            if not values or (len(values) == 1 and not values[0].strip()):
                start_line = reader.line_num + 1
                continue  # blank line
            row += 1
            if len(values) != len(header):
                yield (
                    row,
                    start_line,
                    RowError(
                        row,
                        "",
                        f"{len(values)} fields, but the header has {len(header)}",
                        start_line,
                    ),
                )
            else:
                yield row, start_line, dict(zip(header, values, strict=True))
            start_line = reader.line_num + 1
    except csv.Error as exc:
        raise ImportRejected(
            [
                RowError(
                    row + 1,
                    "",
                    f"malformed {'CSV' if delimiter == ',' else 'TSV'}: {exc}",
                    reader.line_num,
                )
            ]
        ) from None


def _read_jsonl(text: str) -> Iterator[tuple[int, int | None, Any]]:
    row = 0
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        row += 1
        try:
            yield row, line_no, json.loads(line)
        except json.JSONDecodeError as exc:
            yield (
                row,
                line_no,
                RowError(row, "", f"malformed JSON: {exc.msg} at column {exc.colno}", line_no),
            )


def _read_json(text: str) -> Iterator[tuple[int, int | None, Any]]:
    try:
        records = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportRejected(
            [
                RowError(
                    None, "", f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
                )
            ]
        ) from None
    if isinstance(records, dict) and isinstance(records.get("items"), list):
        records = records["items"]
    if not isinstance(records, list):
        raise ImportRejected([RowError(None, "", "expected a JSON list of items")])
    for row, record in enumerate(records, start=1):
        yield row, None, record


def _json_value(raw: Any, row: int, line: int | None, fld: str, out: _Collector) -> Any:
    """Cells in CSV are text; JSON objects written in a cell are parsed."""
    if isinstance(raw, str):
        if not raw.strip():
            return None
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            out.add(row, fld, f"not valid JSON ({exc.msg})", line)
            return None
    return raw


def check_record(
    record: Any, row: int, line: int | None, schema: TaskSchema, out: _Collector
) -> ParsedItem | None:
    """Turn one record into a ParsedItem, or report why it cannot be one."""
    if isinstance(record, RowError):
        out.errors.append(record)
        return None
    if not isinstance(record, dict):
        out.add(row, "", "expected an object with the item's fields", line)
        return None
    n_errors = len(out.errors)
    external_id = record.get("id", record.get("external_id"))
    if external_id is None or str(external_id).strip() == "":
        out.add(row, "id", "missing: every item needs an id", line)
    elif len(str(external_id)) > 200:
        out.add(row, "id", "longer than 200 characters", line)
    data = {k: v for k, v in record.items() if k not in RESERVED}
    if isinstance(data.get("data"), dict) and len(data) == 1:
        data = dict(data["data"])
    _check_fields(data, row, line, schema, out)
    control = str(record.get("control") or "").strip().lower()
    gold = _json_value(record.get("gold"), row, line, "gold", out)
    tolerance = _json_value(record.get("gold_tolerance"), row, line, "gold_tolerance", out)
    control = _check_control(control, gold, tolerance, data, row, line, schema, out)
    if len(out.errors) > n_errors:
        return None
    system = record.get("system")
    return ParsedItem(
        row=row,
        line=line,
        external_id=str(external_id).strip(),
        system="" if system is None else str(system).strip()[:200],
        control=control,
        data=data,
        gold=gold,
        gold_tolerance=None if tolerance is None else float(tolerance),
    )


def _check_fields(data: dict, row: int, line: int | None, schema: TaskSchema, out: _Collector):
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


def parse_items(content: bytes, fmt: str, schema: TaskSchema) -> list[ParsedItem]:
    """Parse and check a whole file; raise ImportRejected with every problem found."""
    if fmt not in FORMATS:
        raise ImportRejected([RowError(None, "", f"unknown format {fmt!r}; use one of {FORMATS}")])
    text = decode(content)
    out = _Collector(required_fields=tuple(schema.item_fields))
    items: list[ParsedItem] = []
    first_row: dict[str, int] = {}
    for row, line, record in read_records(text, fmt):
        parsed = check_record(record, row, line, schema, out)
        if parsed is None:
            continue
        if parsed.external_id in first_row:
            out.add(
                row,
                "id",
                f"{parsed.external_id!r} repeats row {first_row[parsed.external_id]}",
                line,
            )
            continue
        first_row[parsed.external_id] = row
        items.append(parsed)
    if not items and not out.errors:
        out.add(None, "", "the file has no items")
    if out.errors:
        raise ImportRejected(out.errors)
    return items
