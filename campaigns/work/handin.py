"""Handing work in: the submitted status, its time, the completion code; a full campaign closes."""
from __future__ import annotations

from datetime import datetime

from django.db import connection, transaction
from django.utils import timezone

from ..errors import Conflict, ServiceError
from ..models import Annotation, Assignment, AssignmentItem
from . import prepared
from .completion import (
    completion_code_for,
    failed_attention_checks,
    outcome_depends_on_checks,
)

__all__ = ["assignment_is_open", "assignment_submit", "campaign_close_if_full", "hand_in_values",
           "handed_in", "unanswered_positions"]

_REFRESHED = ("status", "deadline", "submitted_at", "completion_code")


def assignment_submit(*, assignment: Assignment) -> Assignment:
    """Mark the assignment submitted and give it its completion code; idempotent.

    Every item must have an annotation (Conflict naming the unanswered positions otherwise).
    A fully answered assignment that passed its deadline can still be submitted: all its
    items kept their slots, and the worker did the work. Saving the last answer hands the
    assignment in by itself (campaigns_save_answer); this is the explicit path.
    """
    with transaction.atomic():
        # Lock the assignment: a concurrent expiry or answer must not interleave between
        # the "all answered" check and the status change.
        row = _lock_assignment(assignment.pk)
        if row is None:
            raise ServiceError("This assignment no longer exists.", code="not_found", status=404)
        if row["status"] == Assignment.Status.SUBMITTED:
            _refresh(assignment, row)
            return assignment
        if row["status"] == Assignment.Status.RETURNED:
            raise Conflict("This assignment was returned; it can no longer be submitted.")
        missing = unanswered_positions(assignment.pk)
        if missing:
            if row["status"] == Assignment.Status.EXPIRED:
                raise Conflict("This assignment expired before every item was answered.")
            raise Conflict(
                "Please answer every item before submitting; still open: "
                + ", ".join(str(p) for p in missing) + ".",
                extra={"positions": missing},
            )
        _hand_in(assignment)
        campaign_close_if_full(campaign_id=assignment.campaign_id)
    handed_in(assignment)
    return assignment


def handed_in(assignment: Assignment) -> None:
    """What follows a hand-in on either path (the last answer's save, assignment_submit):
    the code for the outcome when it depends on the attention checks."""
    campaign = assignment.campaign
    if outcome_depends_on_checks(campaign):
        code = completion_code_for(assignment,
                                   failed_checks=failed_attention_checks(assignment.pk))
        if code != assignment.completion_code:
            Assignment.objects.filter(pk=assignment.pk).update(completion_code=code)
            assignment.completion_code = code


def campaign_close_if_full(*, campaign_id: int) -> bool:
    """Close a live campaign whose regular items all have their annotations; True if closed.

    The rule is the database function campaigns_close_if_full (sql/save_answer_v4.sql),
    which the last answer's save also runs when it hands an assignment in.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT campaigns_close_if_full(%s, %s)", [campaign_id, timezone.now()])
        return bool(cursor.fetchone()[0])


def _hand_in(assignment: Assignment) -> None:
    """Mark the locked, fully answered assignment submitted with its code (one UPDATE)."""
    values = hand_in_values(assignment)
    with connection.cursor() as cursor:  # plain SQL: no ORM compilation
        prepared.execute(
            cursor,
            f"UPDATE {Assignment._meta.db_table} SET status = %s, submitted_at = %s, "  # noqa: S608 (names only)
            "completion_code = %s WHERE id = %s",
            [str(values["status"]), values["submitted_at"], values["completion_code"],
             assignment.pk])
    for name, value in values.items():
        setattr(assignment, name, value)


def hand_in_values(assignment: Assignment) -> dict:
    """What handing the assignment in sets (not applied): status, time, completion code."""
    return {"status": Assignment.Status.SUBMITTED, "submitted_at": timezone.now(),
            "completion_code": completion_code_for(assignment)}


def _lock_assignment(pk: int) -> dict | None:
    """The assignment's fields that _refresh needs, its row locked for the transaction."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {', '.join(_REFRESHED)} FROM "  # noqa: S608 (names only)
                       f"{Assignment._meta.db_table} WHERE id = %s FOR NO KEY UPDATE", [pk])
        row = cursor.fetchone()
    return dict(zip(_REFRESHED, row, strict=True)) if row else None


def _refresh(assignment: Assignment, row: dict) -> None:
    for field in _REFRESHED:
        setattr(assignment, field, row[field])


def unanswered_positions(assignment_id: int) -> list[int]:
    """The positions of the assignment without an annotation, in order (one query)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT ai.position FROM {AssignmentItem._meta.db_table} ai "  # noqa: S608 (names only)
            f"WHERE ai.assignment_id = %s AND NOT EXISTS (SELECT 1 FROM "
            f"{Annotation._meta.db_table} an WHERE an.assignment_id = ai.assignment_id "
            "AND an.item_id = ai.item_id) ORDER BY ai.position", [assignment_id])
        return [position for (position,) in cursor.fetchall()]


def assignment_is_open(assignment: Assignment, now: datetime | None = None) -> bool:
    """Whether answers can still be given or changed (active and before the deadline)."""
    return (assignment.status == Assignment.Status.ACTIVE
            and assignment.deadline > (now or timezone.now()))
