"""LLM-judge import: raw judge output per item, parsed as a literal, stored as annotations.

A judge is a Worker of platform "llm" whose platform id is the judge's name; its answers live
in one submitted Assignment per judge. Judges hold no item slots: an item's slots_taken and
annotations_done count human work only. The same function imports past human results
(platform "account" or "link"), e.g. expert scores published with a dataset: one Worker per
original rater id, and each new rating of a regular item counts toward the item's progress
and k like a worker's submitted answer.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import F, Max
from django.db.models.functions import Greatest
from django.utils import timezone

from ..importing import ImportRejected, RowError, decode, detect_format, read_records
from ..importing.items import invisible_character
from ..models import Annotation, Assignment, AssignmentItem, Campaign, Item, Worker
from ..schema import AnswerInvalid, Capability, SchemaInvalid, TaskSchema, parse_schema
from ..schema.base import JudgeOutputInvalid
from ..schema.scoring import answer_values

MAX_OUTPUT_CHARS = 50_000  # literal_eval of a huge or deeply nested text costs memory
ITEM_COLUMNS = ("item", "item_id", "external_id", "id")
JUDGE_COLUMNS = ("judge", "model")
OUTPUT_COLUMNS = ("output", "raw_output", "raw", "response")
FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class JudgmentRow:
    row: int
    external_id: str
    judge: str
    output: str
    line: int | None = None


@dataclass(frozen=True)
class JudgmentImportResult:
    created: int
    updated: int
    judges: list[str]


class OutputInvalid(ValueError):
    """A judge's output is not a dictionary literal that fits the schema."""


def parse_judge_output(text: str) -> dict:
    """The dict literal in a judge's output (maybe inside prose or a ``` fence); never eval'd."""
    if not isinstance(text, str) or not text.strip():
        raise OutputInvalid("the output is empty")
    if len(text) > MAX_OUTPUT_CHARS:
        raise OutputInvalid(f"the output is longer than {MAX_OUTPUT_CHARS} characters")
    fenced = FENCE.search(text)
    body = fenced.group(1) if fenced else text
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        raise OutputInvalid("no {...} dictionary found in the output")
    try:
        parsed = ast.literal_eval(body[start : end + 1])
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise OutputInvalid(f"the dictionary does not parse ({type(exc).__name__})") from None
    if not isinstance(parsed, dict):
        raise OutputInvalid("expected a dictionary")
    return parsed


def judge_answers(schema: TaskSchema, parsed: dict) -> dict[str, Any]:
    """Map a judge's dict to answers keyed by question id.

    Keys that are question ids are taken as they are. Otherwise the schema must have one
    question a judge may answer part by part (a rubric: its criteria by position or id), and
    that question's kind maps the keys.
    """
    keys = {str(k) for k in parsed}
    if keys and keys <= {q.id for q in schema.questions}:
        return {str(k): v for k, v in parsed.items()}
    by_parts = [q for q in schema.questions if q.supports(Capability.JUDGED_BY_PARTS)]
    if len(by_parts) != 1:
        ids = ", ".join(q.id for q in schema.questions)
        raise OutputInvalid(f"keys {sorted(keys)} are not question ids ({ids})")
    question = by_parts[0]
    try:
        return {question.id: question.from_judge_parts(parsed)}
    except JudgeOutputInvalid as exc:
        raise OutputInvalid(str(exc)) from None


def read_judgment_file(content: bytes, filename: str, *, judge: str | None = None
                       ) -> list[JudgmentRow]:
    """Rows (item, judge, output) from a CSV, TSV or JSONL file; `judge` fills a missing column."""
    fmt = detect_format(filename)
    text = decode(content)
    rows, errors = [], []
    for row, line, record in read_records(text, fmt):
        if isinstance(record, RowError):
            errors.append(record)
            continue
        if not isinstance(record, dict):
            errors.append(RowError(row, "", "expected an object with item, judge and output", line))
            continue
        item = _first(record, ITEM_COLUMNS)
        name = _first(record, JUDGE_COLUMNS) or judge
        output = _first(record, OUTPUT_COLUMNS)
        missing = [what for what, value in (("item", item), ("judge", name), ("output", output))
                   if value in (None, "")]
        if missing:
            errors.append(RowError(row, "", f"missing {', '.join(missing)}", line))
            continue
        if not isinstance(output, str):  # JSONL may carry the dict itself
            output = repr(output)
        rows.append(JudgmentRow(row, str(item).strip(), str(name).strip(), output, line))
    if errors:
        raise ImportRejected(errors)
    if not rows:
        raise ImportRejected([RowError(None, "", "the file has no judgments")])
    return rows


def _first(record: dict, names: tuple[str, ...]):
    for name in names:
        if record.get(name) not in (None, ""):
            return record[name]
    return None


def judgments_import(
    *, campaign: Campaign, rows: list[JudgmentRow], platform: str = Worker.Platform.LLM
) -> JudgmentImportResult:
    """Store every judgment or none; raise ImportRejected with row-numbered errors.

    Re-importing the same judge and item updates its annotation instead of adding one.
    """
    if platform not in Worker.Platform.values:
        raise ImportRejected([RowError(None, "", f"unknown platform {platform!r}")])
    try:
        schema = parse_schema(campaign.schema)
    except SchemaInvalid as exc:
        raise ImportRejected([RowError(None, "", f"the campaign's schema is invalid: {exc}")]
                             ) from None
    cleaned = _check_rows(campaign, schema, rows)
    with transaction.atomic():
        return _store(campaign, platform, cleaned)


def _check_rows(campaign: Campaign, schema: TaskSchema, rows: list[JudgmentRow]) -> list[tuple]:
    items = {i.external_id: i for i in Item.objects.filter(
        campaign=campaign, external_id__in={r.external_id for r in rows}).only(
        "id", "external_id", "data", "control", "gold", "gold_tolerance")}
    errors: list[RowError] = []
    seen: dict[tuple[str, str], int] = {}
    cleaned = []
    for r in rows:
        if not r.judge or len(r.judge) > 200:
            errors.append(RowError(r.row, "judge", "a judge name of 1-200 characters", r.line))
            continue
        if hidden := invisible_character(r.judge):
            # The judge's name is a worker id: shown in the admin and exported as one.
            errors.append(RowError(r.row, "judge", hidden, r.line))
            continue
        item = items.get(r.external_id)
        if item is None:
            errors.append(RowError(r.row, "item", f"no item {r.external_id!r} in this campaign",
                                   r.line))
            continue
        if (r.judge, r.external_id) in seen:
            errors.append(RowError(r.row, "item", f"{r.judge} judged {r.external_id!r} already "
                                   f"in row {seen[(r.judge, r.external_id)]}", r.line))
            continue
        seen[(r.judge, r.external_id)] = r.row
        try:
            # The rules of a worker's save (validation, control outcome); judges hold no slot.
            values = answer_values(schema, item,
                                   judge_answers(schema, parse_judge_output(r.output)), None)
        except OutputInvalid as exc:
            errors.append(RowError(r.row, "output", str(exc), r.line))
            continue
        except AnswerInvalid as exc:
            errors.extend(RowError(r.row, f"output.{path}" if path else "output", message, r.line)
                          for path, message in exc.errors.items())
            continue
        cleaned.append((r.judge, item, values))
    if errors:
        raise ImportRejected(errors)
    return cleaned


def _judge_assignment(campaign: Campaign, platform: str, name: str) -> Assignment:
    worker, _ = Worker.objects.get_or_create(campaign=campaign, platform=platform,
                                             platform_id=name)
    # Two imports of the same judge at once would each create an assignment (and annotate
    # the same items twice): the worker's row lock makes them take turns.
    Worker.objects.select_for_update().filter(pk=worker.pk).first()
    assignment = (Assignment.objects.select_for_update()
                  .filter(campaign=campaign, worker=worker,
                          status=Assignment.Status.SUBMITTED).order_by("id").first())
    if assignment is None:
        now = timezone.now()
        assignment = Assignment.objects.create(
            campaign=campaign, worker=worker, status=Assignment.Status.SUBMITTED,
            deadline=now, submitted_at=now)
        # started_at is set on insert, after `now`: submitted before started would give a
        # negative time on task. An import took no time: submitted when started.
        Assignment.objects.filter(pk=assignment.pk).update(submitted_at=F("started_at"),
                                                           deadline=F("started_at"))
        assignment.refresh_from_db(fields=["submitted_at", "deadline", "started_at"])
    return assignment


def _store(campaign: Campaign, platform: str, cleaned: list[tuple]) -> JudgmentImportResult:
    created = updated = 0
    by_judge: dict[str, list[tuple[Item, dict]]] = {}
    for name, item, values in cleaned:
        by_judge.setdefault(name, []).append((item, values))
    for name, judged in by_judge.items():
        assignment = _judge_assignment(campaign, platform, name)
        existing = {a.item_id: a for a in Annotation.objects.filter(
            assignment=assignment, item__in=[i for i, _ in judged])}
        fresh = [(item, values) for item, values in judged if item.pk not in existing]
        now = timezone.now()
        for item, values in judged:
            if item.pk in existing:
                existing[item.pk].answers = values["answers"]
                existing[item.pk].control_passed = values["control_passed"]
                existing[item.pk].updated_at = now  # bulk_update skips auto_now
        if existing:
            Annotation.objects.bulk_update(list(existing.values()),
                                           ["answers", "control_passed", "updated_at"])
        human = platform != Worker.Platform.LLM
        _add_slots(assignment, [item for item, _ in fresh], holds_slot=human)
        if human:
            _count_done(campaign, [item.pk for item, _ in fresh if not item.control])
        Annotation.objects.bulk_create([
            Annotation(campaign=campaign, assignment=assignment, item=item,
                       worker_id=assignment.worker_id, answers=values["answers"],
                       control_passed=values["control_passed"])
            for item, values in fresh])
        created += len(fresh)
        updated += len(existing)
    return JudgmentImportResult(created=created, updated=updated, judges=sorted(by_judge))


def _add_slots(assignment: Assignment, items: list[Item], *, holds_slot: bool) -> None:
    """Keep the assignment's item list complete; judges take no item's slot, imported human
    raters do (their ratings are done work, as a worker's)."""
    last = assignment.slots.aggregate(n=Max("position"))["n"] or 0
    AssignmentItem.objects.bulk_create([
        AssignmentItem(assignment=assignment, item=item, position=last + n,
                       holds_slot=holds_slot)
        for n, item in enumerate(items, start=1)])


def _count_done(campaign: Campaign, item_ids: list[int]) -> None:
    """One more taken slot and done annotation per item (one rater: each item once).

    An item rated by more imported raters than the campaign's k grows its slots_wanted to
    what it holds, which keeps annotations_done <= slots_taken <= slots_wanted and hands the
    item out to nobody else. Items are locked in id order, as the worker paths lock them.
    """
    if not item_ids:
        return
    list(Item.objects.select_for_update().filter(pk__in=item_ids).order_by("pk")
         .values_list("pk"))
    Item.objects.filter(campaign=campaign, pk__in=item_ids).update(
        slots_wanted=Greatest(F("slots_wanted"), F("slots_taken") + 1),
        slots_taken=F("slots_taken") + 1, annotations_done=F("annotations_done") + 1)
