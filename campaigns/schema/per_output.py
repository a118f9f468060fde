"""`"for_each_output": true`: a question that rates one text, asked once per output of an item.

A kind that rates one text (`rates_one_text`: likert, slider, choice, flags, rubric, text,
spans) knows nothing of outputs. This module wraps any such question in one place: the page
asks the wrapped question once per shown output, in the assignment's order; the answer is
stored keyed by system, with the shown order:

    {"order": ["sys-b", "sys-a"], "by_system": {"sys-b": 4, "sys-a": 2}}

and each system's answer is the wrapped kind's own answer, validated by the kind against that
output (`output_data`: the item with the output's text as `output`). Every method of the kind
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


def output_label(position: int) -> str:
    """What the page and a judge's prompt call the output at a 0-based shown position."""
    return f"Response {LABELS[position]}"


def output_text(output: Any) -> str:
    """An output's text; a conversation's as a role-labelled transcript (as a judge reads it)."""
    roles = output.get("role_labels") if isinstance(output, dict) else None
    return plain_output_text(output, roles)


def output_data(item_data: dict | None, output: Any) -> dict:
    """The data a wrapped question reads for one output: the item with the output's text."""
    return {**(item_data or {}), OUTPUT_TEXT: output_text(output)}


def shown_outputs(item_data: dict | None) -> list[dict]:
    outputs = (item_data or {}).get(OUTPUTS)
    return [o for o in outputs if isinstance(o, dict)] if isinstance(outputs, list) else []


class PerOutput:
    """The per-output behaviour, mixed in before the kind's class (per_output_class)."""

    template: ClassVar[str] = "campaigns/questions/per_output.html"
    widget_reads_item: ClassVar[bool] = True
    answer_reads_item: ClassVar[bool] = True
    part_errors: ClassVar[bool] = True

    @cached_property
    def inner(self) -> BaseQuestion:
        """The same question asked of one text (the kind's own class and settings)."""
        kind = type(self).__mro__[2]
        return kind.model_validate({**self.model_dump(), "for_each_output": False})

    def supports(self, capability: Capability) -> bool:
        return capability in self.capabilities

    # --- answers ----------------------------------------------------------------------------

    def is_empty(self, raw: Any) -> bool:
        if isinstance(raw, dict):
            values = raw.get(BY_SYSTEM, raw.get(BY_POSITION))
            values = values.values() if isinstance(values, dict) else values
            if isinstance(values, list | tuple) or hasattr(values, "__iter__"):
                return all(self.inner.is_empty(v) for v in values)
        return raw is None or raw == "" or raw == [] or raw == {}

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
        qid = self.id
        if not isinstance(raw, dict) or set(raw) - {ORDER, BY_SYSTEM}:
            raise AnswerInvalid({qid: 'Expected an object with the keys "by_system" (each '
                                      'output\'s answer, keyed by system) and "order".'})
        systems = item_systems(item_data)
        if not systems:
            raise AnswerInvalid({qid: "This item carries no outputs to rate."})
        order = raw.get(ORDER, systems)
        if not isinstance(order, list) or sorted(map(str, order)) != sorted(systems):
            raise AnswerInvalid({f"{qid}.order": "The order must name each of the item's "
                                                 "systems once."})
        by_system = raw.get(BY_SYSTEM, {})
        if not isinstance(by_system, dict) or set(by_system) - set(systems):
            unknown = sorted(set(by_system) - set(systems)) if isinstance(by_system, dict) else []
            raise AnswerInvalid({qid: "Answers must be keyed by the item's systems"
                                      + (f"; unknown: {', '.join(unknown)}" if unknown else "")
                                      + "."})
        outputs = {o.get("system"): o for o in shown_outputs(item_data)}
        cleaned, errors = {}, {}
        for position, system in enumerate(order):
            value = by_system.get(system)
            if self.inner.is_empty(value):
                if self.required:
                    errors[f"{qid}.o{position}"] = (f"Please answer this question for "
                                                    f"{output_label(position)}.")
                continue
            try:
                cleaned[system] = self.inner.validate_answer(
                    value, output_data(item_data, outputs.get(system)))
            except AnswerInvalid as exc:
                errors.update({_at(key, qid, position): message
                               for key, message in exc.errors.items()})
        if errors:
            raise AnswerInvalid(errors)
        return {ORDER: list(order), BY_SYSTEM: cleaned}

    def example_answer(self, item_data: dict | None, rng: random.Random) -> dict:
        return {ORDER: item_systems(item_data), BY_SYSTEM: {
            o["system"]: self.inner.example_answer(output_data(item_data, o), rng)
            for o in shown_outputs(item_data)}}

    def widget(self, value: Any, item_data: dict | None, errors: dict[str, str]) -> dict:
        """Per shown output: its label, text, the wrapped question's widget and errors."""
        value = value if isinstance(value, dict) else {}
        by_system = value.get(BY_SYSTEM) if isinstance(value.get(BY_SYSTEM), dict) else {}
        by_position = value.get(BY_POSITION) if isinstance(value.get(BY_POSITION), list) else []
        rows = []
        for position, output in enumerate(shown_outputs(item_data)):
            own = by_system.get(output.get("system")) if by_system else (
                by_position[position] if position < len(by_position) else None)
            own_errors = _errors_at(errors, position, self.inner.id)
            rows.append({"position": position, "label": output_label(position),
                         "text": output_text(output), "html": output.get("html"),
                         "errors": own_errors, "value": own,
                         "extra": self.inner.widget(own, output_data(item_data, output),
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
        if not isinstance(answer, dict) or not isinstance(answer.get(BY_SYSTEM), dict):
            return []
        by_system = answer[BY_SYSTEM]
        order = answer.get(ORDER) if isinstance(answer.get(ORDER), list) else list(by_system)
        return [(system, part, value) for system in order if system in by_system
                for part, value in self.inner.atoms(by_system[system])]

    def atoms(self, answer: Any) -> list[tuple[str, Any]]:
        order = answer.get(ORDER) or list(answer[BY_SYSTEM])
        atoms: list[tuple[str, Any]] = []
        for n, system in enumerate(order, start=1):
            atoms.append((f"{n}.system", system))
            if system in answer[BY_SYSTEM]:
                atoms += [(_joined(n, part), value)
                          for part, value in self.inner.atoms(answer[BY_SYSTEM][system])]
        return atoms

    def parts(self, item_data: dict | None = None) -> list[str]:
        return self.parts_for(len(item_systems(item_data)) if item_data is not None else 0)

    def parts_for(self, n: int) -> list[str]:
        inner = self.inner.parts()
        return [p for i in range(1, n + 1) for p in (f"{i}.system",
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
        if not isinstance(answer, dict) or not isinstance(answer.get(BY_SYSTEM), dict):
            return answer
        return {**answer, BY_SYSTEM: {s: self.inner.rename_value(v, old, new)
                                      for s, v in answer[BY_SYSTEM].items()}}

    def dashboard_rows(self, reader: AnswerReader) -> Any:
        return self.inner.dashboard_rows(_PerSystemReader(reader, self.id))

    def dashboard_count(self, value: Any, counter: Counter, n: int) -> None:
        self.inner.dashboard_count(value, counter, n)

    def dashboard_charts(self) -> list[ChartSpec]:
        return self.inner.dashboard_charts()

    # --- LLM judges: the outputs in the item's order, labelled as on the page ---------------

    def prompt_section(self, item_data: dict | None) -> str:
        sections = [f"{prompt_heading(self)}\nAnswer this question once for each response "
                    "below, under its label."]
        for position, output in enumerate(shown_outputs(item_data)):
            inner = self.inner.prompt_section(output_data(item_data, output))
            sections.append(f"#### {output_label(position)}\n{output_text(output)}\n\n"
                            f"{inner.split(chr(10), 1)[1] if chr(10) in inner else ''}".rstrip())
        return "\n\n".join(sections)

    def prompt_answer(self, item_data: dict | None) -> str:
        labels = [output_label(i) for i in range(len(shown_outputs(item_data)))]
        return (f"an object keyed by response label ({', '.join(labels)}), each value "
                f"{self.inner.prompt_answer(item_data)}")

    def json_schema(self, item_data: dict | None) -> dict:
        """What a judge returns: one answer per response label (the systems and their order
        are the server's: never asked of the judge)."""
        outputs = shown_outputs(item_data) if item_data is not None else []
        labels = [output_label(i) for i in range(len(outputs))] if outputs else list(
            map(output_label, range(MAX_POSITIONS)))
        properties = {label: self.inner.json_schema(
            output_data(item_data, outputs[i]) if outputs else None)
            for i, label in enumerate(labels)}
        return {"type": "object", "properties": properties,
                "required": labels if (outputs and self.required) else [],
                "additionalProperties": False}

    def from_judge(self, parsed: Any, systems: list[str]) -> Any:
        """A judge's answer keyed by response label as a raw answer keyed by system (the
        prompt showed the outputs in `systems` order)."""
        if not isinstance(parsed, dict):
            return parsed
        labels = {output_label(i): system for i, system in enumerate(systems)}
        unknown = set(parsed) - set(labels)
        if unknown:
            return {BY_SYSTEM: parsed, ORDER: systems}  # refused by validate_answer
        return {ORDER: systems, BY_SYSTEM: {labels[k]: v for k, v in parsed.items()}}


class _PerSystemReader:
    """An AnswerReader over each output's answer, with its system (for the dashboard)."""

    def __init__(self, reader: AnswerReader, question_id: str):
        self.reader, self.question_id = reader, question_id

    def answers(self, question_id: str) -> Any:
        for _, answer, n in self.reader.answers(self.question_id):
            by_system = answer.get(BY_SYSTEM) if isinstance(answer, dict) else None
            for system, value in (by_system or {}).items():
                yield system, value, n

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
def per_output_class(kind: type[BaseQuestion]) -> type[BaseQuestion]:
    """The kind's class asked once per output (one class per kind, made once)."""
    capabilities = (kind.capabilities & KEPT) | ADDED
    return type(f"PerOutput{kind.__name__}", (PerOutput, kind),
                {"__module__": __name__, "capabilities": capabilities,
                 "__annotations__": {}})


def per_output(question: BaseQuestion) -> BaseQuestion:
    """The question as parsed, wrapped when it says `for_each_output`."""
    if not getattr(question, "for_each_output", False) or isinstance(question, PerOutput):
        return question
    return per_output_class(type(question)).model_validate(question.model_dump())
