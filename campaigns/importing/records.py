"""Read item and judgment files (CSV, TSV, JSON list, JSONL) into records, with row numbers.

Pure parsing: no database access. Problems are RowErrors naming the row, the field and why.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

# "tsv-raw": tab-separated without quoting. Every tab separates, every line break ends a row and
# a double quote is text, as in research TSVs written without quoting (e.g. MLQE-PE); a cell
# cannot hold a tab or a line break.
FORMATS = ("csv", "tsv", "tsv-raw", "json", "jsonl")
RAW_TSV = "tsv-raw"
MAX_REPORTED_ERRORS = 100
# JSON the database and every later reader handle safely: nesting bounded well below
# Python's recursion limit, integers of a sane length, no NaN or Infinity (not JSON, and
# PostgreSQL's jsonb refuses them).
MAX_JSON_DEPTH = 64
MAX_JSON_INT_DIGITS = 100
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
class Collector:
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


# Files that are not text at all, recognised by their first bytes.
_COMPRESSED = ((b"\x1f\x8b", "gzip-compressed"), (b"PK\x03\x04", "a ZIP archive"),
               (b"BZh", "bzip2-compressed"), (b"\xfd7zXZ\x00", "xz-compressed"),
               (b"(\xb5/\xfd", "zstd-compressed"))
# Byte-order marks, longest first (UTF-32's little-endian mark starts like UTF-16's).
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
         (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


def _file_error(message: str) -> ImportRejected:
    return ImportRejected([RowError(None, "", message)])


def _text_encoding(content: bytes) -> tuple[str, str]:
    """(codec, name) for decoding `content`: UTF-8 (BOM or not), or UTF-16/32 with a BOM.

    A compressed file, or UTF-16 without a BOM (every other byte NUL), is refused with a
    message that names it rather than one about its NUL bytes.
    """
    for magic, what in _COMPRESSED:
        if content.startswith(magic):
            return "", (f"the file is {what}, not text: decompress it and upload the "
                        ".csv, .tsv, .json or .jsonl file inside")
    for bom, codec in _BOMS:
        if content.startswith(bom):
            return codec, codec.upper()
    head = content[:4096]
    if len(head) >= 4 and (head[1::2].count(0) > len(head) // 4 or
                           head[0::2].count(0) > len(head) // 4):
        return "", ("the file looks like UTF-16 text without a byte-order mark: "
                    "save it as UTF-8 (or as UTF-16 with a BOM)")
    return "utf-8-sig", "UTF-8"


def decode(content: bytes) -> str:
    """UTF-8 with or without a BOM, or UTF-16/UTF-32 with a BOM; anything else is rejected
    with what the file is (compressed) or the line it fails on."""
    codec, name = _text_encoding(content)
    if not codec:
        raise _file_error(name)
    try:
        text = content.decode(codec)
    except UnicodeDecodeError as exc:
        if codec != "utf-8-sig":
            raise _file_error(f"not valid {name} text after its byte-order mark "
                              f"(at byte {exc.start}); save the file as UTF-8") from None
        line = content[: exc.start].count(b"\n") + 1
        raise _file_error(f"not UTF-8 text: byte 0x{content[exc.start]:02x} on line {line}"
                          " (save the file as UTF-8)") from None
    text = text.removeprefix("\ufeff")  # UTF-16/32 codecs drop their BOM; this is belt and braces
    if not text.strip():
        raise _file_error("the file is empty")
    if "\x00" in text:  # PostgreSQL cannot store NUL characters in text or JSON
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise _file_error(f"a NUL character on line {line}")
    return text


class JsonRefused(ValueError):
    """Well-formed JSON that is refused (too deep, a huge integer, NaN or Infinity)."""

    msg = ""


def _refuse(message: str) -> JsonRefused:
    exc = JsonRefused(message)
    exc.msg = message
    return exc


def _no_constant(name: str) -> Any:
    raise _refuse(f"{name} is not a JSON value (write null or a string)")


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_JSON_INT_DIGITS:
        raise _refuse(f"an integer of {digits} digits (at most {MAX_JSON_INT_DIGITS})")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _refuse(f"the number {text[:30]} is out of range")
    return value


def _depth(value: Any) -> int:
    """How deeply `value` nests lists and objects (iteratively: no recursion limit to hit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, depth)
            if depth > MAX_JSON_DEPTH:
                break
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)
    return deepest


def load_json(text: str, *, depth_offset: int = 0) -> Any:
    """json.loads that raises json.JSONDecodeError or JsonRefused, never anything else."""
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_int=_bounded_int,
                           parse_float=_finite_float)
    except RecursionError:
        raise _refuse(f"nested deeper than {MAX_JSON_DEPTH} levels") from None
    if _depth(value) + depth_offset > MAX_JSON_DEPTH:
        raise _refuse(f"nested deeper than {MAX_JSON_DEPTH} levels")
    return value


def read_records(text: str, fmt: str) -> Iterator[tuple[int, int | None, Any]]:
    """Yield (row, line, record) for each record; malformed input raises ImportRejected."""
    if fmt in ("csv", "tsv", RAW_TSV):
        yield from _read_delimited(text, "," if fmt == "csv" else "\t", quoted=fmt != RAW_TSV)
    elif fmt == "jsonl":
        yield from _read_jsonl(text)
    else:
        yield from _read_json(text)


def _read_delimited(text: str, delimiter: str, *, quoted: bool = True
                    ) -> Iterator[tuple[int, int | None, Any]]:
    quoting = csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True,
                        quoting=quoting)
    name = "CSV" if delimiter == "," else "TSV"
    # A quoted TSV that breaks on a double quote is usually one written without quoting.
    hint = _RAW_TSV_HINT if delimiter == "\t" and quoted and '"' in text else ""
    try:
        header = next(reader)
    except csv.Error as exc:
        message = f"the header line is malformed: {exc}{hint}"
        raise ImportRejected([RowError(None, "", message)]) from None
    if len(header) > settings.IMPORT_MAX_COLUMNS:
        raise ImportRejected([RowError(
            None, "", f"the header has {len(header)} columns; at most "
            f"{settings.IMPORT_MAX_COLUMNS} are allowed (IMPORT_MAX_COLUMNS)")])
    header = [h.strip() for h in header]
    counts = Counter(header)  # one pass: the check stays linear in the number of columns
    repeated = sorted(h for h, n in counts.items() if n > 1)
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
                        f"{len(values)} fields, but the header has {len(header)}{hint}",
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
                    f"malformed {name}: {exc}{hint}",
                    reader.line_num,
                )
            ]
        ) from None


_RAW_TSV_HINT = (". If double quotes in this file are plain text (a TSV written without "
                 f"quoting), import it with the format {RAW_TSV}")


def _read_jsonl(text: str) -> Iterator[tuple[int, int | None, Any]]:
    row = 0
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        row += 1
        try:
            yield row, line_no, load_json(line)
        except json.JSONDecodeError as exc:
            yield (
                row,
                line_no,
                RowError(row, "", f"malformed JSON: {exc.msg} at column {exc.colno}", line_no),
            )
        except JsonRefused as exc:
            yield row, line_no, RowError(row, "", f"refused JSON: {exc.msg}", line_no)


def _read_json(text: str) -> Iterator[tuple[int, int | None, Any]]:
    try:
        records = load_json(text, depth_offset=-1)  # the list of records is one level
    except json.JSONDecodeError as exc:
        raise ImportRejected(
            [
                RowError(
                    None, "", f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
                )
            ]
        ) from None
    except JsonRefused as exc:
        raise ImportRejected([RowError(None, "", f"refused JSON: {exc.msg}")]) from None
    if isinstance(records, dict) and isinstance(records.get("items"), list):
        records = records["items"]
    if not isinstance(records, list):
        raise ImportRejected([RowError(None, "", "expected a JSON list of items")])
    for row, record in enumerate(records, start=1):
        yield row, None, record


def json_cell(raw: Any, row: int, line: int | None, fld: str, out: Collector) -> Any:
    """Cells in CSV are text; JSON objects written in a cell are parsed."""
    if isinstance(raw, str):
        if not raw.strip():
            return None
        try:
            return load_json(raw)
        except (json.JSONDecodeError, JsonRefused) as exc:
            out.add(row, fld, f"not valid JSON ({exc.msg})", line)
            return None
    return raw
