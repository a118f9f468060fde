"""`choice`: one option of a nominal set."""
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from ..base import AnswerInvalid, BaseQuestion, MeasurementLevel, Option, require_distinct


class ChoiceQuestion(BaseQuestion):
    kind: Literal["choice"]
    options: list[Option] = Field(min_length=2)

    measurement: ClassVar[MeasurementLevel] = "nominal"

    @model_validator(mode="after")
    def _distinct_values(self):
        require_distinct([o.value for o in self.options], "option values")
        return self

    def validate_answer(self, raw: Any, item_data: dict | None) -> str:
        values = [o.value for o in self.options]
        if not isinstance(raw, str) or raw not in values:
            raise AnswerInvalid({self.id: "Choose one of the options: " + ", ".join(values) + "."})
        return raw
