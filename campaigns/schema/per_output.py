"""`"for_each_output": true`: a question that rates one text, asked once per output of an item.

A kind that rates one text (`rates_one_text`: likert, slider, choice, flags, rubric, text,
spans) knows nothing of outputs. This module wraps any such question in one place: the page
asks the wrapped question once per shown output, in the assignment's order; the answer is
stored keyed by system, with the shown order:

    {"order": ["sys-b", "sys-a"], "by_system": {"sys-b": 4, "sys-a": 2}}

and each system's answer is the wrapped kind's own answer, validated by the kind against that
output (`with_text`: the item with the output's text as `output`). Every method of the kind
contract is answered here, delegating to the kind per output, so a kind gains per-output
questions without a line of its own (tests/schema/test_per_output.py checks that no contract
method is inherited unwrapped).

The analysis reads `output_atoms()`: (system, part, value) per output, so each output's
answer counts as that system's rating. The wide CSV has positional columns in the shown order
(`<id>.1.system`, `<id>.1`, `<id>.2.system`, ...), sized by the most outputs any exported
answer has.
"""
from __future__ import annotations

import random
from collections import Counter
from functools import cache, cached_property
from typing import Any, ClassVar

from django.utils.translation import gettext

from .base import AnswerInvalid, AnswerReader, BaseQuestion, ChartSpec, prompt_heading
from .contract import Capability
from .outputs import OUTPUTS, item_systems
from .outputs import output_text as plain_output_text

ORDER, BY_SYSTEM, BY_POSITION = "order", "by_system", "by_position"
OUTPUT_TEXT = "output"  # the key of the output's text in the data a wrapped question reads
MAX_POSITIONS = 20
LABELS = "ABCDEFGHIJKLMNOPQRST"
# What a wrapped kind keeps; everything else about answers is this module's.
KEPT = frozenset({Capability.AGREEMENT, Capability.LLM_JUDGE, Capability.OPTION_VALUES,
                  Capability.DASHBOARD})
ADDED = frozenset({Capability.ATOMIC_PARTS, Capability.SIZED_BY_ANSWERS,
                   Capability.JUDGES_OUTPUTS})
# The settings that repeat a question; its wrapped copy has none of them.
UNREPEATED = {"for_each_output": False, "for_each_turn": None, "turn": None}


def output_label(position: int) -> str:
    """What the page and a judge's prompt call the output at a 0-based shown position."""
    return f"Response {LABELS[position]}"


def output_text(output: Any) -> str:
    """An output's text; a conversation's as a role-labelled transcript (as a judge reads it)."""
    roles = output.get("role_labels") if isinstance(output, dict) else None
    return plain_output_text(output, roles)


def with_text(item_data: dict | None, text: str) -> dict:
    """The data a wrapped question reads for one output or turn: the item with its text as
    `output` (a spans question asked per output or turn marks `"field": "output"`)."""
    return {**(item_data or {}), OUTPUT_TEXT: text}


def shown_outputs(item_data: dict | None) -> list[dict]:
    outputs = (item_data or {}).get(OUTPUTS)
    return [o for o in outputs if isinstance(o, dict)] if isinstance(outputs, list) else []


class PerOutput:
    """The per-output behaviour, mixed in before the kind's class (per_output_class)."""

    template: ClassVar[str] = "campaigns/questions/per_output.html"
    added: ClassVar[frozenset[Capability]] = ADDED
    widget_reads_item: ClassVar[bool] = True
    answer_reads_item: ClassVar[bool] = True
    part_errors: ClassVar[bool] = True

    @cached_property
    def inner(self) -> BaseQuestion:
        """The same question asked of one text (the kind's own class and settings)."""
        kind = next(c for c in type(self).__mro__ if c.__name__ in _KIND_NAMES)
        return kind.model_validate({**self.model_dump(), **UNREPEATED})

    # What the question is asked of, and how the answer is keyed: the outputs, by system.
    by_key: ClassVar[str] = BY_SYSTEM
    order_key: ClassVar[str] = ORDER
    key_part: ClassVar[str] = "system"
    keys_are_systems: ClassVar[bool] = True

    def targets(self, item_data: dict | None) -> list[tuple[str, str, str]]:
        """(key, label, text) of each text the question is asked of, in the order shown."""
        return [(o.get("system"), output_label(i), output_text(o))
                for i, o in enumerate(shown_outputs(item_data))]

    def page_label(self, position: int, key: str, label: str) -> str:
        """A target's label on the worker's page, in the page's language (a judge's prompt
        keeps the English `label`)."""
        return gettext("Response %(position)s") % {"position": LABELS[position]}

    def target_order(self, raw: dict, item_data: dict | None) -> list[str]:
        """The keys in the order the page showed (the posted order, the server's on a page)."""
        systems = item_systems(item_data)
        if not systems:
            raise AnswerInvalid({self.id: "This item carries no outputs to rate."})
        order = raw.get(ORDER, systems)
        if not isinstance(order, list) or sorted(map(str, order)) != sorted(systems):
            raise AnswerInvalid({f"{self.id}.order": "The order must name each of the item's "
                                                     "systems once."})
        return list(order)

    def supports(self, capability: Capability) -> bool:
        return capability in self.capabilities

    # --- answers ----------------------------------------------------------------------------

    def is_empty(self, raw: Any) -> bool:
        if isinstance(raw, dict):
            values = raw.get(self.by_key, raw.get(BY_POSITION))
            values = values.values() if isinstance(values, dict) else values
            if isinstance(values, list | tuple) or hasattr(values, "__iter__"):
                return all(self.inner.is_empty(v) for v in values)
        return raw is None or raw == "" or raw == [] or raw == {}

    def free_text_input(self, suffix: str) -> bool:  # `.o<position>` and the kind's own
        position, _, rest = suffix.removeprefix(".o").partition(".")
        own = f".{rest}" if rest else ""
        if not suffix.startswith(".o") or not position.isdigit():
            return False
        return int(position) < MAX_POSITIONS and self.inner.free_text_input(own)

    def form_value(self, post: Any, prefix: str) -> Any:
        values = [self.inner.form_value(post, f"{prefix}.o{i}") for i in range(MAX_POSITIONS)]
        while values and values[-1] is None:
            values.pop()
        return {BY_POSITION: values} if values else None

    def record_order(self, raw: Any, systems: list[str]) -> Any:
        """The server's order replaces a posted one; the page's positions become systems."""
        if not isinstance(raw, dict):
            return raw
        recorded = {k: v for k, v in raw.items() if k not in (ORDER, BY_POSITION)}
        positions = raw.get(BY_POSITION)
        if isinstance(positions, list):
            recorded[BY_SYSTEM] = {s: v for s, v in zip(systems, positions, strict=False)
                                   if v is not None}
            if len(positions) > len(systems):  # a field past the outputs shown: tampered
                recorded[BY_POSITION] = positions[len(systems):]
        return {**recorded, ORDER: systems}

    def validate_answer(self, raw: Any, item_data: dict | None) -> dict:
        qid, by_key = self.id, self.by_key
        if not isinstance(raw, dict) or set(raw) - {self.order_key, by_key}:
            raise AnswerInvalid({qid: f'Expected an object with the keys "{by_key}" (each '
                                      f'answer, keyed by {self.key_part}) and '
                                      f'"{self.order_key}".'})
        order = self.target_order(raw, item_data)
        values = raw.get(by_key, {})
        if not isinstance(values, dict) or set(values) - set(order):
            unknown = sorted(set(values) - set(order)) if isinstance(values, dict) else []
            raise AnswerInvalid({qid: f"Answers must be keyed by the item's {self.key_part}s"
                                      + (f"; unknown: {', '.join(unknown)}" if unknown else "")
                                      + "."})
        shown = {key: (label, text) for key, label, text in self.targets(item_data)}
        cleaned, errors = {}, {}
        for position, key in enumerate(order):
            value = values.get(key)
            label, text = shown.get(key, (key, ""))
            label = self.page_label(position, key, label)
            if self.inner.is_empty(value):
                if self.required:
                    errors[f"{qid}.o{position}"] = gettext(
                        "Please answer this question for %(label)s.") % {"label": label}
                continue
            try:
                cleaned[key] = self.inner.validate_answer(value, with_text(item_data, text))
            except AnswerInvalid as exc:
                errors.update({_at(k, qid, position): message
                               for k, message in exc.errors.items()})
        if errors:
            raise AnswerInvalid(errors)
        return {self.order_key: list(order), by_key: cleaned}

    def example_answer(self, item_data: dict | None, rng: random.Random) -> dict:
        targets = self.targets(item_data)
        return {self.order_key: [key for key, _, _ in targets], self.by_key: {
            key: self.inner.example_answer(with_text(item_data, text), rng)
            for key, _, text in targets}}

    def widget(self, value: Any, item_data: dict | None, errors: dict[str, str]) -> dict:
        """Per shown output: its label, text, the wrapped question's widget and errors."""
        value = value if isinstance(value, dict) else {}
        by_key = value.get(self.by_key) if isinstance(value.get(self.by_key), dict) else {}
        by_position = value.get(BY_POSITION) if isinstance(value.get(BY_POSITION), list) else []
        rows = []
        # An output rendered once per item (Markdown, a conversation) comes with its HTML.
        htmls = ({o.get("system"): o.get("html") for o in shown_outputs(item_data)}
                 if self.keys_are_systems else {})
        for position, (key, label, text) in enumerate(self.targets(item_data)):
            own = by_key.get(key) if by_key else (
                by_position[position] if position < len(by_position) else None)
            own_errors = _errors_at(errors, position, self.inner.id)
            rows.append({"position": position, "label": self.page_label(position, key, label),
                         "text": text,
                         "html": htmls.get(key), "errors": own_errors, "value": own,
                         "extra": self.inner.widget(own, with_text(item_data, text),
                                                    own_errors)})
        return {"outputs": rows}

    def item_fields(self) -> list[str]:
        return [OUTPUTS, *[f for f in self.inner.item_fields() if f != OUTPUT_TEXT]]

    def prepare_item(self, data: dict) -> dict[str, str]:
        return {}

    def is_low_reference(self, part: str, value: Any) -> bool:
        return False

    # --- shuffled options are not offered per output (refused when the schema is parsed) ---

    def shuffles_options(self) -> bool:
        return False

    # --- exports and analysis ------------------------------------------------------------

    def output_atoms(self, answer: Any) -> list[tuple[str, str, Any]]:
        """(system, part, value) for each output's atoms, in the shown order: what the
        analysis and csv-long read, each output's answer as its system's rating."""
        if not isinstance(answer, dict) or not isinstance(answer.get(self.by_key), dict):
            return []
        values = answer[self.by_key]
        order = answer.get(self.order_key)
        order = order if isinstance(order, list) else list(values)
        return [(key, part, value) for key in order if key in values
                for part, value in self.inner.atoms(values[key])]

    def atoms(self, answer: Any) -> list[tuple[str, Any]]:
        values = answer[self.by_key]
        order = answer.get(self.order_key) or list(values)
        atoms: list[tuple[str, Any]] = []
        for n, key in enumerate(order, start=1):
            atoms.append((f"{n}.{self.key_part}", key))
            if key in values:
                atoms += [(_joined(n, part), value)
                          for part, value in self.inner.atoms(values[key])]
        return atoms

    def parts(self, item_data: dict | None = None) -> list[str]:
        return self.parts_for(len(self.targets(item_data)) if item_data is not None else 0)

    def parts_for(self, n: int) -> list[str]:
        inner = self.inner.parts()
        return [p for i in range(1, n + 1) for p in (f"{i}.{self.key_part}",
                                                     *(_joined(i, part) for part in inner))]

    def sql_parts(self, answer_sql: str, parts: list[str]) -> None:
        return None  # the Python path: positions depend on each answer's order

    def sql_atoms(self, answer_sql: str) -> None:
        return None

    def path_parts(self) -> None:
        return None

    def part_texts(self) -> dict[str, str]:
        return self.inner.part_texts()

    def part_measurement(self, part: str):
        return self.inner.part_measurement(part)

    def is_free_text(self, part: str) -> bool:
        return self.inner.is_free_text(part)

    # --- option renames, dashboard ----------------------------------------------------------

    def rename_value(self, answer: Any, old: str, new: str) -> Any:
        if not isinstance(answer, dict) or not isinstance(answer.get(self.by_key), dict):
            return answer
        return {**answer, self.by_key: {s: self.inner.rename_value(v, old, new)
                                        for s, v in answer[self.by_key].items()}}

    def dashboard_rows(self, reader: AnswerReader) -> Any:
        if not self.keys_are_systems:  # turns: each answer counts for its item's system
            return self.inner.dashboard_rows(_PerSystemReader(reader, self.id, self.by_key,
                                                              own_system=False))
        return self.inner.dashboard_rows(_PerSystemReader(reader, self.id, self.by_key))

    def dashboard_count(self, value: Any, counter: Counter, n: int) -> None:
        self.inner.dashboard_count(value, counter, n)

    def dashboard_charts(self) -> list[ChartSpec]:
        return self.inner.dashboard_charts()

    # --- LLM judges: the outputs in the item's order, labelled as on the page ---------------

    def prompt_section(self, item_data: dict | None) -> str:
        sections = [f"{prompt_heading(self)}\nAnswer this question once for each text "
                    "below, under its label."]
        for _, label, text in self.targets(item_data):
            inner = self.inner.prompt_section(with_text(item_data, text))
            sections.append(f"#### {label}\n{text}\n\n"
                            f"{inner.split(chr(10), 1)[1] if chr(10) in inner else ''}".rstrip())
        return "\n\n".join(sections)

    def prompt_answer(self, item_data: dict | None) -> str:
        labels = [label for _, label, _ in self.targets(item_data)]
        return (f"an object keyed by label ({', '.join(labels)}), each value "
                f"{self.inner.prompt_answer(item_data)}")

    def json_schema(self, item_data: dict | None) -> dict:
        """What a judge returns: one answer per response label (the systems and their order
        are the server's: never asked of the judge)."""
        targets = self.targets(item_data) if item_data is not None else []
        if not targets:
            return {"type": "object", "additionalProperties": self.inner.json_schema(None)}
        properties = {label: self.inner.json_schema(with_text(item_data, text))
                      for _, label, text in targets}
        return {"type": "object", "properties": properties,
                "required": list(properties) if self.required else [],
                "additionalProperties": False}

    def from_judge(self, parsed: Any, item_data: dict | None) -> Any:
        """A judge's answer keyed by label as a raw answer keyed by system or turn, in the
        order the prompt showed (the item's)."""
        targets = self.targets(item_data)
        order = [key for key, _, _ in targets]
        if not isinstance(parsed, dict):
            return parsed
        labels = {label: key for key, label, _ in targets}
        if set(parsed) - set(labels):
            return {self.by_key: parsed, self.order_key: order}  # refused by validate_answer
        return {self.order_key: order, self.by_key: {labels[k]: v for k, v in parsed.items()}}


class _PerSystemReader:
    """An AnswerReader over each output's (or turn's) answer, with its system (for the
    dashboard): the output's, or the item's for a turn."""

    def __init__(self, reader: AnswerReader, question_id: str, by_key: str,
                 own_system: bool = True):
        self.reader, self.question_id = reader, question_id
        self.by_key, self.own_system = by_key, own_system

    def answers(self, question_id: str) -> Any:
        for item_system, answer, n in self.reader.answers(self.question_id):
            values = answer.get(self.by_key) if isinstance(answer, dict) else None
            for key, value in (values or {}).items():
                yield (key if self.own_system else item_system), value, n

    def values(self, question_id: str, part: str = "") -> list[tuple[str, Any, int]]:
        counts: Counter = Counter()
        for system, value, n in self.answers(question_id):
            if part:
                value = value.get(part) if isinstance(value, dict) else None
            if value is not None and not isinstance(value, dict | list):
                counts[(system, value)] += n
        return [(system, value, n) for (system, value), n in counts.items()]

    def sums(self, question_id: str, parts: list[str]) -> list[tuple[str, dict, int]]:
        totals: dict[str, dict] = {}
        counts: Counter = Counter()
        for system, value, n in self.answers(question_id):
            if not isinstance(value, dict):
                continue
            own = totals.setdefault(system, {p: 0 for p in parts})
            for p in parts:
                if isinstance(value.get(p), int | float):
                    own[p] += value[p] * n
            counts[system] += n
        return [(system, totals[system], counts[system]) for system in totals]


_KIND_NAMES: set[str] = set()


def _joined(position: int, part: str) -> str:
    return f"{position}.{part}" if part else str(position)


def _at(key: str, question_id: str, position: int) -> str:
    """A wrapped question's error key (`rate`, `rate.C1`) at an output (`rate.o0.C1`)."""
    rest = key[len(question_id):] if key.startswith(question_id) else f".{key}"
    return f"{question_id}.o{position}{rest}"


def _errors_at(errors: dict[str, str], position: int, question_id: str) -> dict[str, str]:
    """The page's errors of one output ({part: message}) as the wrapped question's own."""
    prefix = f"o{position}"
    own = {}
    for part, message in errors.items():
        head, _, rest = part.partition(".")
        if head == prefix:
            own[rest] = message
    return own


@cache
def repeated_class(kind: type[BaseQuestion], wrapper: type) -> type[BaseQuestion]:
    """The kind's class asked once per output or turn (one class per kind, made once)."""
    _KIND_NAMES.add(kind.__name__)
    capabilities = (kind.capabilities & KEPT) | wrapper.added
    return type(f"{wrapper.__name__}{kind.__name__}", (wrapper, kind),
                {"__module__": wrapper.__module__, "capabilities": capabilities,
                 "__annotations__": {}})

