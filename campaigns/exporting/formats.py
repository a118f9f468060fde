"""One writer per export format, each streaming chunks of source rows to a text stream."""
from __future__ import annotations

import csv
import json
from typing import Any, ClassVar, TextIO

from .cells import csv_cell, json_value
from .columns import ANSWERS, LONG_COLUMNS, ColumnPlan


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


class CsvWriter(ExportWriter):
    """csv: one row per annotation, meta columns then a column per atomic answer part."""

    extension, content_type = "csv", "text/csv"

    def begin(self) -> None:
        self.csv = csv.writer(self.stream, lineterminator="\n")
        self.csv.writerow(self.plan.meta_columns + self.plan.answer_columns)

    def write_chunk(self, rows: list[tuple]) -> None:
        meta, wide = self.plan.meta, self.plan.wide
        self.csv.writerows(
            [csv_cell(c) for c in meta(row) + wide(row[ANSWERS])] for row in rows
        )


class CsvLongWriter(ExportWriter):
    """csv-long: one row per atomic judgment (tidy form): meta columns, question, part, value."""

    extension, content_type = "csv", "text/csv"

    def begin(self) -> None:
        self.csv = csv.writer(self.stream, lineterminator="\n")
        self.csv.writerow(self.plan.meta_columns + list(LONG_COLUMNS))

    def write_chunk(self, rows: list[tuple]) -> None:
        out = []
        for row in rows:
            meta = [csv_cell(c) for c in self.plan.meta(row)]
            for question, part, value in self.plan.atoms(row[ANSWERS]):
                out.append([*meta, question, csv_cell(part), csv_cell(value)])
        self.csv.writerows(out)


class JsonlWriter(ExportWriter):
    """jsonl: one JSON object per line, the meta fields and the nested answers."""

    extension, content_type = "jsonl", "application/x-ndjson"

    def begin(self) -> None:
        self.keys = self.plan.meta_columns

    def record(self, row: tuple) -> str:
        obj: dict[str, Any] = dict(zip(self.keys, self.plan.meta(row), strict=True))
        obj["answers"] = row[ANSWERS]
        return json.dumps(obj, ensure_ascii=False, default=json_value)

    def write_chunk(self, rows: list[tuple]) -> None:
        self.stream.write("".join(self.record(row) + "\n" for row in rows))


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
        lead = "\n" if self.first else ",\n"
        self.first = False
        self.stream.write(lead + ",\n".join(self.record(row) for row in rows))

    def end(self) -> None:
        self.stream.write("\n]\n" if not self.first else "]\n")


FORMATS: dict[str, type[ExportWriter]] = {
    "csv": CsvWriter,
    "csv-long": CsvLongWriter,
    "jsonl": JsonlWriter,
    "json": JsonWriter,
}


def writer_for(fmt: str, stream: TextIO, plan: ColumnPlan) -> ExportWriter:
    return FORMATS[fmt](stream, plan)
