"""`rubric`: points per criterion, each within its own range, and the computed total."""
import random
from collections import Counter, namedtuple
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
    JudgeOutputInvalid,
    MeasurementLevel,
    Strict,
    as_int,
    as_number,
    as_text,
    choices,
    dom_id,
    field_name,
    prompt_heading,
    require_distinct,
    sql_text,
)
from ..contract import Capability, KindExample

_Level = namedtuple("_Level", "value description")


class Level(Strict):
    value: int
    description: str = Field(min_length=1)


class Criterion(Strict):
    id: str = Field(pattern=ID_PATTERN)
    text: str = Field(min_length=1)
    min: int = 0
    max: int = Field(ge=1)
    levels: list[Level] = Field(default_factory=list)

    @model_validator(mode="after")
    def _levels_cover_range(self):
        if self.min >= self.max:
            raise ValueError("min must be below max")
        if self.levels and sorted(lv.value for lv in self.levels) != list(
            range(self.min, self.max + 1)
        ):
            raise ValueError(f"levels must describe each value from {self.min} to {self.max} once")
        return self


class RubricQuestion(BaseQuestion):
    kind: Literal["rubric"]
    criteria: list[Criterion] = Field(min_length=1)

    measurement: ClassVar[MeasurementLevel] = "ordinal"
    template: ClassVar[str] = "campaigns/questions/rubric.html"
    rates_one_text: ClassVar[bool] = True
    capabilities: ClassVar[frozenset[Capability]] = frozenset({
        Capability.ATOMIC_PARTS, Capability.AGREEMENT, Capability.TALLIED, Capability.LLM_JUDGE,
        Capability.JUDGED_BY_PARTS, Capability.DASHBOARD})
    example: ClassVar[KindExample] = KindExample(
        settings={"criteria": [{"id": "C1", "text": "Correct", "max": 2},
                               {"id": "C2", "text": "Concise", "max": 1}]},
        valid=[{"C1": 2, "C2": 0}, {"C1": "1", "C2": 1, "total": 2}],
        invalid=[{"C1": 3, "C2": 0}, {"C1": 1}, {"C1": 1, "C2": 1, "total": 5}])
    script: ClassVar[str] = "campaigns/rubric.js"
    part_errors: ClassVar[bool] = True

    @model_validator(mode="after")
    def _distinct_ids(self):
        ids = [c.id for c in self.criteria]
        require_distinct(ids, "criterion ids")
        if "total" in ids:
            raise ValueError("'total' is reserved for the computed sum")
        return self

    @property
    def max_total(self) -> int:
        return sum(c.max for c in self.criteria)

    def validate_answer(self, raw: Any, item_data: dict | None) -> dict:
        if not isinstance(raw, dict):
            raise AnswerInvalid({self.id: gettext("Expected points for every criterion.")})
        raw = {str(k): v for k, v in raw.items()}
        claimed_total = raw.pop("total", None)
        errors: dict[str, str] = {}
        known = {c.id for c in self.criteria}
        for key in sorted(set(raw) - known):
            errors[f"{self.id}.{key}"] = f"Unknown criterion {key!r}."
        cleaned: dict[str, int] = {}
        for c in self.criteria:
            value = as_int(raw.get(c.id))
            if raw.get(c.id) in (None, ""):
                errors[f"{self.id}.{c.id}"] = gettext(
                    "Give %(criterion)s a score from %(min)s to %(max)s.") % {
                    "criterion": c.id, "min": c.min, "max": c.max}
            elif value is None and as_number(raw.get(c.id)) is not None:
                errors[f"{self.id}.{c.id}"] = gettext(
                    "%(criterion)s takes whole points (%(given)s given is not a whole "
                    "number).") % {"criterion": c.id, "given": repr(raw.get(c.id))}
            elif value is None or not c.min <= value <= c.max:
                errors[f"{self.id}.{c.id}"] = gettext(
                    "%(criterion)s takes %(min)s to %(max)s points (%(given)s given).") % {
                    "criterion": c.id, "min": c.min, "max": c.max, "given": repr(raw.get(c.id))}
            else:
                cleaned[c.id] = value
        if errors:
            raise AnswerInvalid(errors)
        total = sum(cleaned.values())
        if claimed_total is not None and as_int(claimed_total) != total:
            raise AnswerInvalid(
                {f"{self.id}.total": f"The total is {total}, not {claimed_total!r}."}
            )
        return {**cleaned, "total": total}

    def atoms(self, answer: Any) -> list[tuple[str, Any]]:
        return [(c.id, answer.get(c.id)) for c in self.criteria] + [("total", answer.get("total"))]

    def parts(self, item_data: dict | None = None) -> list[str]:
        return [c.id for c in self.criteria] + ["total"]

    def sql_parts(self, answer_sql: str, parts: list[str]) -> list[tuple[str, str]]:
        # Not an object: atoms() fails and the export keeps no part; `->` gives NULL alike.
        return [(p, f"({answer_sql} -> {sql_text(p)})") for p in parts]

    def sql_atoms(self, answer_sql: str) -> str:
        rows = ", ".join(
            f"({sql_text(p)}, g.r -> {sql_text(p)}, {n})" for n, p in enumerate(self.parts())
        )
        return (
            f"SELECT v.* FROM (SELECT CASE WHEN jsonb_typeof({answer_sql}) = 'object' "  # noqa: S608 (sql_text)
            f"THEN {answer_sql} ELSE {SQL_UNSUPPORTED} END AS r) g "
            f"CROSS JOIN LATERAL (VALUES {rows}) v(part, value, ord)"
        )

    def part_measurement(self, part: str) -> MeasurementLevel:
        return "interval" if part == "total" else "ordinal"

    def form_value(self, post: Any, prefix: str) -> Any:
        answer = {c.id: post.get(f"{prefix}.{c.id}") for c in self.criteria}
        return None if all(v in (None, "") for v in answer.values()) else answer

    def path_parts(self) -> list[str]:
        return self.parts()

    def part_texts(self) -> dict[str, str]:
        texts = {c.id: f"{c.text}: {c.min}-{c.max}" for c in self.criteria}
        texts["total"] = f"Total: 0-{self.max_total}"
        return texts

    def from_judge_parts(self, parsed: dict) -> dict:
        """Keys name criteria by position (1, "1", ...) as in seed 003's prompt, or by id
        ("C7", case-insensitive); "total" may be given too."""
        by_id = {c.id.lower(): c.id for c in self.criteria}
        mapped: dict[str, Any] = {}
        for key, value in parsed.items():
            name = str(key).strip()
            if isinstance(key, bool):
                raise JudgeOutputInvalid(f"key {key!r} names no criterion")
            if name.isdigit():
                n = int(name)
                if not 1 <= n <= len(self.criteria):
                    raise JudgeOutputInvalid(f"criterion {n} is outside 1-{len(self.criteria)}")
                name = self.criteria[n - 1].id
            elif name.lower() in by_id:
                name = by_id[name.lower()]
            elif name.lower() != "total":
                raise JudgeOutputInvalid(f"key {key!r} names no criterion of {self.id!r}")
            if name in mapped:
                raise JudgeOutputInvalid(f"criterion {name} is scored twice")
            mapped[name if name.lower() != "total" else "total"] = value
        return mapped

    def widget(self, value: Any, item_data: dict | None, errors: dict[str, str]) -> dict:
        value = value if isinstance(value, dict) else {}
        rows, total = [], 0
        for c in self.criteria:
            current = as_text(value.get(c.id))
            levels = c.levels or [_Level(v, "") for v in range(c.min, c.max + 1)]
            if current.lstrip("-").isdigit():
                total += int(current)
            rows.append({"criterion": c, "name": f"{field_name(self.id)}.{c.id}",
                         "dom_id": dom_id(self.id, c.id), "choices": choices(levels, current),
                         "error": errors.get(c.id, "")})
        return {"rows": rows, "total": total, "max_total": self.max_total}

    def example_answer(self, item_data: dict | None, rng: random.Random) -> dict:
        return {c.id: rng.randint(c.min, c.max) for c in self.criteria}

    def dashboard_rows(self, reader: AnswerReader) -> list:
        """("#sums", {criterion: sum}, answers) rows and ("#total", total, count) rows."""
        criteria = [c.id for c in self.criteria]
        rows: list = [(s, {"#sums": sums}, n) for s, sums, n in reader.sums(self.id, criteria)]
        rows += [(s, {"#total": v}, n) for s, v, n in reader.values(self.id, "total")]
        return rows

    def dashboard_count(self, value: Any, counter: Counter, n: int) -> None:
        if "#sums" in value:
            counter["#answers"] += n
            for part, total in value["#sums"].items():
                counter[part] += total
        elif "#total" in value:
            total = as_int(value["#total"])
            if total is not None:
                counter[("total", total)] += n

    def dashboard_charts(self) -> list[ChartSpec]:
        # The mean points per criterion; the total has its own scale: a separate distribution.
        totals = range(self.max_total + 1)
        return [
            ChartSpec(self.text, [(c.id, c.id) for c in self.criteria], mean_of="#answers"),
            ChartSpec(f"{self.text} (total score)", [(("total", t), str(t)) for t in totals],
                      suffix=".total"),
        ]

    def prompt_section(self, item_data: dict | None) -> str:
        lines = [f"{prompt_heading(self)}\nScore every criterion within its range "
                 f"({len(self.criteria)} criteria, {self.max_total} points in all):"]
        for c in self.criteria:
            lines.append(f'- "{c.id}" ({c.min}-{c.max} points): {c.text}')
            lines += [f"    {lv.value}: {lv.description}"
                      for lv in sorted(c.levels, key=lambda lv: lv.value)]
        return "\n".join(lines)

    def prompt_answer(self, item_data: dict | None) -> str:
        keys = ", ".join(f'"{c.id}": {c.min}-{c.max}' for c in self.criteria)
        return f"an object of integer points per criterion: {{{keys}}}"

    def json_schema(self, item_data: dict | None) -> dict:
        properties = {c.id: {"type": "integer", "minimum": c.min, "maximum": c.max}
                      for c in self.criteria}
        # Stored answers carry the computed total; a judge need not give it.
        properties["total"] = {"type": "integer"}
        return {"type": "object", "properties": properties,
                "required": [c.id for c in self.criteria], "additionalProperties": False}
