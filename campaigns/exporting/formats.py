"""One writer per export format, each streaming chunks of source rows to a text stream."""
from __future__ import annotations

import csv
import io
from typing import ClassVar, TextIO

import orjson

from .cells import formula_in_csv, neutralise
from .columns import ANSWERS, LONG_COLUMNS, WHOLE_PART, ColumnPlan
from .source import judge_details

BOOL_TEXT = {True: "true", False: "false", None: None}
SYSTEM_AT = 2  # the meta cells' `system` (META_COLUMNS)


class ExportWriter:
    """Writes a header (begin), chunks of SOURCE_FIELDS tuples, and a footer (end)."""

    extension: ClassVar[str]
    content_type: ClassVar[str]

    def __init__(self, stream: TextIO, plan: ColumnPlan):
        self.stream = stream
        self.plan = plan

    def begin(self) -> None:
        pass

    def write_chunk(self, rows: list[tuple]) -> None:
        raise NotImplementedError

    def end(self) -> None:
        pass

    def write_rows(self, rows: list[list]) -> None:
        """CSV rows with formula-looking text neutralised, formatted per chunk, written at once.

        Checking every cell in Python would cost more than formatting the CSV; instead the
        formatted text is searched once (in C) for a field starting like a formula. Only when
        there is one (or a look-alike inside a quoted field) are the cells checked one by one.
        """
        text = _csv_text(rows)
        if formula_in_csv(text):
            text = _csv_text(
                [[neutralise(v) if type(v) is str else v for v in row] for row in rows]
            )
        self.stream.write(text)


def _csv_text(rows: list[list]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue()


class CsvWriter(ExportWriter):
    """csv: one row per annotation, meta columns then a column per atomic answer part."""

    extension, content_type = "csv", "text/csv"

    def begin(self) -> None:
        self.write_rows([self.plan.meta_columns + self.plan.answer_columns])

    def write_chunk(self, rows: list[tuple]) -> None:
        meta, wide, passed = self.plan.meta, self.plan.wide, self.plan.control_passed_at
        loads = orjson.loads
        out = []
        for row in rows:
            cells = meta(row)
            cells[passed] = BOOL_TEXT[cells[passed]]
            cells += wide(loads(row[ANSWERS]))
            out.append(cells)
        self.write_rows(out)


class CsvLongWriter(ExportWriter):
    """csv-long: one row per atomic judgment (tidy form): meta columns, question, part, value.
    A question asked per output gives one row per output, its system in `system`."""

    extension, content_type = "csv", "text/csv"

    def begin(self) -> None:
        self.write_rows([self.plan.meta_columns + list(LONG_COLUMNS)])

    def write_chunk(self, rows: list[tuple]) -> None:
        passed = self.plan.control_passed_at
        out = []
        for row in rows:
            meta = self.plan.meta(row)
            meta[passed] = BOOL_TEXT[meta[passed]]
            for question, part, value, system in self.plan.atoms(orjson.loads(row[ANSWERS])):
                if system is None:
                    out.append([*meta, question, part or WHOLE_PART, value])
                else:
                    own = list(meta)
                    own[SYSTEM_AT] = system
                    out.append([*own, question, part or WHOLE_PART, value])
        self.write_rows(out)


class JsonlWriter(ExportWriter):
    """jsonl: one JSON object per line, the meta fields and the nested answers."""

    extension, content_type = "jsonl", "application/x-ndjson"

    def begin(self) -> None:
        self.keys = self.plan.meta_columns

    def records(self, rows: list[tuple]) -> list[str]:
        # The answers are stored JSON: spliced in as read, never parsed and re-encoded.
        keys, meta, dumps = self.keys, self.plan.meta, orjson.dumps
        judges = self._judges(rows)
        return [
            f'{dumps(_provenance_spliced(dict(zip(keys, meta(row), strict=True)))).decode()[:-1]},'
            f'{judges.get(row[0], "")}"answers":{row[ANSWERS]}}}'
            for row in rows
        ]

    @staticmethod
    def _judges(rows: list[tuple]) -> dict[int, str]:
        """`"judge":{...},` for LLM judges' rows: name, and for a judge run's answers the
        model, prompt hash and raw output (imported judgments have none)."""
        llm = {row[0]: row[6] for row in rows if row[5] == "llm"}
        details = judge_details(list(llm))
        empty = {"model": None, "prompt_hash": None, "raw_output": None}
        return {a: '"judge":' + orjson.dumps(details.get(a) or {"name": name, **empty}
                                             ).decode() + ","
                for a, name in llm.items()}

    def write_chunk(self, rows: list[tuple]) -> None:
        if rows:
            self.stream.write("\n".join(self.records(rows)) + "\n")


class JsonWriter(JsonlWriter):
    """json: one array of the jsonl objects, written element by element (never held whole)."""

    extension, content_type = "json", "application/json"

    def begin(self) -> None:
        super().begin()
        self.stream.write("[")
        self.first = True

    def write_chunk(self, rows: list[tuple]) -> None:
        if not rows:
            return
        self.stream.write(("\n" if self.first else ",\n") + ",\n".join(self.records(rows)))
        self.first = False

    def end(self) -> None:
        self.stream.write("]\n" if self.first else "\n]\n")


FORMATS: dict[str, type[ExportWriter]] = {
    "csv": CsvWriter,
    "csv-long": CsvLongWriter,
    "jsonl": JsonlWriter,
    "json": JsonWriter,
}


def writer_for(fmt: str, stream: TextIO, plan: ColumnPlan) -> ExportWriter:
    return FORMATS[fmt](stream, plan)


def _provenance_spliced(record: dict) -> dict:
    """jsonl's `provenance` as the JSON object it was read as (text), or {} when empty."""
    text = record.get("provenance")
    record["provenance"] = orjson.Fragment(text) if text else {}
    return record
