"""`flags`: zero or more reasons from a list, with an optional free-text "other".

With `shuffle_options`, each assignment shows the reasons in its own order and the answer
stores it under `order` (as `choice` does); exports add `<id>.order` ("b|a|c").
"""
import random
from collections import Counter
from typing import Any, ClassVar, Literal

from django.utils.translation import gettext
from pydantic import Field, model_validator

from ..base import (
    SQL_UNSUPPORTED,
    AnswerInvalid,
    AnswerReader,
    BaseQuestion,
    ChartSpec,
    MeasurementLevel,
    Option,
    as_text,
    described,
    prompt_heading,
    require_distinct,
    sql_text,
)
from ..contract import Capability, KindExample
from ..outputs import ShuffledOptions

OTHER_MAX_LENGTH = 1000


class FlagsQuestion(ShuffledOptions, BaseQuestion):
    kind: Literal["flags"]
    options: list[Option] = Field(min_length=1)
    other: bool = False
    other_label: str = "Other"
    required: bool = False
    shuffle_options: bool = False

    measurement: ClassVar[MeasurementLevel] = "nominal"
    template: ClassVar[str] = "campaigns/questions/flags.html"
    rates_one_text: ClassVar[bool] = True
    capabilities: ClassVar[frozenset[Capability]] = frozenset({
        Capability.ATOMIC_PARTS, Capability.AGREEMENT, Capability.SHUFFLES_OPTIONS,
        Capability.LLM_JUDGE, Capability.OPTION_VALUES, Capability.DASHBOARD})
    example: ClassVar[KindExample] = KindExample(
        settings={"options": [{"value": "typos", "label": "Typos"},
                              {"value": "rude", "label": "Rude"}], "other": True},
        valid=[{"selected": ["typos"]}, ["rude", "typos"], {"selected": [], "other": "odd"}],
        invalid=[{"selected": ["boring"]}, {"selected": "typos"},
                 {"selected": ["typos"], "colour": "red"}])

    @model_validator(mode="after")
    def _distinct_values(self):
        require_distinct([o.value for o in self.options], "option values")
        return self

    def is_empty(self, raw: Any) -> bool:
        if isinstance(raw, dict):
            return not raw.get("selected") and not (raw.get("other") or "").strip()
        return super().is_empty(raw)

    def validate_answer(self, raw: Any, item_data: dict | None) -> dict:
        if isinstance(raw, list):
            raw = {"selected": raw}
        keys = {"selected", "other"} | ({"order"} if self.shuffle_options else set())
        if not isinstance(raw, dict) or set(raw) - keys:
            raise AnswerInvalid({self.id: 'Expected {"selected": [...], "other": "..."}.'})
        selected = raw.get("selected") or []
        values = [o.value for o in self.options]
        if not isinstance(selected, list) or not all(isinstance(v, str) for v in selected):
            raise AnswerInvalid({self.id: "Expected a list of reasons."})
        unknown = [v for v in selected if v not in values]
        if unknown:
            raise AnswerInvalid({self.id: gettext("Unknown reason(s): %(reasons)s.") % {
                "reasons": ", ".join(unknown)}})
        other = raw.get("other") or ""
        if not isinstance(other, str):
            raise AnswerInvalid({self.id: "The 'other' reason must be text."})
        other = other.strip()
        if other and not self.other:
            raise AnswerInvalid({self.id: gettext("This question takes no 'other' reason.")})
        if len(other) > OTHER_MAX_LENGTH:
            raise AnswerInvalid({self.id: gettext("At most %(max)s characters, please.") % {
                "max": OTHER_MAX_LENGTH}})
        # Keep the schema's order so equal answers compare equal.
        cleaned: dict[str, Any] = {"selected": [v for v in values if v in selected]}
        if other:
            cleaned["other"] = other
        order = raw.get("order")
        if order is not None:
            cleaned["order"] = self.clean_order(order, values, "reason")
        return cleaned

    # --- the per-assignment order -----------------------------------------------------------

    def record_shown(self, raw: Any, seed: str) -> Any:
        if not self.shuffle_options or not isinstance(raw, dict):
            return raw
        return {**raw, "order": self.shown_values(seed)}

    def atoms(self, answer: Any) -> list[tuple[str, Any]]:
        selected = set(answer.get("selected", []))
        atoms: list[tuple[str, Any]] = [
            ("", "|".join(o.value for o in self.options if o.value in selected))
        ]
        atoms += [(o.value, int(o.value in selected)) for o in self.options]
        if self.other:
            atoms.append(("other", answer.get("other", "")))
        if self.shuffle_options:
            order = answer.get("order")
            atoms.append(("order", "|".join(order) if isinstance(order, list) else None))
        return atoms

    def parts(self, item_data: dict | None = None) -> list[str]:
        return ["", *(o.value for o in self.options), *(["other"] if self.other else []),
                *(["order"] if self.shuffle_options else [])]

    def sql_parts(self, answer_sql: str, parts: list[str]) -> list[tuple[str, str]] | None:
        if self.shuffle_options:
            return None  # the Python path writes the shown order as the csv writer does
        # atoms() needs an object whose "selected" (if any) is a list of hashables; anything
        # else (exported as JSON text by the Python path) goes to the Python path.
        sel = f"({answer_sql} -> 'selected')"
        odd = (
            f"jsonb_typeof({answer_sql}) <> 'object' OR ({answer_sql} ? 'selected' AND "
            f"(jsonb_typeof({sel}) <> 'array' OR "
            f"jsonb_path_exists({sel}, '$[*] ? (@.type() != \"string\")')))"
        )
        has = {o.value: f"coalesce({sel} ? {sql_text(o.value)}, false)" for o in self.options}
        joined = ", ".join(f"CASE WHEN {has[o.value]} THEN {sql_text(o.value)} END"
                           for o in self.options)
        exprs = {"": f"to_jsonb(concat_ws('|', {joined}))"}
        for o in self.options:
            exprs[o.value] = f"to_jsonb(CASE WHEN {has[o.value]} THEN 1 ELSE 0 END)"
        exprs["other"] = f"coalesce({answer_sql} -> 'other', '\"\"'::jsonb)"
        return [
            (p, f"(CASE WHEN {answer_sql} IS NULL OR {answer_sql} = 'null'::jsonb THEN NULL "
                f"WHEN {odd} THEN {SQL_UNSUPPORTED} ELSE {exprs[p]} END)")
            for p in parts
        ]

    def sql_atoms(self, answer_sql: str) -> str | None:
        if self.shuffle_options:
            return None
        exprs = dict(self.sql_parts("g.r", self.parts()))
        rows = ", ".join(f"({sql_text(p)}, {exprs[p]}, {n})" for n, p in enumerate(self.parts()))
        return (
            f"SELECT v.* FROM (SELECT {answer_sql} AS r) g "  # noqa: S608 (sql_text)
            f"CROSS JOIN LATERAL (VALUES {rows}) v(part, value, ord)"
        )

    def form_value(self, post: Any, prefix: str) -> Any:
        return {"selected": post.getlist(prefix), "other": post.get(f"{prefix}__other", "")}

    def rename_value(self, answer: Any, old: str, new: str) -> Any:
        if not isinstance(answer, dict) or not isinstance(answer.get("selected"), list):
            return answer
        renamed = {**answer, "selected": [new if v == old else v for v in answer["selected"]]}
        if isinstance(answer.get("order"), list):
            renamed["order"] = [new if v == old else v for v in answer["order"]]
        return renamed

    def free_text_input(self, suffix: str) -> bool:
        return self.other and suffix == "__other"

    def is_free_text(self, part: str) -> bool:
        return part in ("other", "order")

    def widget(self, value: Any, item_data: dict | None, errors: dict[str, str]) -> dict:
        value = value if isinstance(value, dict) else {"selected": value or []}
        selected = {as_text(v) for v in value.get("selected") or []}
        return {"choices": [{"option": o, "value": o.value, "checked": o.value in selected}
                            for o in self.options],
                "other": as_text(value.get("other"))}

    def example_answer(self, item_data: dict | None, rng: random.Random) -> dict:
        return {"selected": [rng.choice(self.options).value], "other": ""}

    def dashboard_rows(self, reader: AnswerReader) -> Any:
        return reader.answers(self.id)

    def dashboard_count(self, value: Any, counter: Counter, n: int) -> None:
        if isinstance(value, dict):
            counter.update(str(v) for v in value.get("selected", []))
            if value.get("other"):
                counter["other"] += 1

    def dashboard_charts(self) -> list[ChartSpec]:
        categories = [(o.value, o.label) for o in self.options]
        return [ChartSpec(self.text, categories + ([("other", "Other")] if self.other else []))]

    def prompt_section(self, item_data: dict | None) -> str:
        options = "\n".join(described(o.value, o.label, o.description) for o in self.options)
        text = f"{prompt_heading(self)}\nSelect every reason that applies, or none:\n{options}"
        if self.other:
            text += f'\n"{self.other_label}": a short free-text reason no option covers.'
        return text

    def prompt_answer(self, item_data: dict | None) -> str:
        values = ", ".join(f'"{o.value}"' for o in self.options)
        other = ', "other": "<free text or empty>"' if self.other else ""
        return f'{{"selected": [zero or more of {values}]{other}}}'

    def json_schema(self, item_data: dict | None) -> dict:
        properties: dict = {"selected": {"type": "array", "uniqueItems": True, "items": {
            "type": "string", "enum": [o.value for o in self.options]}}}
        if self.other:
            properties["other"] = {"type": "string", "maxLength": OTHER_MAX_LENGTH}
        return {"type": "object", "properties": properties, "required": ["selected"],
                "additionalProperties": False}
