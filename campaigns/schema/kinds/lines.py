"""`lines`: a label for each segment (line or sentence) of an item field, plus a follow-up
text (the rewrite) required exactly for the labels that ask for it."""

import ast
import json
import random
import re
from collections import Counter
from typing import Any, ClassVar, Literal

from django.utils.translation import gettext
from pydantic import Field, model_validator

from ..base import (
    ID_PATTERN,
    SQL_UNSUPPORTED,
    AnswerInvalid,
    AnswerReader,
    BaseQuestion,
    ChartSpec,
    MeasurementLevel,
    Option,
    Strict,
    as_text,
    choices,
    described,
    dom_id,
    field_name,
    prompt_heading,
    require_distinct,
    sql_text,
)
from ..contract import Capability, KindExample

SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


class Followup(Strict):
    id: str = Field(pattern=ID_PATTERN)
    text: str = Field(min_length=1)
    when: list[str] = Field(min_length=1)
    max_length: int = Field(default=2000, ge=1)


def split_segments(value: Any, split: str) -> list[str]:
    """Turn an item field into its segments; a list (or a list written as a string) is kept."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            parsed = _parse_list_literal(stripped)
            if parsed is not None:
                value = parsed
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    if not isinstance(value, str):
        return []
    if split == "newlines":
        parts = value.splitlines()
    else:
        parts = SENTENCE_END.split(value.strip())
    return [p.strip() for p in parts if p.strip()]


def _parse_list_literal(text: str) -> list | None:
    for parse in (json.loads, ast.literal_eval):  # literal_eval never runs code
        try:
            parsed = parse(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(parsed, list):
            return parsed
    return None


class LinesQuestion(BaseQuestion):
    kind: Literal["lines"]
    field: str = Field(min_length=1)
    split: Literal["list", "sentences", "newlines"] = "sentences"
    options: list[Option] = Field(min_length=2)
    followup: Followup | None = None

    measurement: ClassVar[MeasurementLevel] = "nominal"
    answer_reads_item: ClassVar[bool] = True
    template: ClassVar[str] = "campaigns/questions/lines.html"
    capabilities: ClassVar[frozenset[Capability]] = frozenset({
        Capability.ATOMIC_PARTS, Capability.SIZED_BY_ANSWERS, Capability.AGREEMENT,
        Capability.LLM_JUDGE, Capability.OPTION_VALUES, Capability.DASHBOARD})
    example: ClassVar[KindExample] = KindExample(
        settings={"field": "summary", "options": [{"value": "ok", "label": "Consistent"},
                                                  {"value": "bad", "label": "Inconsistent"}],
                  "followup": {"id": "rewrite", "text": "Rewrite it.", "when": ["bad"]}},
        item={"summary": "One line. Two lines."},
        valid=[[{"label": "ok"}, {"label": "bad", "rewrite": "Line two."}], ["ok", "ok"]],
        invalid=[[{"label": "ok"}], [{"label": "ok"}, {"label": "bad"}], "ok"])
    script: ClassVar[str] = "campaigns/lines.js"
    widget_reads_item: ClassVar[bool] = True
    part_errors: ClassVar[bool] = True

    @model_validator(mode="after")
    def _consistent(self):
        values = [o.value for o in self.options]
        require_distinct(values, "option values")
        if self.followup:
            unknown = set(self.followup.when) - set(values)
            if unknown:
                raise ValueError(f"followup.when names unknown options {sorted(unknown)}")
            if self.followup.id == "label":
                raise ValueError("followup.id 'label' is reserved")
        return self

    def segments(self, item_data: dict | None) -> list[str]:
        return split_segments((item_data or {}).get(self.field), self.split)

    def validate_answer(self, raw: Any, item_data: dict | None) -> list[dict]:
        segments = self.segments(item_data)
        if not isinstance(raw, list):
            raise AnswerInvalid(
                {self.id: f"Expected a label for each of the {len(segments)} lines."}
            )
        if len(raw) != len(segments):
            raise AnswerInvalid({self.id: gettext("Expected %(n)s line labels, got %(given)s.") % {
                "n": len(segments), "given": len(raw)}})
        errors: dict[str, str] = {}
        cleaned = [self._clean_line(n, entry, errors) for n, entry in enumerate(raw, start=1)]
        if errors:
            raise AnswerInvalid(errors)
        return cleaned

    def _clean_line(self, n: int, entry: Any, errors: dict[str, str]) -> dict:
        values = [o.value for o in self.options]
        if isinstance(entry, str):
            entry = {"label": entry}
        if not isinstance(entry, dict):
            errors[f"{self.id}.{n}.label"] = f"Line {n}: expected a label."
            return {}
        label = entry.get("label")
        if label in (None, ""):
            errors[f"{self.id}.{n}.label"] = gettext("Line %(n)s: choose a label.") % {"n": n}
            return {}
        if label not in values:
            errors[f"{self.id}.{n}.label"] = gettext(
                "Line %(n)s: choose one of %(options)s.") % {"n": n, "options": ", ".join(values)}
            return {}
        cleaned = {"label": label}
        fu = self.followup
        if fu is None:
            return cleaned
        text = entry.get(fu.id)
        text = text.strip() if isinstance(text, str) else ""
        if label in fu.when:
            if not text:  # the field's own label already says what to write: not repeated
                shown = next((o.label for o in self.options if o.value == label), label)
                errors[f"{self.id}.{n}.{fu.id}"] = gettext(
                    "Line %(n)s: required for a line marked %(label)s.") % {"n": n, "label": shown}
            elif len(text) > fu.max_length:
                errors[f"{self.id}.{n}.{fu.id}"] = gettext(
                    "Line %(n)s: at most %(max)s characters.") % {"n": n, "max": fu.max_length}
            else:
                cleaned[fu.id] = text
        return cleaned

    def rename_value(self, answer: Any, old: str, new: str) -> Any:
        if not isinstance(answer, list):
            return answer
        return [{**e, "label": new} if isinstance(e, dict) and e.get("label") == old else e
                for e in answer]

    def schema_with_value_renamed(self, question: dict, old: str, new: str) -> dict:
        renamed = super().schema_with_value_renamed(question, old, new)
        if isinstance(renamed.get("followup"), dict):  # it names the labels that ask for it
            followup = renamed["followup"]
            renamed["followup"] = {**followup, "when": [new if v == old else v
                                                        for v in followup.get("when", [])]}
        return renamed

    def atoms(self, answer: Any) -> list[tuple[str, Any]]:
        atoms: list[tuple[str, Any]] = []
        for n, entry in enumerate(answer, start=1):
            atoms.append((f"{n}.label", entry.get("label")))
            if self.followup:
                atoms.append((f"{n}.{self.followup.id}", entry.get(self.followup.id, "")))
        return atoms

    def parts(self, item_data: dict | None = None) -> list[str]:
        n_lines = len(self.segments(item_data)) if item_data is not None else 0
        return self.parts_for(n_lines)

    def sql_parts(self, answer_sql: str, parts: list[str]) -> list[tuple[str, str]]:
        # atoms() keeps no part of a list holding a non-object (entry.get fails): neither
        # may SQL, so such an answer goes to the Python path. A non-list gives NULLs alike.
        odd = (
            f"jsonb_typeof({answer_sql}) = 'array' AND "
            f"jsonb_path_exists({answer_sql}, '$[*] ? (@.type() != \"object\")')"
        )
        out = []
        for part in parts:
            n, key = part.split(".", 1)
            out.append((part, f"(CASE WHEN {odd} THEN {SQL_UNSUPPORTED} "
                              f"ELSE {answer_sql} -> {int(n) - 1} -> {sql_text(key)} END)"))
        return out

    def sql_atoms(self, answer_sql: str) -> str:
        # An empty string or object gives no atoms; other non-lists make atoms() fail.
        a = answer_sql
        lines = (
            f"CASE WHEN jsonb_typeof({a}) = 'array' AND NOT "
            f"jsonb_path_exists({a}, '$[*] ? (@.type() != \"object\")') THEN {a} "
            f"WHEN {a} IN ('\"\"'::jsonb, '{{}}'::jsonb) THEN '[]'::jsonb "
            f"ELSE {SQL_UNSUPPORTED} END"
        )
        fields = ["('label', e.el -> 'label', 0)"]
        if self.followup:
            fid = sql_text(self.followup.id)
            fields.append(f"({fid}, coalesce(e.el -> {fid}, '\"\"'::jsonb), 1)")
        return (
            "SELECT e.n || '.' || f.k, f.v, (e.n * 2 + f.o)::int "  # noqa: S608 (sql_text)
            f"FROM jsonb_array_elements({lines}) WITH ORDINALITY e(el, n) "
            f"CROSS JOIN LATERAL (VALUES {', '.join(fields)}) f(k, v, o)"
        )

    def parts_for(self, n_lines: int) -> list[str]:
        parts = []
        for n in range(1, n_lines + 1):
            parts.append(f"{n}.label")
            if self.followup:
                parts.append(f"{n}.{self.followup.id}")
        return parts

    def part_measurement(self, part: str) -> MeasurementLevel:
        return "nominal"

    def form_value(self, post: Any, prefix: str) -> Any:
        count = int(post.get(f"{prefix}__count", "0") or 0)
        answer = []
        for n in range(1, min(count, 1000) + 1):
            entry = {"label": post.get(f"{prefix}.{n}.label", "")}
            if self.followup:
                entry[self.followup.id] = post.get(f"{prefix}.{n}.{self.followup.id}", "")
            answer.append(entry)
        return answer or None

    def is_empty(self, raw: Any) -> bool:
        if isinstance(raw, list):
            return all((e.get("label") if isinstance(e, dict) else e) in (None, "") for e in raw)
        return super().is_empty(raw)

    def free_text_input(self, suffix: str) -> bool:  # `.<line>.<followup id>`
        return bool(self.followup) and re.fullmatch(
            rf"\.[1-9][0-9]{{0,3}}\.{re.escape(self.followup.id)}", suffix) is not None

    def is_free_text(self, part: str) -> bool:
        return bool(self.followup) and part.endswith(f".{self.followup.id}")

    def item_fields(self) -> list[str]:
        return [self.field]

    def prepare_item(self, data: dict) -> dict[str, str]:
        if data.get(self.field) in (None, ""):
            return {}  # a missing field is reported with the other required fields
        segments = self.segments(data)
        if not segments:
            return {self.field: f"yields no {self.split or 'line'} segments to label"}
        data[self.field] = segments  # store the segments the worker will label
        return {}

    def widget(self, value: Any, item_data: dict | None, errors: dict[str, str]) -> dict:
        given = value if isinstance(value, list) else []
        followup = self.followup
        rows = []
        for n, segment in enumerate(self.segments(item_data), start=1):
            entry = given[n - 1] if n - 1 < len(given) else {}
            entry = entry if isinstance(entry, dict) else {"label": entry}
            label = as_text(entry.get("label"))
            rows.append({
                "n": n,
                "text": segment,
                "name": f"{field_name(self.id)}.{n}",
                "dom_id": dom_id(self.id, n),
                "choices": choices(self.options, label),
                "followup_value": as_text(entry.get(followup.id)) if followup else "",
                "followup_shown": bool(followup and label in followup.when),
                "label_error": errors.get(f"{n}.label", ""),
                "followup_error": errors.get(f"{n}.{followup.id}", "") if followup else "",
            })
        return {"rows": rows, "count": len(rows),
                "when": " ".join(followup.when) if followup else ""}

    def example_answer(self, item_data: dict | None, rng: random.Random) -> list[dict]:
        out = []
        for _ in self.segments(item_data):
            label = rng.choice(self.options).value
            entry = {"label": label}
            if self.followup and label in self.followup.when:
                entry[self.followup.id] = "a rewrite"
            out.append(entry)
        return out

    def dashboard_rows(self, reader: AnswerReader) -> Any:
        return reader.answers(self.id)

    def dashboard_count(self, value: Any, counter: Counter, n: int) -> None:
        if isinstance(value, list):
            counter.update(str(entry.get("label")) for entry in value if isinstance(entry, dict))

    def dashboard_charts(self) -> list[ChartSpec]:
        return [ChartSpec(self.text, [(o.value, o.label) for o in self.options])]

    def prompt_section(self, item_data: dict | None) -> str:
        segments = self.segments(item_data)
        numbered = "\n".join(f"{n}. {s}" for n, s in enumerate(segments, start=1))
        options = "\n".join(described(o.value, o.label, o.description) for o in self.options)
        text = (f"{prompt_heading(self)}\nThe {len(segments)} numbered segments of "
                f'"{self.field}":\n{numbered}\nLabel each segment, in order, with one of:\n'
                f"{options}")
        if self.followup:
            when = ", ".join(f'"{w}"' for w in self.followup.when)
            text += (f'\nFor a segment labelled {when}, also give "{self.followup.id}": '
                     f"{self.followup.text}")
        return text

    def prompt_answer(self, item_data: dict | None) -> str:
        n = len(self.segments(item_data))
        followup = f', "{self.followup.id}": "..." when asked' if self.followup else ""
        return f'a list of {n} objects, one per segment in order: {{"label": "..."{followup}}}'

    def json_schema(self, item_data: dict | None) -> dict:
        properties: dict = {"label": {"type": "string", "enum": [o.value for o in self.options]}}
        if self.followup:
            properties[self.followup.id] = {"type": "string",
                                            "maxLength": self.followup.max_length}
        schema: dict = {"type": "array", "items": {
            "type": "object", "properties": properties, "required": ["label"],
            "additionalProperties": False}}
        if item_data is not None:
            schema["minItems"] = schema["maxItems"] = len(self.segments(item_data))
        return schema
