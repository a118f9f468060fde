"""Saving a worker's answers for one item of an assignment, and scoring control items."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.db.models import F
from django.utils import timezone

from ..errors import Conflict, ServiceError
from ..models import Annotation, Assignment, AssignmentItem, Item
from ..schema import TaskSchema, parse_schema_cached, validate_answers
from ..selectors.assignments import model_columns, model_from_row
from .assignments import assignment_hand_in_locked, unanswered_positions

__all__ = ["AnnotationSaved", "annotation_submit", "control_passed"]


@dataclass(frozen=True)
class AnnotationSaved:
    """What annotation_submit did: the stored annotation, and whether this save handed the
    assignment in (it answered the last unanswered item)."""

    annotation: Annotation
    handed_in: bool


def annotation_submit(*, assignment: Assignment, position: int, answers: dict,
                      seconds_spent: float | None = None) -> AnnotationSaved:
    """Save the answers for the item at `position` (1-based); a repeat updates, never duplicates.

    When the save leaves every item of the assignment answered, the assignment is handed in
    in the same transaction (status submitted, submitted_at, completion code: what
    assignment_submit does), and `handed_in` says so.

    Raises AnswerInvalid (nothing stored) when the answers break the schema, ServiceError 404
    for a position outside the assignment, and Conflict (409) once the assignment is
    submitted, returned or past its deadline. The item's `annotations_done` grows only on
    the first save; attention-check and gold items get `control_passed`.
    """
    schema = parse_schema_cached(assignment.campaign.schema)
    seconds_spent = _clean_seconds(seconds_spent)
    with transaction.atomic():
        if connection.vendor == "postgresql":
            status, deadline, total, item = _item_locking_assignment_pg(assignment, position)
        else:
            slot = _slot_locking_assignment(assignment, position)
            status, deadline, item = slot.assignment.status, slot.assignment.deadline, slot.item
            total = None
        _check_open(status, deadline)
        cleaned = validate_answers(schema, answers, item.data)
        passed = control_passed(schema, item, cleaned) if item.control else None
        annotation, created = _upsert(assignment, item, cleaned, seconds_spent, passed)
        if created and not item.control:
            # Control items hold no slot, so their counter stays 0 (the check constraint).
            with connection.cursor() as cursor:
                cursor.execute(f"UPDATE {Item._meta.db_table} SET annotations_done = "  # noqa: S608 (table name only)
                               "annotations_done + 1 WHERE id = %s", [item.pk])
        # Complete now? A one-item assignment is (its only item was just saved); otherwise
        # one query, which sees every other save of this assignment: they hold its lock too.
        handed_in = total == 1 or not unanswered_positions(assignment.pk)
        if handed_in:
            assignment_hand_in_locked(assignment)
    return AnnotationSaved(annotation, handed_in)


_LOCK_SQL: list[str] = []


def _item_locking_assignment_pg(assignment: Assignment, position: int) -> tuple:
    """(status, deadline, number of items, item at `position`), the assignment row locked as
    below (one query).

    _slot_locking_assignment's query written out (FOR NO KEY UPDATE OF the assignment), so
    that saving an answer compiles no ORM query. The number of items never changes after
    the claim, so reading it in this statement's snapshot is safe.
    """
    if not _LOCK_SQL:
        _LOCK_SQL.append(
            f"SELECT a.status, a.deadline, (SELECT COUNT(*) FROM "  # noqa: S608 (names from the models)
            f"{AssignmentItem._meta.db_table} n WHERE n.assignment_id = a.id), "
            f"{model_columns(Item, 'i')} FROM {AssignmentItem._meta.db_table} ai "
            f"JOIN {Assignment._meta.db_table} a ON a.id = ai.assignment_id "
            f"JOIN {Item._meta.db_table} i ON i.id = ai.item_id "
            "WHERE ai.assignment_id = %s AND ai.position = %s FOR NO KEY UPDATE OF a")
    with connection.cursor() as cursor:
        cursor.execute(_LOCK_SQL[0], [assignment.pk, position])
        row = cursor.fetchone()
    if row is None:
        raise ServiceError(f"This assignment has no item {position}.", code="not_found",
                           status=404)
    return (row[0], row[1], row[2],
            model_from_row(connections[DEFAULT_DB_ALIAS], Item, list(row[3:])))


def _slot_locking_assignment(assignment: Assignment, position: int) -> AssignmentItem:
    """The item at `position`, with the assignment row locked for the transaction (one query).

    The lock: an expiry or return must not free this item's slot while the answer is being
    saved (annotations_done would pass slots_taken), and two saves of the same item (double
    click, retry) are serialised into one insert and one update.
    """
    slots = (AssignmentItem.objects.filter(assignment_id=assignment.pk, position=position)
             .select_related("item", "assignment"))
    if connection.features.has_select_for_update:
        slots = slots.select_for_update(of=("assignment",),
                                        no_key=connection.vendor == "postgresql")
    else:  # SQLite: take the database write lock first (writers are serialised)
        Assignment.objects.filter(pk=assignment.pk).update(id=F("id"))
    slot = slots.first()
    if slot is None:
        raise ServiceError(f"This assignment has no item {position}.", code="not_found",
                           status=404)
    return slot


def _clean_seconds(value: Any) -> float | None:
    """A usable duration or None: the client's timer is a hint, never a reason to fail."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _check_open(status: str, deadline) -> None:
    if status == Assignment.Status.SUBMITTED:
        raise Conflict("This assignment was already submitted; its answers can no longer change.")
    if status == Assignment.Status.RETURNED:
        raise Conflict("This assignment was returned; its answers can no longer change.")
    if status == Assignment.Status.EXPIRED or deadline <= timezone.now():
        raise Conflict("The time for this assignment has run out; answers can no longer be "
                       "saved. Please start again from the study link.", code="expired")


def _upsert(assignment: Assignment, item: Item, answers: dict, seconds_spent: float | None,
            passed: bool | None) -> tuple[Annotation, bool]:
    values = {"answers": answers, "seconds_spent": seconds_spent, "control_passed": passed}
    # Read-then-write is safe here: the caller holds the assignment's lock, so no other save
    # for this assignment runs between the read and the insert (and the unique constraint on
    # (assignment, item) would refuse a duplicate anyway).
    with connection.cursor() as cursor:  # plain SQL: no ORM compilation on the hot path
        cursor.execute(f"SELECT {model_columns(Annotation, 'an')} "  # noqa: S608 (names only)
                       f"FROM {Annotation._meta.db_table} an "
                       "WHERE an.assignment_id = %s AND an.item_id = %s", [assignment.pk, item.pk])
        row = cursor.fetchone()
    annotation = (model_from_row(connections[DEFAULT_DB_ALIAS], Annotation, list(row))
                  if row else None)
    if annotation is None:
        annotation = Annotation.objects.create(
            campaign_id=assignment.campaign_id, assignment_id=assignment.pk, item=item,
            worker_id=assignment.worker_id, **values)
        return annotation, True
    for name, value in values.items():
        setattr(annotation, name, value)
    annotation.save(update_fields=[*values, "updated_at"])
    return annotation, False


# --- control items ---------------------------------------------------------------------------

def control_passed(schema: TaskSchema, item: Item, answers: dict) -> bool | None:
    """Whether cleaned answers match an attention-check or gold item's expected answers.

    Every atomic part named in `item.gold` must match: numbers within `item.gold_tolerance`
    (exact without one), text ignoring case and surrounding spaces. None when the item has
    no expected answers.
    """
    if not item.gold:
        return None
    tolerance = item.gold_tolerance or 0.0
    for question_id, expected in item.gold.items():
        try:
            question = schema.question(question_id)
        except KeyError:
            continue  # a question removed from the schema after import checks nothing
        given = answers.get(question_id)
        if given is None:
            return False
        got = dict(question.atoms(given))
        for part, value in question.atoms(expected):
            if value in (None, "") and part:
                continue  # parts the gold answer leaves open (e.g. no rewrite expected)
            if not _same(value, got.get(part), tolerance):
                return False
    return True


def _same(expected: Any, given: Any, tolerance: float) -> bool:
    if _is_number(expected) and _is_number(given):
        return abs(float(expected) - float(given)) <= tolerance + 1e-9
    if isinstance(expected, str) and isinstance(given, str):
        return expected.strip().casefold() == given.strip().casefold()
    return expected == given


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
