"""`spans`: error spans marked in one item field, each with a severity and maybe a category
(ESA and MQM annotation)."""
import json
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
    described,
    dom_id,
    prompt_heading,
    require_distinct,
)
from ..contract import Capability, KindExample

SPAN_ORDER = ("start", "end", "text", "severity", "category")
SPAN_KEYS = set(SPAN_ORDER)
MAX_SPANS_LIMIT = 1000
ANSWERS = "#answers"


class Severity(Strict):
    value: str = Field(min_length=1, max_length=100)
    label: str = Field(min_length=1)
    description: str = ""
    weight: float = Field(default=1, ge=0)


class Category(Strict):
    value: str = Field(min_length=1, max_length=100)
    label: str = Field(min_length=1)
    description: str = ""
    # The MQM weight of this category's errors by severity, where it differs from the
    # severity's own weight (minor punctuation 0.1, non-translation 25).
    weights: dict[str, float] = Field(default_factory=dict)


class SpansQuestion(BaseQuestion):
    kind: Literal["spans"]
    field: str = Field(min_length=1)
    source_field: str | None = Field(default=None, min_length=1)
    severities: list[Severity] = Field(min_length=1)
    categories: list[Category] = Field(default_factory=list)
    require_category: bool = False
    allow_overlap: bool = False
    max_spans: int = Field(default=100, ge=1, le=MAX_SPANS_LIMIT)

    measurement: ClassVar[MeasurementLevel] = "ratio"
    template: ClassVar[str] = "campaigns/questions/spans.html"
    rates_one_text: ClassVar[bool] = True
    capabilities: ClassVar[frozenset[Capability]] = frozenset({
        Capability.ATOMIC_PARTS, Capability.AGREEMENT, Capability.ERROR_SPANS,
        Capability.LLM_JUDGE, Capability.OPTION_VALUES, Capability.DASHBOARD})
    example: ClassVar[KindExample] = KindExample(
        settings={"field": "target", "source_field": "source",
                  "severities": [{"value": "minor", "label": "Minor"},
                                 {"value": "major", "label": "Major", "weight": 5}]},
        item={"source": "Eins zwei drei.", "target": "One two three."},
        valid=[[], [{"text": "two", "severity": "minor"}],
               '[{"text": "One", "severity": "major"}]'],
        invalid=[[{"text": "four", "severity": "minor"}], [{"text": "two", "severity": "fatal"}],
                 {"text": "two"}])
    script: ClassVar[str] = "campaigns/spans.js"
    widget_reads_item: ClassVar[bool] = True
    answer_reads_item: ClassVar[bool] = True
    part_errors: ClassVar[bool] = True

    @model_validator(mode="after")
    def _consistent(self):
        require_distinct([s.value for s in self.severities], "severity values")
        require_distinct([c.value for c in self.categories], "category values")
        severities = {s.value for s in self.severities}
        for c in self.categories:
            unknown = sorted(set(c.weights) - severities)
            if unknown:
                raise ValueError(f"category {c.value!r}: weights name unknown severities "
                                 f"{', '.join(unknown)}")
            negative = sorted(k for k, w in c.weights.items() if w < 0)
            if negative:
                raise ValueError(f"category {c.value!r}: weights must not be negative "
                                 f"({', '.join(negative)})")
        if self.require_category and not self.categories:
            raise ValueError("require_category needs a list of categories")
        if self.source_field == self.field:
            raise ValueError("source_field must differ from field")
        return self

    # --- the item's text ---------------------------------------------------------------------

    def item_fields(self) -> list[str]:
        return [self.field, *([self.source_field] if self.source_field else [])]

    def prepare_item(self, data: dict) -> dict[str, str]:
        value = data.get(self.field)
        if value in (None, ""):
            return {}  # a missing field is reported with the other required fields
        if not isinstance(value, str):
            return {self.field: "a spans question marks text: expected a string"}
        return {}

    def marked_text(self, item_data: dict | None) -> str:
        """The text the spans' offsets index (the item field, as stored)."""
        value = (item_data or {}).get(self.field)
        return value if isinstance(value, str) else ""

    def weight(self, severity: str, category: str | None) -> float:
        """The MQM weight of one error: the category's override, else the severity's."""
        for c in self.categories:
            if c.value == category and severity in c.weights:
                return c.weights[severity]
        return next((s.weight for s in self.severities if s.value == severity), 0.0)

    # --- answers ------------------------------------------------------------------------------

    def is_empty(self, raw: Any) -> bool:
        # An empty list is an answer: "no errors found".
        return raw is None or raw == ""

    def form_value(self, post: Any, prefix: str) -> Any:
        value = post.get(prefix)
        if value in (None, ""):
            return None
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value  # validate_answer() says it is not a list of spans

    def validate_answer(self, raw: Any, item_data: dict | None) -> list[dict]:
        qid = self.id
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except (ValueError, RecursionError):
                raise AnswerInvalid({qid: gettext(
                    "The marked spans could not be read (expected a JSON list).")}) from None
        if not isinstance(raw, list):
            raise AnswerInvalid({qid: gettext("Expected a list of spans.")})
        if len(raw) > self.max_spans:
            raise AnswerInvalid({qid: gettext("At most %(max)s spans, please (%(given)s marked).")
                                 % {"max": self.max_spans, "given": len(raw)}})
        text = self.marked_text(item_data)
        errors: dict[str, str] = {}
        spans = []
        for n, entry in enumerate(raw, start=1):
            span, problem = self.clean_span(entry, text)
            if problem:
                errors[f"{qid}.{n}"] = gettext("Span %(n)s: %(problem)s") % {
                    "n": n, "problem": problem}
            else:
                spans.append(span)
        if errors:
            raise AnswerInvalid(errors)
        spans.sort(key=lambda s: (s["start"], s["end"]))
        problem = self._overlap(spans)
        if problem:
            raise AnswerInvalid({qid: problem})
        return spans

    def clean_span(self, entry: Any, text: str) -> tuple[dict | None, str]:
        """One span as stored, or what is wrong with it.

        `text` is required and must be the marked text at its offsets; `start` may be left
        out when the text occurs once in the field, and `end` when start is given.
        """
        if not isinstance(entry, dict) or set(entry) - SPAN_KEYS:
            return None, gettext('expected an object with "start", "end", "text", "severity" '
                                 'and "category".')
        quoted = entry.get("text")
        if not isinstance(quoted, str) or not quoted:
            return None, gettext("the marked text is missing.")
        start, end = entry.get("start"), entry.get("end")
        if start is None:
            if end is not None:
                return None, gettext("give start with end.")
            start = text.find(quoted)
            if start < 0 or text.find(quoted, start + 1) >= 0:
                where = (gettext("“%(text)s” does not occur in the text; give its start.")
                         if start < 0 else
                         gettext("“%(text)s” occurs more than once in the text; give its start."))
                return None, where % {"text": _short(quoted)}
        if not _is_int(start) or (end is not None and not _is_int(end)):
            return None, gettext("start and end must be whole numbers.")
        end = start + len(quoted) if end is None else end
        if not 0 <= start < end <= len(text):
            return None, gettext("the offsets %(start)s-%(end)s lie outside the text "
                                 "(0-%(length)s).") % {"start": start, "end": end,
                                                       "length": len(text)}
        if text[start:end] != quoted:
            return None, gettext("the text at %(start)s-%(end)s is “%(found)s”, not "
                                 "“%(text)s”.") % {"start": start, "end": end, "text": _short(
                                     quoted), "found": _short(text[start:end])}
        if not quoted.strip():
            return None, gettext("a span must mark a word or more, not only white space.")
        severity = entry.get("severity")
        values = [s.value for s in self.severities]
        if severity in (None, ""):
            return None, gettext("choose a severity.")
        if severity not in values:
            return None, gettext("the severity must be one of %(values)s.") % {
                "values": ", ".join(values)}
        return self._with_category({"start": start, "end": end, "text": quoted,
                                    "severity": severity}, entry.get("category"))

    def _with_category(self, span: dict, category: Any) -> tuple[dict | None, str]:
        if category in (None, ""):
            if self.require_category:
                return None, gettext("choose a category.")
            return {**span, "category": None}, ""
        if not self.categories:
            return None, gettext("this question asks for no category.")
        values = [c.value for c in self.categories]
        if category not in values:
            return None, gettext("“%(value)s” is not one of the categories.") % {
                "value": _short(str(category))}
        return {**span, "category": category}, ""

    def _overlap(self, spans: list[dict]) -> str:
        """What is wrong with how the sorted spans overlap ("" if nothing)."""
        for before, after in zip(spans, spans[1:], strict=False):
            if before == after:
                return gettext("The span “%(text)s” at %(start)s-%(end)s is marked twice "
                               "with the same labels.") % {"text": _short(after["text"]),
                                                           "start": after["start"],
                                                           "end": after["end"]}
            if not self.allow_overlap and after["start"] < before["end"]:
                return gettext("Spans may not overlap: “%(first)s” (%(first_start)s-"
                               "%(first_end)s) and “%(second)s” (%(second_start)s-"
                               "%(second_end)s).") % {
                    "first": _short(before["text"]), "first_start": before["start"],
                    "first_end": before["end"], "second": _short(after["text"]),
                    "second_start": after["start"], "second_end": after["end"]}
        return ""

    def error_spans(self, answer: Any) -> list[dict] | None:
        return [s for s in answer if isinstance(s, dict)] if isinstance(answer, list) else None

    def span_labels(self) -> dict[str, list[str]]:
        return {"severity": [s.value for s in self.severities],
                "category": [c.value for c in self.categories]}

    def example_answer(self, item_data: dict | None, rng: random.Random) -> list[dict]:
        text = self.marked_text(item_data)
        words, pos = [], 0
        for word in text.split():
            start = text.index(word, pos)
            pos = start + len(word)
            words.append((start, pos))
        spans = []
        for start, end in sorted(rng.sample(words, min(len(words), rng.randint(0, 3)))):
            category = rng.choice(self.categories).value if self.categories else None
            spans.append({"start": start, "end": end, "text": text[start:end],
                          "severity": rng.choice(self.severities).value, "category": category})
        return spans

    def rename_value(self, answer: Any, old: str, new: str) -> Any:
        if not isinstance(answer, list):
            return answer
        return [{**s, **{k: new for k in ("severity", "category") if s.get(k) == old}}
                if isinstance(s, dict) else s for s in answer]

    def schema_with_value_renamed(self, question: dict, old: str, new: str) -> dict:
        def renamed(entries: list) -> list:
            return [{**e, "value": new} if isinstance(e, dict) and e.get("value") == old else e
                    for e in entries]

        out = {**question, "severities": renamed(question.get("severities", []))}
        if "categories" in question:
            out["categories"] = [
                {**c, "weights": {new if k == old else k: w for k, w in c["weights"].items()}}
                if isinstance(c, dict) and isinstance(c.get("weights"), dict) else c
                for c in renamed(question["categories"])]
        return out

    # --- the worker's widget ------------------------------------------------------------------

    def widget(self, value: Any, item_data: dict | None, errors: dict[str, str]) -> dict:
        text = self.marked_text(item_data)
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except (ValueError, RecursionError):
                value = []
        # A refused answer comes back as posted: show the spans that still fit the text.
        spans = [s for s, problem in (self.clean_span(e, text)
                                      for e in (value if isinstance(value, list) else [])[
                                          :self.max_spans]) if not problem]
        spans.sort(key=lambda s: (s["start"], s["end"]))
        labels = {s.value: s.label for s in self.severities}
        labels.update({c.value: c.label for c in self.categories})
        return {
            "text": text,
            "data_id": dom_id(self.id, "text-data"),
            "value": json.dumps(spans, ensure_ascii=False),
            "spans": [{**s, "severity_label": labels.get(s["severity"], s["severity"]),
                       "category_label": labels.get(s["category"], "") if s["category"] else ""}
                      for s in spans],
            "severities": [{"value": s.value, "label": s.label, "description": s.description,
                            "key": n} for n, s in enumerate(self.severities, start=1)],
            "categories": [{"value": c.value, "label": c.label, "description": c.description}
                           for c in self.categories],
            "errors": [m for k, m in sorted(errors.items()) if k],
            "no_errors": value == [],  # answered before, with no span: "no errors"
        }

    # --- exports: the spans as JSON, how many, and how many of each severity ----------------

    def parts(self, item_data: dict | None = None) -> list[str]:
        return ["spans", "n_spans", *(f"n_{s.value}" for s in self.severities)]

    def atoms(self, answer: Any) -> list[tuple[str, Any]]:
        spans = [s for s in answer if isinstance(s, dict)] if isinstance(answer, list) else []
        counts = Counter(s.get("severity") for s in spans)
        # One CSV cell: the list as JSON text (the csv writer would write a Python repr), keys
        # in one order whichever order the database gave them in (gold answers compare it).
        regular = isinstance(answer, list) and len(spans) == len(answer)
        text = json.dumps([{k: s.get(k) for k in SPAN_ORDER} for s in spans] if regular
                          else answer, ensure_ascii=False)
        return [("spans", text), ("n_spans", len(spans)),
                *((f"n_{s.value}", counts[s.value]) for s in self.severities)]

    def sql_parts(self, answer_sql: str, parts: list[str]) -> None:
        return None  # the spans are a list, which the COPY path does not write: Python path

    def sql_atoms(self, answer_sql: str) -> None:
        return None

    def is_free_text(self, part: str) -> bool:
        # Span agreement is character-level F1 (the statistics), not Krippendorff on JSON.
        return part == "spans"

    def part_texts(self) -> dict[str, str]:
        labels = {f"n_{s.value}": f"{self.text} ({s.label.lower()} spans)"
                  for s in self.severities}
        return {"n_spans": f"{self.text} (spans)", **labels}

    # --- dashboard: spans per answer by severity (and by category) per system ----------------

    def dashboard_rows(self, reader: AnswerReader) -> Any:
        return reader.answers(self.id)

    def dashboard_count(self, value: Any, counter: Counter, n: int) -> None:
        if not isinstance(value, list):
            return
        counter[ANSWERS] += n
        for span in value:
            if isinstance(span, dict):
                counter[("severity", span.get("severity"))] += n
                if span.get("category"):
                    counter[("category", span.get("category"))] += n

    def dashboard_charts(self) -> list[ChartSpec]:
        charts = [ChartSpec(f"{self.text} (spans per answer)",
                            [(("severity", s.value), s.label) for s in self.severities],
                            mean_of=ANSWERS)]
        if self.categories:
            charts.append(ChartSpec(f"{self.text} (spans by category)",
                                    [(("category", c.value), c.label) for c in self.categories],
                                    suffix=".categories"))
        return charts

    # --- LLM judges --------------------------------------------------------------------------

    def prompt_section(self, item_data: dict | None) -> str:
        severities = "\n".join(described(s.value, s.label, s.description)
                               for s in self.severities)
        lines = [prompt_heading(self),
                 f'The text to mark ("{self.field}"):\n"""\n{self.marked_text(item_data)}\n"""',
                 f"Mark each error as a span of that text, copied exactly, with a severity:\n"
                 f"{severities}"]
        if self.categories:
            categories = "\n".join(described(c.value, c.label, c.description)
                                   for c in self.categories)
            needed = "Give each span" if self.require_category else "You may give each span"
            lines.append(f"{needed} a category:\n{categories}")
        overlap = "may" if self.allow_overlap else "must not"
        lines.append(f"Spans {overlap} overlap; at most {self.max_spans}. An empty list means "
                     'no errors. Where the same words occur more than once, give "start": the '
                     "0-based character offset where the marked occurrence begins.")
        return "\n".join(lines)

    def prompt_answer(self, item_data: dict | None) -> str:
        severities = " | ".join(f'"{s.value}"' for s in self.severities)
        category = (', "category": ' + " | ".join(f'"{c.value}"' for c in self.categories)
                    if self.categories else "")
        return (f'a list (maybe empty) of objects {{"text": "<exact words>", "severity": '
                f'{severities}{category}}}, each with "start" where the words occur more than '
                "once")

    def json_schema(self, item_data: dict | None) -> dict:
        properties: dict[str, Any] = {
            "start": {"type": "integer", "minimum": 0},
            "end": {"type": "integer", "minimum": 1},
            "text": {"type": "string", "minLength": 1},
            "severity": {"type": "string", "enum": [s.value for s in self.severities]}}
        required = ["text", "severity"]
        if self.categories:
            values = [c.value for c in self.categories]
            properties["category"] = ({"type": "string", "enum": values}
                                      if self.require_category else
                                      {"type": ["string", "null"], "enum": [*values, None]})
            if self.require_category:
                required.append("category")
        else:
            properties["category"] = {"type": "null"}
        if item_data is not None:
            length = len(self.marked_text(item_data))
            properties["start"]["maximum"] = max(length - 1, 0)
            properties["end"]["maximum"] = length
        return {"type": "array", "maxItems": self.max_spans, "items": {
            "type": "object", "properties": properties, "required": required,
            "additionalProperties": False}}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"
