"""Column planning: the fixed leading columns, then one column per atomic answer part.

The order is stable and documented in docs/exports.md: the meta columns below,
then each question of the schema in schema order with its parts in the kind's parts() order.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from ..schema import BaseQuestion, Capability, TaskSchema
from .pseudonyms import worker_pseudonym

# The values_list() fields read per annotation, in this order (see META_COLUMNS for the output).
# The answers come last, as JSON text (parsed with orjson, or spliced into jsonl unparsed).
SOURCE_FIELDS = (
    "id",
    "item__external_id",
    "item__system",
    "item__control",
    "worker_id",
    "worker__platform",
    "worker__platform_id",
    "assignment_id",
    "assignment__study_id",
    "assignment__session_id",
    "assignment__mturk_assignment_id",
    "assignment__mturk_hit_id",
    "assignment__completion_code",
    "assignment__started_at",
    "assignment__submitted_at",
    "created_at",
    "updated_at",
    "seconds_spent",
    "seconds_first",
    "control_passed",
    "assignment__allocation",
    "assignment__allocation_epoch",
    "provenance",  # as JSON text, NULL when empty (see source.ProvenanceText)
)
ANSWERS = len(SOURCE_FIELDS)
# Read as ISO 8601 text written by the database (see source.IsoUtc).
TIMESTAMP_FIELDS = frozenset(
    {"assignment__started_at", "assignment__submitted_at", "created_at", "updated_at"}
)

# Output columns; `worker_platform_id` only appears when raw worker ids were asked for.
META_COLUMNS = (
    "annotation_id",
    "item_id",
    "system",
    "control",
    "worker",
    "worker_platform",
    "worker_platform_id",
    "assignment_id",
    "study_id",
    "session_id",
    "mturk_assignment_id",
    "mturk_hit_id",
    "completion_code",
    "started_at",
    "submitted_at",
    "created_at",
    "updated_at",
    "seconds_spent",
    "seconds_first",
    "control_passed",
    "allocation",
    "allocation_epoch",
    "provenance",
)
LONG_COLUMNS = ("question", "part", "value")
# csv-long's `part` of a whole answer: an empty cell reads as NaN in pandas, and
# groupby(["question", "part"]) silently drops NaN keys, so the whole answers would vanish.
WHOLE_PART = "(whole)"

# A pseudonym is an HMAC; caching it per worker id saves most of the cost. Bounded, so memory
# stays flat even when every annotation has a different worker.
PSEUDONYM_CACHE_SIZE = 50_000


def column_name(question_id: str, part: str) -> str:
    return f"{question_id}.{part}" if part else question_id


@dataclass
class ColumnPlan:
    """What the export writes per annotation, fixed before the first row.

    Rows are built from SOURCE_FIELDS tuples for speed (a million rows per run): meta cells by
    position, answer cells by slicing each question's atoms into place.
    """

    campaign_id: int
    questions: list[BaseQuestion]
    line_counts: dict[str, int]
    raw_worker_ids: bool = False
    _parts: dict[str, dict[str, int]] = field(default_factory=dict, init=False)
    _layout: list[tuple[BaseQuestion, int, tuple[str, ...]]] = field(
        default_factory=list, init=False
    )
    _pseudonyms: dict[int, str] = field(default_factory=dict, init=False)
    _keyed: dict[str, bool] = field(default_factory=dict, init=False)
    _keys: dict[str, frozenset[str]] = field(default_factory=dict, init=False)
    _getters: dict[str, Any] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        offset = 0
        for q in self.questions:
            parts = tuple(self.question_parts(q))
            self._parts[q.id] = {p: offset + i for i, p in enumerate(parts)}
            self._layout.append((q, offset, parts))
            offset += len(parts)
        self.answer_width = offset
        self.control_passed_at = self.meta_columns.index("control_passed")

    def question_parts(self, question: BaseQuestion) -> list[str]:
        if question.supports(Capability.SIZED_BY_ANSWERS):
            return question.parts_for(self.line_counts.get(question.id, 0))
        return question.parts()

    @property
    def meta_columns(self) -> list[str]:
        return [c for c in META_COLUMNS if self.raw_worker_ids or c != "worker_platform_id"]

    @property
    def answer_columns(self) -> list[str]:
        return [column_name(q.id, p) for q, _, parts in self._layout for p in parts]

    def pseudonym(self, worker_id: int, platform: str, platform_id: str) -> str:
        name = self._pseudonyms.get(worker_id)
        if name is None:
            if len(self._pseudonyms) >= PSEUDONYM_CACHE_SIZE:
                self._pseudonyms.clear()
            name = worker_pseudonym(
                campaign_id=self.campaign_id, platform=platform, platform_id=platform_id
            )
            self._pseudonyms[worker_id] = name
        return name

    def meta(self, row: tuple) -> list[Any]:
        """The meta cells of one source row, in meta_columns order."""
        worker = self._pseudonyms.get(row[4]) or self.pseudonym(row[4], row[5], row[6])
        if self.raw_worker_ids:
            return [row[0], row[1], row[2], row[3], worker, row[5], row[6], *row[7:ANSWERS]]
        return [row[0], row[1], row[2], row[3], worker, row[5], *row[7:ANSWERS]]

    def atoms(self, answers: Any) -> Iterator[tuple[str, str, Any, str | None]]:
        """(question id, part, value, system) for each atomic judgment, in column order; the
        system is that of the output a per-output answer rates (else None: the item's)."""
        if not isinstance(answers, dict):
            return
        for q in self.questions:
            answer = answers.get(q.id)
            if answer is None:
                continue
            if q.for_each_output:
                for system, part, value in q.output_atoms(answer):
                    yield q.id, part, value, system
                continue
            if q.for_each_turn:  # one row per turn: its index, then the kind's part
                for turn, part, value in q.output_atoms(answer):
                    yield q.id, f"{turn}.{part}" if part else turn, value, None
                continue
            for part, value in _safe_atoms(q, answer):
                yield q.id, part, value, None

    def wide(self, answers: Any) -> list[Any]:
        """The answer cells of one annotation, aligned with answer_columns (None if absent)."""
        cells: list[Any] = [None] * self.answer_width
        if not isinstance(answers, dict):
            return cells
        for q, start, parts in self._layout:
            answer = answers.get(q.id)
            if answer is None:
                continue
            if self._keyed.get(q.id) and type(answer) is dict and answer.keys() == self._keys[q.id]:
                cells[start : start + len(parts)] = self._getters[q.id](answer)
                continue
            atoms = _safe_atoms(q, answer)
            if not atoms:
                continue
            names, values = zip(*atoms, strict=True)
            if names == parts[: len(names)]:  # the usual case: atoms come in parts() order
                cells[start : start + len(values)] = values
                self._learn(q, answer, values)
                continue
            index = self._parts[q.id]
            for part, value in atoms:
                at = index.get(part)
                if at is not None:
                    cells[at] = value
        return cells

    def _learn(self, question: BaseQuestion, answer: Any, values: tuple) -> None:
        # A fast path for answers shaped like a rubric's ({part: value} for exactly the parts):
        # itemgetter does in C what atoms() does in Python. It is switched on per question only
        # after checking once that it gives what atoms() gives.
        if question.id in self._keyed or len(values) < 2:
            return
        parts = tuple(self._parts[question.id])
        keyed = type(answer) is dict and answer.keys() == set(parts)
        if keyed:
            self._keys[question.id] = frozenset(parts)
            self._getters[question.id] = itemgetter(*parts)
            keyed = self._getters[question.id](answer) == values
        self._keyed[question.id] = keyed


def _safe_atoms(question: BaseQuestion, answer: Any) -> list[tuple[str, Any]]:
    # Answers were validated when stored, but the schema may have changed since: an answer its
    # question can no longer split is kept whole rather than failing the export.
    try:
        return question.atoms(answer)
    except (AttributeError, TypeError, ValueError, KeyError):
        return [("", json.dumps(answer, ensure_ascii=False, sort_keys=True))]


def plan_columns(
    *, campaign_id: int, schema: TaskSchema, line_counts: dict[str, int], raw_worker_ids: bool
) -> ColumnPlan:
    return ColumnPlan(
        campaign_id=campaign_id,
        questions=list(schema.questions),
        line_counts=line_counts,
        raw_worker_ids=raw_worker_ids,
    )
