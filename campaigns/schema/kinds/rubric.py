"""`rubric`: points per criterion, each within its own range, and the computed total."""
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from ..base import (
    ID_PATTERN,
    SQL_UNSUPPORTED,
    AnswerInvalid,
    BaseQuestion,
    MeasurementLevel,
    Strict,
    as_int,
    require_distinct,
    sql_text,
)


class Level(Strict):
    value: int
    description: str = Field(min_length=1)


class Criterion(Strict):
    id: str = Field(pattern=ID_PATTERN)
    text: str = Field(min_length=1)
    min: int = 0
    max: int = Field(ge=1)
    levels: list[Level] = Field(default_factory=list)

    @model_validator(mode="after")
    def _levels_cover_range(self):
        if self.min >= self.max:
            raise ValueError("min must be below max")
        if self.levels and sorted(lv.value for lv in self.levels) != list(
            range(self.min, self.max + 1)
        ):
            raise ValueError(f"levels must describe each value from {self.min} to {self.max} once")
        return self


class RubricQuestion(BaseQuestion):
    kind: Literal["rubric"]
    criteria: list[Criterion] = Field(min_length=1)

    measurement: ClassVar[MeasurementLevel] = "ordinal"

    @model_validator(mode="after")
    def _distinct_ids(self):
        ids = [c.id for c in self.criteria]
        require_distinct(ids, "criterion ids")
        if "total" in ids:
            raise ValueError("'total' is reserved for the computed sum")
        return self

    @property
    def max_total(self) -> int:
        return sum(c.max for c in self.criteria)

    def validate_answer(self, raw: Any, item_data: dict | None) -> dict:
        if not isinstance(raw, dict):
            raise AnswerInvalid({self.id: "Expected points for every criterion."})
        raw = {str(k): v for k, v in raw.items()}
        claimed_total = raw.pop("total", None)
        errors: dict[str, str] = {}
        known = {c.id for c in self.criteria}
        for key in sorted(set(raw) - known):
            errors[f"{self.id}.{key}"] = f"Unknown criterion {key!r}."
        cleaned: dict[str, int] = {}
        for c in self.criteria:
            value = as_int(raw.get(c.id))
            if raw.get(c.id) in (None, ""):
                errors[f"{self.id}.{c.id}"] = f"Give {c.id} a score from {c.min} to {c.max}."
            elif value is None or not c.min <= value <= c.max:
                errors[f"{self.id}.{c.id}"] = (
                    f"{c.id} takes {c.min} to {c.max} points ({raw.get(c.id)!r} given)."
                )
            else:
                cleaned[c.id] = value
        if errors:
            raise AnswerInvalid(errors)
        total = sum(cleaned.values())
        if claimed_total is not None and as_int(claimed_total) != total:
            raise AnswerInvalid(
                {f"{self.id}.total": f"The total is {total}, not {claimed_total!r}."}
            )
        return {**cleaned, "total": total}

    def atoms(self, answer: Any) -> list[tuple[str, Any]]:
        return [(c.id, answer.get(c.id)) for c in self.criteria] + [("total", answer.get("total"))]

    def parts(self, item_data: dict | None = None) -> list[str]:
        return [c.id for c in self.criteria] + ["total"]

    def sql_parts(self, answer_sql: str, parts: list[str]) -> list[tuple[str, str]]:
        # Not an object: atoms() fails and the export keeps no part; `->` gives NULL alike.
        return [(p, f"({answer_sql} -> {sql_text(p)})") for p in parts]

    def sql_atoms(self, answer_sql: str) -> str:
        rows = ", ".join(
            f"({sql_text(p)}, g.r -> {sql_text(p)}, {n})" for n, p in enumerate(self.parts())
        )
        return (
            f"SELECT v.* FROM (SELECT CASE WHEN jsonb_typeof({answer_sql}) = 'object' "  # noqa: S608 (sql_text)
            f"THEN {answer_sql} ELSE {SQL_UNSUPPORTED} END AS r) g "
            f"CROSS JOIN LATERAL (VALUES {rows}) v(part, value, ord)"
        )

    def part_measurement(self, part: str) -> MeasurementLevel:
        return "interval" if part == "total" else "ordinal"

    def form_value(self, post: Any, prefix: str) -> Any:
        answer = {c.id: post.get(f"{prefix}.{c.id}") for c in self.criteria}
        return None if all(v in (None, "") for v in answer.values()) else answer
