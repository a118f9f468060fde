"""`choice`: one option of a nominal set, optionally shown in a per-assignment order.

With `shuffle_options`, each assignment shows the options in its own order (drawn from the
assignment's stored token, the item and the question id) and the answer stores it:
`{"value": v, "order": [option values as shown]}` (no `order` when no page showed one: the
API, a judge, a gold answer). Exports write it as `<id>.value` and `<id>.order` ("b|a|c").
"""
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
    Option,
    choices,
    described,
    prompt_heading,
    require_distinct,
)
from ..contract import Capability, KindExample
from ..outputs import ShuffledOptions


class ChoiceQuestion(ShuffledOptions, BaseQuestion):
    kind: Literal["choice"]
    options: list[Option] = Field(min_length=2)

    measurement: ClassVar[MeasurementLevel] = "nominal"
    template: ClassVar[str] = "campaigns/questions/choice.html"
    rates_one_text: ClassVar[bool] = True
    capabilities: ClassVar[frozenset[Capability]] = frozenset({
        Capability.ATOMIC_PARTS, Capability.AGREEMENT, Capability.SHUFFLES_OPTIONS,
        Capability.LLM_JUDGE, Capability.OPTION_VALUES, Capability.DASHBOARD})
    example: ClassVar[KindExample] = KindExample(
        settings={"options": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"},
                              {"value": "unsure", "label": "Not sure"}]},
        valid=["yes", "unsure"], invalid=["maybe", 1, ["yes"]])

    @model_validator(mode="after")
    def _distinct_values(self):
        require_distinct([o.value for o in self.options], "option values")
        return self

    shuffle_options: bool = False

    def _values(self) -> list[str]:
        return [o.value for o in self.options]

    def _value(self, raw: Any) -> str:
        values = self._values()
        if not isinstance(raw, str) or raw not in values:
            raise AnswerInvalid({self.id: gettext("Choose one of the options: %(options)s.") % {
                "options": ", ".join(values)}})
        return raw

    def is_empty(self, raw: Any) -> bool:
        if self.shuffle_options and isinstance(raw, dict):
            return raw.get("value") in (None, "")
        return super().is_empty(raw)

    def validate_answer(self, raw: Any, item_data: dict | None) -> str | dict:
        if not self.shuffle_options:
            return self._value(raw)
        order = None
        if isinstance(raw, dict):
            if set(raw) - {"value", "order"}:
                raise AnswerInvalid({self.id: 'Expected an option value, or an object with the '
                                              'keys "value" and "order".'})
            raw, order = raw.get("value"), raw.get("order")
        cleaned: dict[str, Any] = {"value": self._value(raw)}
        if order is not None:
            cleaned["order"] = self.clean_order(order, self._values(), "option value")
        return cleaned

    # --- the per-assignment order -----------------------------------------------------------

    def record_shown(self, raw: Any, seed: str) -> Any:
        value = raw.get("value") if isinstance(raw, dict) else raw
        if not self.shuffle_options or value in (None, ""):
            return raw
        return {"value": value, "order": self.shown_values(seed)}

    def widget(self, value: Any, item_data: dict | None, errors: dict[str, str]) -> dict:
        if isinstance(value, dict):
            value = value.get("value")
        return {"choices": choices(self.options, value)}

    def rename_value(self, answer: Any, old: str, new: str) -> Any:
        if isinstance(answer, dict):
            return {**answer, "value": new if answer.get("value") == old else answer.get("value"),
                    **({"order": [new if v == old else v for v in answer["order"]]}
                       if isinstance(answer.get("order"), list) else {})}
        return new if answer == old else answer

    # --- exports and agreement: with shuffling, the value and the order shown ----------------

    def parts(self, item_data: dict | None = None) -> list[str]:
        return ["value", "order"] if self.shuffle_options else [""]

    def atoms(self, answer: Any) -> list[tuple[str, Any]]:
        if not self.shuffle_options:
            return [("", answer)]
        if not isinstance(answer, dict):  # stored before the option was switched on
            return [("value", answer), ("order", None)]
        order = answer.get("order")
        return [("value", answer.get("value")),
                ("order", "|".join(order) if isinstance(order, list) else None)]

    def path_parts(self) -> list[str] | None:
        return None if self.shuffle_options else [""]  # the order is joined by atoms()

    def sql_parts(self, answer_sql: str, parts: list[str]) -> list[tuple[str, str]] | None:
        if self.shuffle_options:
            return None  # the Python path writes the shown order as the csv writer does
        return [("", answer_sql)]

    def sql_atoms(self, answer_sql: str) -> str | None:
        if self.shuffle_options:
            return None
        return f"SELECT ''::text, {answer_sql}, 0"

    def is_free_text(self, part: str) -> bool:
        return part == "order"  # which position showed what carries no rating to agree on

    def part_texts(self) -> dict[str, str]:
        return {"value" if self.shuffle_options else "": self.text}

    def example_answer(self, item_data: dict | None, rng: random.Random) -> str:
        return rng.choice(self.options).value

    def dashboard_rows(self, reader: AnswerReader) -> list:
        return reader.values(self.id, "value" if self.shuffle_options else "")

    def dashboard_charts(self) -> list[ChartSpec]:
        return [ChartSpec(self.text, [(o.value, o.label) for o in self.options])]

    def prompt_section(self, item_data: dict | None) -> str:
        options = "\n".join(described(o.value, o.label, o.description) for o in self.options)
        return f"{prompt_heading(self)}\nChoose one option:\n{options}"

    def prompt_answer(self, item_data: dict | None) -> str:
        return "one of the strings " + ", ".join(f'"{o.value}"' for o in self.options)

    def json_schema(self, item_data: dict | None) -> dict:
        return {"type": "string", "enum": self._values()}  # a judge sees the schema's order
