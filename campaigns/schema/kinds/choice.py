"""`choice`: one option of a nominal set."""
import random
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from ..base import (
    AnswerInvalid,
    AnswerReader,
    BaseQuestion,
    ChartSpec,
    MeasurementLevel,
    Option,
    choices,
    described,
    prompt_heading,
    require_distinct,
)


class ChoiceQuestion(BaseQuestion):
    kind: Literal["choice"]
    options: list[Option] = Field(min_length=2)

    measurement: ClassVar[MeasurementLevel] = "nominal"
    template: ClassVar[str] = "campaigns/questions/choice.html"

    @model_validator(mode="after")
    def _distinct_values(self):
        require_distinct([o.value for o in self.options], "option values")
        return self

    def validate_answer(self, raw: Any, item_data: dict | None) -> str:
        values = [o.value for o in self.options]
        if not isinstance(raw, str) or raw not in values:
            raise AnswerInvalid({self.id: "Choose one of the options: " + ", ".join(values) + "."})
        return raw

    def widget(self, value: Any, item_data: dict | None, errors: dict[str, str]) -> dict:
        return {"choices": choices(self.options, value)}

    def rename_value(self, answer: Any, old: str, new: str) -> Any:
        return new if answer == old else answer

    def example_answer(self, item_data: dict | None, rng: random.Random) -> str:
        return rng.choice(self.options).value

    def dashboard_rows(self, reader: AnswerReader) -> list:
        return reader.values(self.id)

    def dashboard_charts(self) -> list[ChartSpec]:
        return [ChartSpec(self.text, [(o.value, o.label) for o in self.options])]

    def prompt_section(self, item_data: dict | None) -> str:
        options = "\n".join(described(o.value, o.label, o.description) for o in self.options)
        return f"{prompt_heading(self)}\nChoose one option:\n{options}"

    def prompt_answer(self, item_data: dict | None) -> str:
        return "one of the strings " + ", ".join(f'"{o.value}"' for o in self.options)

    def json_schema(self, item_data: dict | None) -> dict:
        return {"type": "string", "enum": [o.value for o in self.options]}
