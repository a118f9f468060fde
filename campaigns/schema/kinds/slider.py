"""`slider`: a number in [min, max] on a step grid, which must be moved before it counts."""

import math
import random
from collections import Counter
from typing import Any, ClassVar, Literal

from django.utils.translation import gettext
from pydantic import Field, model_validator

from ..base import (
    AnswerInvalid,
    AnswerReader,
    BaseQuestion,
    ChartSpec,
    MeasurementLevel,
    Strict,
    as_number,
    as_text,
    described,
    prompt_heading,
)
from ..contract import Capability, KindExample

BINS = 10  # the dashboard's distribution of answers


class Anchor(Strict):
    value: float
    label: str = Field(min_length=1)
    description: str = ""


class SliderQuestion(BaseQuestion):
    kind: Literal["slider"]
    min: float = 0
    max: float = 100
    step: float = Field(default=1, gt=0)
    start: float | None = None
    anchors: list[Anchor] = Field(default_factory=list)

    measurement: ClassVar[MeasurementLevel] = "interval"
    template: ClassVar[str] = "campaigns/questions/slider.html"
    rates_one_text: ClassVar[bool] = True
    capabilities: ClassVar[frozenset[Capability]] = frozenset({
        Capability.AGREEMENT, Capability.LLM_JUDGE, Capability.DASHBOARD})
    example: ClassVar[KindExample] = KindExample(
        settings={"min": 0, "max": 10, "anchors": [{"value": 0, "label": "Awful"},
                                                   {"value": 10, "label": "Perfect"}]},
        valid=[3, "7", {"value": 5, "moved": True}], invalid=[11, "high", 2.5])
    script: ClassVar[str] = "campaigns/slider.js"

    @model_validator(mode="after")
    def _consistent_range(self):
        if self.min >= self.max:
            raise ValueError("min must be below max")
        for anchor in self.anchors:
            if not self.min <= anchor.value <= self.max:
                raise ValueError(f"anchor {anchor.label!r} at {anchor.value} is outside [min, max]")
        if self.start is not None and not self.min <= self.start <= self.max:
            raise ValueError("start must lie within [min, max]")
        return self

    @property
    def resting_value(self) -> float:
        return self.start if self.start is not None else (self.min + self.max) / 2

    def is_empty(self, raw: Any) -> bool:
        # The page sends {"value": x, "moved": false} for an untouched handle: not an answer.
        if isinstance(raw, dict) and raw.get("moved") is False:
            return True
        return super().is_empty(raw)

    def validate_answer(self, raw: Any, item_data: dict | None) -> float | int:
        if isinstance(raw, dict):
            unknown = set(raw) - {"value", "moved"}
            if unknown:
                raise AnswerInvalid({self.id: f"Unexpected keys {sorted(unknown)}."})
            raw = raw.get("value")
        value = as_number(raw)
        if value is None:
            raise AnswerInvalid({self.id: gettext("Move the slider to give a score.")})
        if not self.min <= value <= self.max:
            raise AnswerInvalid(
                {self.id: f"The score must lie between {self.min:g} and {self.max:g}."}
            )
        steps = (value - self.min) / self.step
        if not math.isclose(steps, round(steps), abs_tol=1e-6):
            raise AnswerInvalid({self.id: gettext("The score must be a multiple of %(step)s.") % {
                "step": f"{self.step:g}"}})
        return int(value) if float(value).is_integer() else value

    def form_value(self, post: Any, prefix: str) -> Any:
        value = post.get(prefix)
        if value in (None, ""):
            return None
        return {"value": value, "moved": post.get(f"{prefix}__moved") == "1"}

    def widget(self, value: Any, item_data: dict | None, errors: dict[str, str]) -> dict:
        moved = False
        if isinstance(value, dict):
            moved = bool(value.get("moved"))
            value = value.get("value")
        elif value is not None:
            moved = True  # a saved answer was moved when it was given
        shown = as_text(value) if value not in (None, "") else as_text(self.resting_value)
        span = self.max - self.min
        anchors = [{"anchor": a, "percent": round(100 * (a.value - self.min) / span, 2)}
                   for a in self.anchors]
        return {"value": shown, "moved": moved, "anchors": anchors}

    def example_answer(self, item_data: dict | None, rng: random.Random) -> float:
        steps = int((self.max - self.min) / self.step)
        return self.min + self.step * rng.randint(0, steps)

    def is_low_reference(self, part: str, value: Any) -> bool:
        # A gold score in the bottom quarter of the scale: a degraded reference.
        return value <= self.min + (self.max - self.min) / 4

    def dashboard_rows(self, reader: AnswerReader) -> list:
        return reader.values(self.id)

    def dashboard_count(self, value: Any, counter: Counter, n: int) -> None:
        span = (self.max - self.min) or 1
        position = (float(value) - self.min) / span * BINS
        counter[min(max(int(position), 0), BINS - 1)] += n

    def dashboard_charts(self) -> list[ChartSpec]:
        width = (self.max - self.min) / BINS
        bins = [(b, f"{self.min + b * width:g}–{self.min + (b + 1) * width:g}")
                for b in range(BINS)]
        return [ChartSpec(self.text, bins)]

    def prompt_section(self, item_data: dict | None) -> str:
        text = (f"{prompt_heading(self)}\nGive a number from {self.min:g} to {self.max:g} "
                f"in steps of {self.step:g}.")
        if self.anchors:
            anchors = "\n".join(described(f"{a.value:g}", a.label, a.description)
                                 for a in self.anchors)
            text += f" The scale's anchors:\n{anchors}"
        return text

    def prompt_answer(self, item_data: dict | None) -> str:
        if self.json_schema(item_data)["type"] == "integer" and self.step == 1:
            return f"a whole number from {self.min:g} to {self.max:g}"
        return f"a number from {self.min:g} to {self.max:g} (a multiple of {self.step:g})"

    def json_schema(self, item_data: dict | None) -> dict:
        whole = all(float(v).is_integer() for v in (self.min, self.step))
        schema: dict = {"type": "integer" if whole else "number",
                        "minimum": _plain(self.min), "maximum": _plain(self.max)}
        if whole and self.step != 1:
            schema["multipleOf"] = _plain(self.step)
        return schema


def _plain(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value
