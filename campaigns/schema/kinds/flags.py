"""`flags`: zero or more reasons from a list, with an optional free-text "other"."""
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from ..base import AnswerInvalid, BaseQuestion, MeasurementLevel, Option, require_distinct

OTHER_MAX_LENGTH = 1000


class FlagsQuestion(BaseQuestion):
    kind: Literal["flags"]
    options: list[Option] = Field(min_length=1)
    other: bool = False
    other_label: str = "Other"
    required: bool = False

    measurement: ClassVar[MeasurementLevel] = "nominal"

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
        if not isinstance(raw, dict) or set(raw) - {"selected", "other"}:
            raise AnswerInvalid({self.id: 'Expected {"selected": [...], "other": "..."}.'})
        selected = raw.get("selected") or []
        values = [o.value for o in self.options]
        if not isinstance(selected, list) or not all(isinstance(v, str) for v in selected):
            raise AnswerInvalid({self.id: "Expected a list of reasons."})
        unknown = [v for v in selected if v not in values]
        if unknown:
            raise AnswerInvalid({self.id: f"Unknown reason(s): {', '.join(unknown)}."})
        other = raw.get("other") or ""
        if not isinstance(other, str):
            raise AnswerInvalid({self.id: "The 'other' reason must be text."})
        other = other.strip()
        if other and not self.other:
            raise AnswerInvalid({self.id: "This question takes no 'other' reason."})
        if len(other) > OTHER_MAX_LENGTH:
            raise AnswerInvalid({self.id: f"At most {OTHER_MAX_LENGTH} characters, please."})
        # Keep the schema's order so equal answers compare equal.
        cleaned = {"selected": [v for v in values if v in selected]}
        if other:
            cleaned["other"] = other
        return cleaned

    def atoms(self, answer: Any) -> list[tuple[str, Any]]:
        selected = set(answer.get("selected", []))
        atoms: list[tuple[str, Any]] = [
            ("", "|".join(o.value for o in self.options if o.value in selected))
        ]
        atoms += [(o.value, int(o.value in selected)) for o in self.options]
        if self.other:
            atoms.append(("other", answer.get("other", "")))
        return atoms

    def parts(self, item_data: dict | None = None) -> list[str]:
        return ["", *(o.value for o in self.options), *(["other"] if self.other else [])]

    def form_value(self, post: Any, prefix: str) -> Any:
        return {"selected": post.getlist(prefix), "other": post.get(f"{prefix}__other", "")}
