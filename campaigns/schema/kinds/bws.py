"""`bws` (best-worst scaling): of an item's 3 to 6 outputs, the best one and the worst one."""
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
    dom_id,
    prompt_heading,
)
from ..contract import Capability, KindExample
from ..outputs import OUTPUTS, item_systems, outputs_prompt

POSITIONS = ("A", "B", "C", "D", "E", "F")
MIN_OUTPUTS, MAX_OUTPUTS = 3, 6
OUTCOMES = (("best", "Best"), ("worst", "Worst"), ("neither", "Neither"))


class BestWorstQuestion(BaseQuestion):
    kind: Literal["bws"]
    best_label: str = Field(default="Best", min_length=1, max_length=60)
    worst_label: str = Field(default="Worst", min_length=1, max_length=60)

    measurement: ClassVar[MeasurementLevel] = "nominal"
    template: ClassVar[str] = "campaigns/questions/bws.html"
    capabilities: ClassVar[frozenset[Capability]] = frozenset({
        Capability.JUDGES_OUTPUTS, Capability.ATOMIC_PARTS, Capability.AGREEMENT,
        Capability.BEST_WORST, Capability.LLM_JUDGE, Capability.DASHBOARD})
    example: ClassVar[KindExample] = KindExample(
        settings={},
        item={"outputs": [{"system": "a", "text": "Hi."}, {"system": "b", "text": "Hello."},
                          {"system": "c", "text": "Hey."}]},
        valid=[{"best": "A", "worst": "C"}, {"best": "B", "worst": "A"}],
        invalid=[{"best": "A", "worst": "A"}, {"best": "D", "worst": "A"}, "A"])
    script: ClassVar[str] = "campaigns/bws.js"
    widget_reads_item: ClassVar[bool] = True
    answer_reads_item: ClassVar[bool] = True
    part_errors: ClassVar[bool] = True

    def item_fields(self) -> list[str]:
        return [OUTPUTS]

    def prepare_item(self, data: dict) -> dict[str, str]:
        outputs = data.get(OUTPUTS)
        if isinstance(outputs, list) and not MIN_OUTPUTS <= len(outputs) <= MAX_OUTPUTS:
            return {OUTPUTS: f"a best-worst question needs {MIN_OUTPUTS} to {MAX_OUTPUTS} "
                             f"outputs ({len(outputs)} given)"}
        return {}

    def record_order(self, raw: Any, systems: list[str]) -> Any:
        return {**raw, "order": systems} if isinstance(raw, dict) else raw

    def is_empty(self, raw: Any) -> bool:
        if isinstance(raw, dict):
            return not raw.get("best") and not raw.get("worst")
        return super().is_empty(raw)

    def validate_answer(self, raw: Any, item_data: dict | None) -> dict:
        qid = self.id
        if not isinstance(raw, dict) or set(raw) - {"best", "worst", "order"}:
            raise AnswerInvalid({qid: 'Expected an object with the keys "best" and "worst".'})
        systems = item_systems(item_data)
        if not MIN_OUTPUTS <= len(systems) <= MAX_OUTPUTS:
            raise AnswerInvalid({qid: f"This item does not carry {MIN_OUTPUTS} to {MAX_OUTPUTS} "
                                      "outputs."})
        order = raw.get("order", systems)
        if not isinstance(order, list) or sorted(map(str, order)) != sorted(systems):
            raise AnswerInvalid({f"{qid}.order": "The order must name the item's systems."})
        positions = POSITIONS[:len(systems)]
        errors = {}
        for part, label in (("best", self.best_label), ("worst", self.worst_label)):
            if raw.get(part) not in positions:
                errors[f"{qid}.{part}"] = gettext("Choose the %(label)s one: %(positions)s.") % {
                    "label": label.lower(), "positions": ", ".join(positions)}
        if not errors and raw["best"] == raw["worst"]:
            errors[f"{qid}.worst"] = gettext(
                "The %(worst)s one cannot also be the %(best)s one.") % {
                "worst": self.worst_label.lower(), "best": self.best_label.lower()}
        if errors:
            raise AnswerInvalid(errors)
        return {"best": raw["best"], "worst": raw["worst"], "order": list(order)}

    def form_value(self, post: Any, prefix: str) -> Any:
        raw = {k: post.get(f"{prefix}.{k}") for k in ("best", "worst")}
        raw = {k: v for k, v in raw.items() if v not in (None, "")}
        return raw or None

    def widget(self, value: Any, item_data: dict | None, errors: dict[str, str]) -> dict:
        value = value if isinstance(value, dict) else {}
        outputs = (item_data or {}).get(OUTPUTS) or []
        base = dom_id(self.id)  # the field's id, as the form gives it; each row's ids built once
        return {
            "rows": [{"position": p, "key": str(n + 1), "label_id": f"{base}-{p}-label",
                      "best_id": f"{base}-best-{p}", "worst_id": f"{base}-worst-{p}",
                      "text": o.get("text", "") if isinstance(o, dict) else "",
                      "html": o.get("html") if isinstance(o, dict) else None,
                      "best": value.get("best") == p, "worst": value.get("worst") == p}
                     for n, (p, o) in enumerate(zip(POSITIONS, outputs[:MAX_OUTPUTS],
                                                    strict=False))],
            "errors": {k.removeprefix(f"{self.id}."): v for k, v in errors.items()},
        }

    # --- exports: positions chosen, the systems they were, and who was shown where ----------

    def parts(self, item_data: dict | None = None) -> list[str]:
        return ["best", "worst", "best_system", "worst_system", *POSITIONS]

    def atoms(self, answer: Any) -> list[tuple[str, Any]]:
        order = answer.get("order") or []
        shown = dict(zip(POSITIONS, order, strict=False))
        return [("best", answer.get("best")), ("worst", answer.get("worst")),
                ("best_system", shown.get(answer.get("best"))),
                ("worst_system", shown.get(answer.get("worst"))),
                *[(p, shown.get(p)) for p in POSITIONS]]

    def is_free_text(self, part: str) -> bool:
        # Agreement is on the systems chosen, not on positions (orders differ per worker).
        return part not in ("best_system", "worst_system")

    def part_texts(self) -> dict[str, str]:
        return {"best_system": f"{self.text} ({self.best_label.lower()})",
                "worst_system": f"{self.text} ({self.worst_label.lower()})"}

    def best_worst(self, answer: Any) -> tuple[list[str], str, str] | None:
        if not isinstance(answer, dict):
            return None
        order = answer.get("order") or []
        shown = dict(zip(POSITIONS, order, strict=False))
        best, worst = shown.get(answer.get("best")), shown.get(answer.get("worst"))
        if best is None or worst is None:
            return None
        return list(order), best, worst

    def example_answer(self, item_data: dict | None, rng: random.Random) -> dict:
        n = max(MIN_OUTPUTS, min(MAX_OUTPUTS, len(item_systems(item_data)) or MIN_OUTPUTS))
        best, worst = rng.sample(POSITIONS[:n], 2)
        return {"best": best, "worst": worst}

    # --- dashboard: how often each system was chosen best and worst --------------------------

    def dashboard_rows(self, reader: AnswerReader) -> list:
        rows = []
        for _, answer, n in reader.answers(self.id):
            found = self.best_worst(answer)
            if found is None:
                continue
            order, best, worst = found
            rows += [(s, "best" if s == best else "worst" if s == worst else "neither", n)
                     for s in order]
        return rows

    def dashboard_count(self, value: Any, counter: Counter, n: int) -> None:
        counter[value] += n

    def dashboard_charts(self) -> list[ChartSpec]:
        return [ChartSpec(self.text, [(k, label) for k, label in OUTCOMES])]

    # --- LLM judges --------------------------------------------------------------------------

    def prompt_section(self, item_data: dict | None) -> str:
        outputs = (item_data or {}).get(OUTPUTS) or []
        shown = outputs_prompt(outputs, [f"Response {p}" for p in POSITIONS])
        return (f"{prompt_heading(self)}\n{shown}\nName the {self.best_label.lower()} response "
                f'as "best" and the {self.worst_label.lower()} one as "worst" (two different '
                "letters).")

    def prompt_answer(self, item_data: dict | None) -> str:
        letters = " | ".join(f'"{p}"' for p in self._positions(item_data))
        return f'an object {{"best": {letters}, "worst": {letters}}} (best and worst differ)'

    def _positions(self, item_data: dict | None) -> tuple[str, ...]:
        n = len(item_systems(item_data))
        return POSITIONS[:n] if MIN_OUTPUTS <= n <= MAX_OUTPUTS else POSITIONS

    def json_schema(self, item_data: dict | None) -> dict:
        letters = {"type": "string", "enum": list(self._positions(item_data))}
        return {"type": "object", "properties": {
            "best": letters, "worst": letters},
            "required": ["best", "worst"], "additionalProperties": False}
