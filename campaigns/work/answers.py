"""Saving a worker's answers for one item of an assignment, and scoring control items.

There is one way in: annotation_submit. It reads the assignment and the item (one query),
validates the answers against the campaign's schema, and stores them with one call of
campaigns_save_answer (sql/save_answer_v4.sql), which also hands the assignment in when the
answer was the last one missing.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.utils import timezone

from ..errors import Conflict, ServiceError
from ..models import Annotation, Assignment, AssignmentItem, Item
from ..schema import TaskSchema, campaign_schema
from ..schema.scoring import answer_values
from . import prepared
from .claim import new_row_json
from .expiry import assignment_answered
from .handin import hand_in_values, handed_in
from .reads import assignment_columns, assignment_from_row, model_columns, model_from_row

__all__ = ["AnnotationSaved", "annotation_submit"]

Answers = dict | Callable[[TaskSchema], dict]


@dataclass(frozen=True)
class AnnotationSaved:
    """What annotation_submit did: the stored annotation, whether this save handed the
    assignment in (it answered the last unanswered item), and the assignment (with its
    campaign, worker and item_count)."""

    annotation: Annotation
    handed_in: bool
    assignment: Assignment


def annotation_submit(*, position: int, answers: Answers, assignment: Assignment | None = None,
                      token: str | None = None,
                      seconds_spent: float | None = None,
                      provenance: Answers | None = None) -> AnnotationSaved:
    """Save the answers for the item at `position` (1-based); a repeat updates, never duplicates.

    The assignment is given as an object or by its token (the item pages know only the
    token). `answers` is a dict, or a function that reads them once the campaign's schema is
    known (the item pages parse the POST with it). When the save leaves every item answered,
    the assignment is handed in in the same transaction (status submitted, submitted_at,
    completion code) and `handed_in` says so.

    Raises AnswerInvalid (nothing stored) when the answers break the schema, ServiceError 404
    for an unknown token or a position outside the assignment, and Conflict (409) once the
    assignment is submitted, returned or past its deadline. `provenance` (a dict, or a
    function of the schema like `answers`) is the free-text answers' record
    (pages/answer_provenance.py), stored with the answer. The item's `annotations_done`
    grows only on the first save; attention-check and gold items get `control_passed`.
    """
    if (assignment is None) == (token is None):
        raise TypeError("annotation_submit needs an assignment or a token, not both.")
    seconds_spent = _clean_seconds(seconds_spent)
    read, item = _assignment_at(assignment.token if assignment else token, position)
    _check_open(read.status, read.deadline)  # a clear answer before validating
    schema = campaign_schema(read.campaign)
    if callable(answers):
        answers = answers(schema)
    values = answer_values(schema, item, answers, seconds_spent)
    if provenance is not None:
        values["provenance"] = provenance(schema) if callable(provenance) else provenance
    return _save_in_database(assignment or read, item, values)


_SAVE_SQL = ("SELECT outcome, status, deadline, annotation_id, created_at, handed_in "
             "FROM campaigns_save_answer(%s, %s, %s, %s::jsonb, %s, %s, %s)")


def _save_in_database(assignment: Assignment, item: Item, values: dict) -> AnnotationSaved:
    """The save as one call of campaigns_save_answer: lock the assignment, check it is open,
    insert the annotation (a repeat updates it), count it on a regular item, and hand the
    assignment in if no item is left unanswered."""
    hand_in = hand_in_values(assignment)
    annotation = Annotation(campaign_id=assignment.campaign_id, assignment_id=assignment.pk,
                            item=item, worker_id=assignment.worker_id, **values)
    with connection.cursor() as cursor:
        prepared.execute(cursor, _SAVE_SQL, [
            assignment.pk, item.pk, timezone.now(), new_row_json(annotation),
            not item.control, hand_in["submitted_at"], hand_in["completion_code"]])
        outcome, status, deadline, annotation_id, created_at, was_handed_in = cursor.fetchone()
    if outcome == "gone":
        raise ServiceError("This assignment no longer exists.", code="not_found", status=404)
    if outcome == "closed":  # submitted, returned or expired since it was read
        _check_open(status, deadline)
        raise Conflict("This assignment is closed; its answers can no longer change.")
    annotation.pk, annotation.created_at = annotation_id, created_at
    annotation._state.adding = False
    annotation._state.db = connection.alias
    if was_handed_in:
        for name, value in hand_in.items():
            setattr(assignment, name, value)
        handed_in(assignment)
    else:
        assignment.deadline = deadline
        assignment_answered(assignment)  # the first answer: the hold becomes the full timeout
    return AnnotationSaved(annotation, was_handed_in, assignment)


_BY_TOKEN_SQL: list[str] = []


def _assignment_at(token: str, position: int) -> tuple[Assignment, Item]:
    """(assignment with campaign, worker and item_count, the item at `position`), one read.

    Not locked: the save's function locks the assignment and checks its status again.
    """
    if not _BY_TOKEN_SQL:
        columns, joins = assignment_columns()
        _BY_TOKEN_SQL.append(
            f"SELECT {columns}, (SELECT COUNT(*) FROM "  # noqa: S608 (names from the models)
            f"{AssignmentItem._meta.db_table} n WHERE n.assignment_id = a.id), "
            f"{model_columns(Item, 'i')} FROM {AssignmentItem._meta.db_table} ai "
            f"JOIN {Assignment._meta.db_table} a ON a.id = ai.assignment_id {joins} "
            f"JOIN {Item._meta.db_table} i ON i.id = ai.item_id "
            "WHERE a.token = %s AND ai.position = %s")
    row = None
    if token and len(token) <= 64:
        with connection.cursor() as cursor:
            prepared.execute(cursor, _BY_TOKEN_SQL[0], [token, position])
            row = cursor.fetchone()
    assignment, rest = assignment_from_row(row)
    if assignment is None:
        raise ServiceError(f"This assignment has no item {position}.", code="not_found",
                           status=404)
    total, *item_values = rest
    assignment.item_count = int(total)
    return assignment, model_from_row(connections[DEFAULT_DB_ALIAS], Item, item_values)


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


# --- control items ---------------------------------------------------------------------------
