"""`likert`: one integer from an ordered scale of labelled, described points."""
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from ..base import AnswerInvalid, BaseQuestion, MeasurementLevel, Point, as_int, require_distinct


class LikertQuestion(BaseQuestion):
    kind: Literal["likert"]
    points: list[Point] = Field(min_length=2, max_length=11)

    measurement: ClassVar[MeasurementLevel] = "ordinal"

    @model_validator(mode="after")
    def _distinct_values(self):
        require_distinct(self.values, "point values")
        return self

    @property
    def values(self) -> list[int]:
        return [p.value for p in self.points]

    def validate_answer(self, raw: Any, item_data: dict | None) -> int:
        value = as_int(raw)
        if value is None or value not in self.values:
            allowed = ", ".join(str(v) for v in self.values)
            raise AnswerInvalid({self.id: f"Choose one of {allowed}."})
        return value
