"""`pairwise`: which of an item's two outputs is better (A, B or a tie), how clearly, and why."""
import random
from collections import Counter
from typing import Any, ClassVar, Literal

from django.utils.translation import gettext
from pydantic import Field

from ..base import (
    AnswerInvalid,
    AnswerReader,
    BaseQuestion,
    ChartSpec,
    MeasurementLevel,
    prompt_heading,
)
from ..contract import Capability, KindExample
from ..outputs import OUTPUTS, item_systems, outputs_prompt

CHOICES = ("A", "B", "tie")
STRENGTHS = ("slightly", "clearly")
REASON_MAX_LENGTH = 2000
OUTCOMES = (("win", "Won"), ("tie", "Tied"), ("loss", "Lost"))


class PairwiseQuestion(BaseQuestion):
    kind: Literal["pairwise"]
    tie: bool = True
    strength: bool = False
    reason: bool = True
    label_a: str = Field(default="Response A", min_length=1, max_length=100)
    label_b: str = Field(default="Response B", min_length=1, max_length=100)
    # How the Bradley-Terry analysis treats ties: half a win each (split) or Davidson (1970).
    tie_model: Literal["split", "davidson"] = "split"

    measurement: ClassVar[MeasurementLevel] = "nominal"
    template: ClassVar[str] = "campaigns/questions/pairwise.html"
    capabilities: ClassVar[frozenset[Capability]] = frozenset({
        Capability.JUDGES_OUTPUTS, Capability.ATOMIC_PARTS, Capability.AGREEMENT,
        Capability.PREFERENCES, Capability.LLM_JUDGE, Capability.DASHBOARD})
    example: ClassVar[KindExample] = KindExample(
        settings={"strength": True},
        item={"outputs": [{"system": "a", "text": "Hi."}, {"system": "b", "text": "Hello."}]},
        valid=[{"choice": "A", "strength": "clearly"}, "tie", {"choice": "B", "reason": "Kind."}],
        invalid=[{"choice": "C"}, {"choice": "tie", "strength": "clearly"}, 1])
    script: ClassVar[str] = "campaigns/pairwise.js"
    widget_reads_item: ClassVar[bool] = True
    answer_reads_item: ClassVar[bool] = True

    def _choices(self) -> list[str]:
        return list(CHOICES) if self.tie else ["A", "B"]

    def item_fields(self) -> list[str]:
        return [OUTPUTS]

    def prepare_item(self, data: dict) -> dict[str, str]:
        outputs = data.get(OUTPUTS)
        if isinstance(outputs, list) and len(outputs) != 2:
            return {OUTPUTS: f"a pairwise question needs exactly 2 outputs ({len(outputs)} given)"}
        return {}

    def record_order(self, raw: Any, systems: list[str]) -> Any:
        return {**raw, "order": systems} if isinstance(raw, dict) else raw

    def is_empty(self, raw: Any) -> bool:
        if isinstance(raw, dict):
            return not raw.get("choice")
        return super().is_empty(raw)

    def validate_answer(self, raw: Any, item_data: dict | None) -> dict:
        qid = self.id
        if isinstance(raw, str):
            raw = {"choice": raw}
        allowed = {"choice", "order"} | ({"strength"} if self.strength else set()) \
            | ({"reason"} if self.reason else set())
        if not isinstance(raw, dict) or set(raw) - allowed:
            keys = ", ".join(f'"{k}"' for k in sorted(allowed))
            raise AnswerInvalid({qid: f"Expected an object with the keys {keys}."})
        systems = item_systems(item_data)
        if len(systems) != 2:
            raise AnswerInvalid({qid: "This item does not carry exactly two outputs."})
        order = raw.get("order", systems)
        if not isinstance(order, list) or sorted(map(str, order)) != sorted(systems):
            raise AnswerInvalid({f"{qid}.order": "The order must name the item's two systems."})
        errors: dict[str, str] = {}
        choice = raw.get("choice")
        if choice not in self._choices():
            errors[f"{qid}.choice"] = gettext("Choose one of: %(options)s.") % {
                "options": ", ".join(self._choices())}
        cleaned: dict[str, Any] = {"choice": choice, "order": list(order)}
        strength = raw.get("strength")
        if strength not in (None, ""):
            if strength not in STRENGTHS:
                errors[f"{qid}.strength"] = gettext("Choose one of: %(options)s.") % {
                    "options": ", ".join(STRENGTHS)}
            elif choice == "tie":
                errors[f"{qid}.strength"] = gettext("A tie has no strength.")
            else:
                cleaned["strength"] = strength
        reason = raw.get("reason")
        if reason not in (None, ""):
            if not isinstance(reason, str):
                errors[f"{qid}.reason"] = "The reason must be text."
            elif len(reason.strip()) > REASON_MAX_LENGTH:
                errors[f"{qid}.reason"] = gettext("At most %(max)s characters, please.") % {
                    "max": REASON_MAX_LENGTH}
            elif reason.strip():
                cleaned["reason"] = reason.strip()
        if errors:
            raise AnswerInvalid(errors)
        return cleaned

    def form_value(self, post: Any, prefix: str) -> Any:
        raw = {k: post.get(f"{prefix}.{k}") for k in ("choice", "strength", "reason")}
        raw = {k: v for k, v in raw.items() if v not in (None, "")}
        return raw or None

    def widget(self, value: Any, item_data: dict | None, errors: dict[str, str]) -> dict:
        value = value if isinstance(value, dict) else {}
        outputs = [o if isinstance(o, dict) else {} for o in (item_data or {}).get(OUTPUTS) or []]
        labels = {"A": self.label_a, "B": self.label_b, "tie": gettext("About the same")}
        keys = {"A": "a", "B": "b", "tie": "t"}
        return {
            # "html": the output as the page formats it (pages/conversations.py)
            "panes": [{"label": label, "text": o.get("text", ""), "html": o.get("html")}
                      for label, o in zip((self.label_a, self.label_b), outputs[:2],
                                          strict=False)],
            "choices": [{"value": c, "key": keys[c], "checked": value.get("choice") == c,
                         "label": labels[c] if c == "tie"
                         else gettext("%(label)s is better") % {"label": labels[c]}}
                        for c in self._choices()],
            "strengths": [{"value": s, "checked": value.get("strength") == s}
                          for s in STRENGTHS] if self.strength else [],
            "reason": value.get("reason", ""),
            "errors": {k.removeprefix(f"{self.id}."): v for k, v in errors.items()},
        }

    # --- exports and agreement: the choice as shown, and which system that was ----------------

    def parts(self, item_data: dict | None = None) -> list[str]:
        return ["choice", *(["strength"] if self.strength else []),
                *(["reason"] if self.reason else []), "A", "B", "winner"]

    def atoms(self, answer: Any) -> list[tuple[str, Any]]:
        order = answer.get("order") or [None, None]
        choice = answer.get("choice")
        winner = {"A": order[0], "B": order[1], "tie": "tie"}.get(choice)
        atoms = [("choice", choice)]
        if self.strength:
            atoms.append(("strength", answer.get("strength")))
        if self.reason:
            atoms.append(("reason", answer.get("reason")))
        return [*atoms, ("A", order[0]), ("B", order[1]), ("winner", winner)]

    def preferences(self, answer: Any) -> list[tuple[str, str, float]]:
        order = answer.get("order") if isinstance(answer, dict) else None
        score = {"A": 1.0, "B": 0.0, "tie": 0.5}.get(answer.get("choice")) \
            if isinstance(answer, dict) else None
        if not isinstance(order, list) or len(order) != 2 or score is None:
            return []
        return [(order[0], order[1], score)]

    def free_text_input(self, suffix: str) -> bool:
        return self.reason and suffix == ".reason"

    def is_free_text(self, part: str) -> bool:
        # Agreement is on the system preferred (winner), not on the position clicked (which
        # differs between workers shown different orders) nor on who was shown where.
        return part in ("choice", "reason", "A", "B")

    def part_texts(self) -> dict[str, str]:
        return {"winner": self.text, "strength": f"{self.text} (strength)"}

    def example_answer(self, item_data: dict | None, rng: random.Random) -> dict:
        answer: dict[str, Any] = {"choice": rng.choice(self._choices())}
        if self.strength and answer["choice"] != "tie":
            answer["strength"] = rng.choice(STRENGTHS)
        return answer

    # --- dashboard: wins, ties and losses per system --------------------------------------

    def dashboard_rows(self, reader: AnswerReader) -> list:
        rows = []
        for _, answer, n in reader.answers(self.id):
            if not isinstance(answer, dict) or len(answer.get("order") or []) != 2:
                continue
            a, b = answer["order"]
            outcome = {"A": ("win", "loss"), "B": ("loss", "win")}.get(answer.get("choice"),
                                                                       ("tie", "tie"))
            rows += [(a, outcome[0], n), (b, outcome[1], n)]
        return rows

    def dashboard_count(self, value: Any, counter: Counter, n: int) -> None:
        counter[value] += n

    def dashboard_charts(self) -> list[ChartSpec]:
        return [ChartSpec(self.text, list(OUTCOMES))]

    # --- LLM judges --------------------------------------------------------------------------

    def prompt_section(self, item_data: dict | None) -> str:
        outputs = ((item_data or {}).get(OUTPUTS) or [])[:2]
        shown = outputs_prompt(outputs, [self.label_a, self.label_b])
        tie = ', or "tie" if neither is better' if self.tie else ""
        lines = [prompt_heading(self), shown,
                 f'Choose "A" if {self.label_a} is better, "B" if {self.label_b} is better{tie}.']
        if self.strength:
            lines.append('Say how clearly with "strength": "slightly" or "clearly" (not for a '
                         'tie).')
        if self.reason:
            lines.append('You may give a short "reason".')
        return "\n".join(lines)

    def prompt_answer(self, item_data: dict | None) -> str:
        choices = " | ".join(f'"{c}"' for c in self._choices())
        extra = ', "strength": "slightly" | "clearly"' if self.strength else ""
        extra += ', "reason": "..."' if self.reason else ""
        return f'an object {{"choice": {choices}{extra}}}'

    def json_schema(self, item_data: dict | None) -> dict:
        properties: dict[str, Any] = {"choice": {"type": "string", "enum": self._choices()}}
        if self.strength:
            properties["strength"] = {"type": "string", "enum": list(STRENGTHS)}
        if self.reason:
            properties["reason"] = {"type": "string", "maxLength": REASON_MAX_LENGTH}
        return {"type": "object", "properties": properties, "required": ["choice"],
                "additionalProperties": False}
