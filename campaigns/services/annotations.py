"""Saving a worker's answers for one item of an assignment, and scoring control items."""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.db.models import F
from django.utils import timezone

from .. import prepared
from ..errors import Conflict, ServiceError
from ..models import Annotation, Assignment, AssignmentItem, Item
from ..schema import TaskSchema, parse_schema_cached, validate_answers
from ..selectors.assignments import (
    assignment_by_token,
    assignment_columns,
    assignment_from_row,
    model_columns,
    model_from_row,
)
from .assignments import (
    assignment_hand_in_locked,
    hand_in_params,
    hand_in_sql,
    hand_in_values,
    unanswered_positions,
)

__all__ = ["AnnotationSaved", "annotation_submit", "annotation_submit_at", "control_passed"]


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
            locked, total, item = _locking_assignment_by_token_pg(assignment.token, position)
            status, deadline = locked.status, locked.deadline
        else:
            slot = _slot_locking_assignment(assignment, position)
            status, deadline, item = slot.assignment.status, slot.assignment.deadline, slot.item
            total = None
        _check_open(status, deadline)
        values = _values(schema, item, answers, seconds_spent)
        if connection.vendor == "postgresql":
            return AnnotationSaved(*_save_pg(assignment, item, values, total))
        annotation, created = _upsert(assignment, item, values)
        if created and not item.control:
            # Control items hold no slot, so their counter stays 0 (the check constraint).
            with connection.cursor() as cursor:
                cursor.execute(f"UPDATE {Item._meta.db_table} SET annotations_done = "  # noqa: S608 (table name only)
                               "annotations_done + 1 WHERE id = %s", [item.pk])
        # Complete now? One query, which sees every other save of this assignment (the
        # assignment's lock serialises them).
        handed_in = not unanswered_positions(assignment.pk)
        if handed_in:
            assignment_hand_in_locked(assignment)
    return AnnotationSaved(annotation, handed_in)


def annotation_submit_at(
    *, token: str, position: int, read_answers: Callable[[TaskSchema], dict],
    seconds_spent: float | None = None,
) -> tuple[Assignment, AnnotationSaved]:
    """annotation_submit for the item pages, which know the assignment by its token: the
    statement that locks the assignment also reads it (campaign and worker attached), and
    the answers are read from the request by `read_answers(schema)` once the schema is known.

    One read fewer per saved answer on PostgreSQL. Raises as annotation_submit, and
    ServiceError 404 for an unknown token as for a position outside the assignment.
    """
    if connection.vendor != "postgresql":
        assignment = assignment_by_token(token=token)
        if assignment is None:
            raise ServiceError("No such assignment.", code="not_found", status=404)
        answers = read_answers(parse_schema_cached(assignment.campaign.schema))
        return assignment, annotation_submit(assignment=assignment, position=position,
                                             answers=answers, seconds_spent=seconds_spent)
    seconds_spent = _clean_seconds(seconds_spent)
    with transaction.atomic():
        assignment, total, item = _locking_assignment_by_token_pg(token, position)
        _check_open(assignment.status, assignment.deadline)
        schema = parse_schema_cached(assignment.campaign.schema)
        values = _values(schema, item, read_answers(schema), seconds_spent)
        return assignment, AnnotationSaved(*_save_pg(assignment, item, values, total))


def _values(schema: TaskSchema, item: Item, answers: dict, seconds_spent: float | None) -> dict:
    """The annotation's stored values: the validated answers (AnswerInvalid otherwise), the
    time spent and, for an attention-check or gold item, whether it was passed."""
    cleaned = validate_answers(schema, answers, item.data)
    passed = control_passed(schema, item, cleaned) if item.control else None
    return {"answers": cleaned, "seconds_spent": seconds_spent, "control_passed": passed}


_SAVE_SQL: dict[tuple[bool, bool], str] = {}


def _save_sql(count: bool, hand_in: bool) -> str:
    """INSERT the annotation unless it exists, in one statement with (`count`) the item's
    counter, only if a row was inserted, and (`hand_in`) the assignment's hand-in."""
    key = (count, hand_in)
    if key not in _SAVE_SQL:
        fields = [f for f in Annotation._meta.concrete_fields if not f.primary_key]
        sql = (f"WITH ins AS (INSERT INTO {Annotation._meta.db_table} "  # noqa: S608 (names only)
               f"({', '.join(f.column for f in fields)}) VALUES "
               f"({', '.join(['%s'] * len(fields))}) "
               "ON CONFLICT (assignment_id, item_id) DO NOTHING RETURNING id)")
        if count:
            sql += (f", counted AS (UPDATE {Item._meta.db_table} SET annotations_done = "  # noqa: S608 (names only)
                    "annotations_done + 1 WHERE id = %s AND EXISTS (SELECT 1 FROM ins))")
        if hand_in:
            sql += f", handed AS ({hand_in_sql()})"
        _SAVE_SQL[key] = sql + " SELECT id FROM ins"  # noqa: S608 (names only)
    return _SAVE_SQL[key]


def _save_pg(assignment: Assignment, item: Item, values: dict,
             total: int) -> tuple[Annotation, bool]:
    """The save on PostgreSQL in plain SQL, the assignment locked by the caller.

    A first save is one statement: the insert, the item's counter (regular items: control
    items hold no slot) and, for a one-item assignment, the hand-in. A repeat (the insert
    found the row) updates it. An assignment of several items is handed in by one more
    statement if no item is left unanswered.
    """
    hand_in = hand_in_values(assignment)
    annotation = Annotation(campaign_id=assignment.campaign_id, assignment_id=assignment.pk,
                            item=item, worker_id=assignment.worker_id, **values)
    fields = [f for f in Annotation._meta.concrete_fields if not f.primary_key]
    params = [f.get_db_prep_save(f.pre_save(annotation, True), connection) for f in fields]
    count = not item.control
    if count:
        params.append(item.pk)
    if total == 1:  # its only item, saved now: the work is complete
        params += hand_in_params(assignment, hand_in)
    with connection.cursor() as cursor:
        prepared.execute(cursor, _save_sql(count, total == 1), params)
        row = cursor.fetchone()
        if row is not None:
            annotation.pk = row[0]
            annotation._state.adding = False
            annotation._state.db = connection.alias
        else:  # saved before: the answers change, the counter does not
            annotation = _update_pg(cursor, assignment, item, values)
        if total == 1:
            handed_in = True
        else:
            prepared.execute(cursor, hand_in_sql(if_complete=True),
                             hand_in_params(assignment, hand_in, if_complete=True))
            handed_in = cursor.rowcount == 1
    if handed_in:
        for name, value in hand_in.items():
            setattr(assignment, name, value)
    return annotation, handed_in


def _update_pg(cursor, assignment: Assignment, item: Item, values: dict) -> Annotation:
    names = [*values, "updated_at"]
    fields = [Annotation._meta.get_field(name) for name in names]
    probe = Annotation(**values)
    params = [f.get_db_prep_save(f.pre_save(probe, False), connection) for f in fields]
    cursor.execute(
        f"UPDATE {Annotation._meta.db_table} an SET "  # noqa: S608 (names only)
        f"{', '.join(f'{f.column} = %s' for f in fields)} "
        f"WHERE an.assignment_id = %s AND an.item_id = %s "
        f"RETURNING {model_columns(Annotation, 'an')}",
        [*params, assignment.pk, item.pk])
    annotation = model_from_row(connections[DEFAULT_DB_ALIAS], Annotation,
                                list(cursor.fetchone()))
    annotation.item = item
    return annotation


_LOCK_BY_TOKEN_SQL: list[str] = []


def _locking_assignment_by_token_pg(token: str, position: int) -> tuple[Assignment, int, Item]:
    """(assignment with campaign and worker, number of items, item at `position`), the
    assignment row locked (one query).

    _slot_locking_assignment's query written out (FOR NO KEY UPDATE OF the assignment), so
    that saving an answer compiles no ORM query. After the lock the row read is the newest
    version (PostgreSQL rechecks a locked row), so its status and deadline are current; the
    number of items never changes after the claim, so this statement's snapshot is enough.
    """
    if not _LOCK_BY_TOKEN_SQL:
        columns, joins = assignment_columns()
        _LOCK_BY_TOKEN_SQL.append(
            f"SELECT {columns}, (SELECT COUNT(*) FROM "  # noqa: S608 (names from the models)
            f"{AssignmentItem._meta.db_table} n WHERE n.assignment_id = a.id), "
            f"{model_columns(Item, 'i')} FROM {AssignmentItem._meta.db_table} ai "
            f"JOIN {Assignment._meta.db_table} a ON a.id = ai.assignment_id {joins} "
            f"JOIN {Item._meta.db_table} i ON i.id = ai.item_id "
            "WHERE a.token = %s AND ai.position = %s FOR NO KEY UPDATE OF a")
    row = None
    if token and len(token) <= 64:
        with connection.cursor() as cursor:
            prepared.execute(cursor, _LOCK_BY_TOKEN_SQL[0], [token, position])
            row = cursor.fetchone()
    if row is None:
        raise ServiceError(f"This assignment has no item {position}.", code="not_found",
                           status=404)
    assignment, (total, *item_values) = assignment_from_row(list(row))
    assignment.item_count = int(total)
    return (assignment, int(total),
            model_from_row(connections[DEFAULT_DB_ALIAS], Item, item_values))


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


def _upsert(assignment: Assignment, item: Item, values: dict) -> tuple[Annotation, bool]:
    """The save on SQLite (the embedded demo) through the ORM."""
    # Read-then-write is safe here: the caller holds the assignment's lock, so no other save
    # for this assignment runs between the read and the insert (and the unique constraint on
    # (assignment, item) would refuse a duplicate anyway).
    annotation = Annotation.objects.filter(assignment_id=assignment.pk, item_id=item.pk).first()
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
