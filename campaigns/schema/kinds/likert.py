"""`likert`: one integer from an ordered scale of labelled, described points."""
import random
from typing import Any, ClassVar, Literal

from django.utils.translation import gettext
from pydantic import Field, model_validator

from ..base import (
    AnswerInvalid,
    AnswerReader,
    BaseQuestion,
    ChartSpec,
    MeasurementLevel,
    Point,
    as_int,
    choices,
    described,
    prompt_heading,
    require_distinct,
)
from ..contract import Capability, KindExample


class LikertQuestion(BaseQuestion):
    kind: Literal["likert"]
    points: list[Point] = Field(min_length=2, max_length=11)

    measurement: ClassVar[MeasurementLevel] = "ordinal"
    template: ClassVar[str] = "campaigns/questions/likert.html"
    rates_one_text: ClassVar[bool] = True
    capabilities: ClassVar[frozenset[Capability]] = frozenset({
        Capability.AGREEMENT, Capability.TALLIED, Capability.LLM_JUDGE, Capability.DASHBOARD})
    example: ClassVar[KindExample] = KindExample(
        settings={"points": [{"value": 1, "label": "bad"}, {"value": 2, "label": "okay"},
                             {"value": 3, "label": "good"}]},
        valid=[3, "2", 1.0], invalid=[4, "good", True])
    # No script: number keys are declared in the template (data-key) and handled by form.js.

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
            raise AnswerInvalid({self.id: gettext("Choose one of %(options)s.") % {
                "options": allowed}})
        return value

    def widget(self, value: Any, item_data: dict | None, errors: dict[str, str]) -> dict:
        shown = choices(self.points, value)
        for c in shown:  # "1 (low)" shows as the value badge and "(low)"; "terrible" as is
            label = c["option"].label
            c["label"] = label[len(c["value"]):].strip() if label.startswith(c["value"]) else label
        return {"choices": shown, "described": any(p.description for p in self.points)}

    def example_answer(self, item_data: dict | None, rng: random.Random) -> int:
        return rng.choice(self.points).value

    def dashboard_rows(self, reader: AnswerReader) -> list:
        return reader.values(self.id)

    def dashboard_charts(self) -> list[ChartSpec]:
        return [ChartSpec(self.text, [
            (str(p.value), f"{p.value} {p.label}" if p.label != str(p.value) else p.label)
            for p in self.points])]

    def prompt_section(self, item_data: dict | None) -> str:
        points = "\n".join(described(p.value, p.label, p.description) for p in self.points)
        return f"{prompt_heading(self)}\nChoose one point of this scale:\n{points}"

    def prompt_answer(self, item_data: dict | None) -> str:
        return f"one of the integers {', '.join(str(v) for v in self.values)}"

    def json_schema(self, item_data: dict | None) -> dict:
        return {"type": "integer", "enum": self.values}
