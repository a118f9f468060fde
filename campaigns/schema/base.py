"""The question-kind interface: what every kind defines, and the errors it raises."""
from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

ID_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,63}$"
MeasurementLevel = Literal["nominal", "ordinal", "interval", "ratio"]


class AnswerInvalid(Exception):
    """A worker's (or judge's) answers break the schema; `errors` maps a path to a message.

    Paths are the question id, or the question id and a part (`lines.3.rewrite`,
    `rubric.C7`), so a page can show each message next to the control at fault.
    """

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Option(Strict):
    value: str = Field(min_length=1, max_length=100)
    label: str = Field(min_length=1)
    description: str = ""


class Point(Strict):
    value: int
    label: str = Field(min_length=1)
    description: str = ""


class BaseQuestion(Strict):
    """Fields every question kind has; a kind subclasses it with its own settings."""

    id: str = Field(pattern=ID_PATTERN)
    kind: str
    text: str = Field(min_length=1)
    required: bool = True
    help: str = ""

    # Set by each kind's module.
    measurement: ClassVar[MeasurementLevel] = "nominal"

    def validate_answer(self, raw: Any, item_data: dict | None) -> Any:
        """Return the cleaned answer or raise AnswerInvalid. `raw` is never None here."""
        raise NotImplementedError

    def is_empty(self, raw: Any) -> bool:
        """Whether `raw` counts as 'not answered' (then `required` decides)."""
        return raw is None or raw == "" or raw == [] or raw == {}

    def atoms(self, answer: Any) -> list[tuple[str, Any]]:
        """The answer as atomic (part, value) pairs; part "" means the whole answer.

        Export columns are `<id>` for part "" and `<id>.<part>` otherwise.
        """
        return [("", answer)]

    def parts(self, item_data: dict | None = None) -> list[str]:
        """The atomic parts this question can produce (stable export column order)."""
        return [""]

    def sql_parts(self, answer_sql: str, parts: list[str]) -> list[tuple[str, str]] | None:
        """PostgreSQL expressions for the export's parts, mirroring atoms(): (part, jsonb SQL).

        `answer_sql` is the answer as jsonb (SQL NULL when absent). Each expression gives the
        jsonb value atoms() would give for that part, or SQL_UNSUPPORTED where atoms() would
        give something else; campaigns/exporting/sql.py renders the values as the csv writer
        does. None: this kind's answers are exported by the Python path.
        """
        if type(self).atoms is BaseQuestion.atoms:
            return [("", answer_sql)]
        return None

    def sql_atoms(self, answer_sql: str) -> str | None:
        """A PostgreSQL query of atoms(answer) as rows (part text, value jsonb, ord int).

        For csv-long. Evaluated only for an answer present and not JSON null. SQL_UNSUPPORTED
        where atoms() would fail (the Python path then writes the answer as JSON text). None:
        this kind's answers are exported by the Python path.
        """
        if type(self).atoms is BaseQuestion.atoms:
            return f"SELECT ''::text, {answer_sql}, 0"
        return None

    def part_measurement(self, part: str) -> MeasurementLevel:
        """The level of measurement of one atomic part (for agreement statistics)."""
        return self.measurement

    def form_value(self, post: Any, prefix: str) -> Any:
        """Read this question's raw answer from a submitted form (a QueryDict)."""
        value = post.get(prefix)
        return None if value in (None, "") else value


def require_distinct(values: list, what: str) -> None:
    """Raise ValueError naming the repeated values (options, points, criteria must be unique)."""
    repeated = sorted({str(v) for v in values if values.count(v) > 1})
    if repeated:
        raise ValueError(f"{what} must be distinct; repeated: {', '.join(repeated)}")


def as_int(raw: Any) -> int | None:
    """Accept 3, 3.0, "3" and "3.0" as the integer 3; anything else is None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    if isinstance(raw, str) and re.fullmatch(r"\s*-?\d+(\.0+)?\s*", raw):
        return int(float(raw))
    return None


def as_number(raw: Any) -> float | None:
    """Accept ints, floats and numeric strings (finite); anything else is None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        value = float(raw)
    elif isinstance(raw, str):
        try:
            value = float(raw.strip())
        except ValueError:
            return None
    else:
        return None
    if value != value or value in (float("inf"), float("-inf")):
        return None
    return value


# In a sql_parts() expression: the export falls back to the Python path for the rows at hand.
SQL_UNSUPPORTED = "(pg_temp.export_sql_unsupported()::jsonb)"


def sql_text(value: str) -> str:
    """A PostgreSQL string literal (for names taken from a schema in sql_parts())."""
    return "'" + value.replace("'", "''") + "'"
