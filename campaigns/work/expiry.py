"""Expiry: active assignments past their deadline give back the slots of unanswered items.

A new assignment's first deadline is a short first-answer hold (ASSIGNMENT_RESERVATION_MINUTES);
the first answer saved extends it to the campaign's full timeout. Work claimed and never
answered (a script's, even one that opens the pages, or a worker who closed the tab) is given
back in minutes.
A researcher can release an abandoned assignment before its deadline the same way.
"""
from __future__ import annotations

import time
from collections import Counter
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from ..models import Annotation, Assignment, AssignmentItem, Campaign, Item
from . import prepared
from .locking import for_update

__all__ = ["EXPIRE_BATCH", "LAZY_EXPIRY_SECONDS", "assignment_answered", "assignment_release",
           "assignments_expire", "expire_lazily", "first_deadline"]

EXPIRE_BATCH = 500
# The extension's commit does not wait for its WAL to reach the disk (synchronous_commit off
# for this transaction): lost in a crash, it is made again by the worker's next page, and the
# save does not wait for a second disk flush.
_OPENED_SQL = (f"UPDATE {Assignment._meta.db_table} SET deadline = %s "  # noqa: S608 (names from the models)
               "FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit "
               f"WHERE id = %s AND status = '{Assignment.Status.ACTIVE}' "
               "AND deadline > %s AND deadline < %s")
LAZY_EXPIRY_SECONDS = 5.0
_LAST_LAZY_EXPIRY: dict[int, float] = {}  # campaign id -> when this process last expired


def first_deadline(campaign: Campaign, now: datetime) -> datetime:
    """A new assignment's deadline: the first-answer hold, or the campaign's full timeout
    when the window is off (0) or not shorter."""
    timeout = timedelta(minutes=campaign.assignment_timeout_minutes)
    reservation = timedelta(minutes=settings.ASSIGNMENT_RESERVATION_MINUTES)
    return now + (reservation if timedelta(0) < reservation < timeout else timeout)


def assignment_answered(assignment: Assignment) -> None:
    """An answer of this open assignment was saved: the first-answer hold becomes the
    campaign's full timeout, counted from the claim. One conditional UPDATE, on the first
    answer only (later saves see the full deadline and write nothing); an assignment that
    expired meanwhile stays expired. Opening pages does not extend the hold: a script can
    open every page it claims."""
    full = assignment.started_at + timedelta(minutes=assignment.campaign.assignment_timeout_minutes)
    if assignment.deadline >= full - timedelta(seconds=1):  # already the full timeout
        return
    with connection.cursor() as cursor:  # the worker pages' hot path: a prepared statement
        prepared.execute(cursor, _OPENED_SQL, [full, assignment.pk, timezone.now(), full])
        if cursor.rowcount:
            assignment.deadline = full


def assignments_expire(*, now: datetime | None = None, campaign: Campaign | None = None) -> int:
    """Expire active assignments past their deadline; return how many were expired.

    Their unanswered items give their slot back (holds_slot=False, slots_taken - 1) and can
    be handed out again; answered items keep their slot and their annotation.
    """
    now = now or timezone.now()
    overdue = Assignment.objects.filter(status=Assignment.Status.ACTIVE, deadline__lte=now)
    if campaign is not None:
        overdue = overdue.filter(campaign=campaign)
    if not overdue.exists():  # the usual case at claim time: one indexed read, no transaction
        return 0
    total = 0
    while True:
        with transaction.atomic():
            # SKIP LOCKED: a concurrent expiry (task and lazy claim-time call) takes other
            # rows; an assignment locked by an answer being saved is expired on a later run.
            ids = list(for_update(overdue.order_by("id"), skip_locked=True)
                       .values_list("id", flat=True)[:EXPIRE_BATCH])
            if ids:
                _release(ids)
        total += len(ids)
        if len(ids) < EXPIRE_BATCH:
            return total


def expire_lazily(campaign: Campaign, now: datetime) -> bool:
    """Expire the campaign's overdue assignments, at most every few seconds per process.

    Every claim checking would cost a query each; the periodic task and the retry in
    assignment_claim (when no work is found) keep reclaimed items flowing in between.
    """
    clock = time.monotonic()
    last = _LAST_LAZY_EXPIRY.get(campaign.pk)
    if last is not None and clock - last < LAZY_EXPIRY_SECONDS:
        return False
    _LAST_LAZY_EXPIRY[campaign.pk] = clock
    assignments_expire(now=now, campaign=campaign)
    return True


def assignment_release(*, assignment_id: int) -> bool:
    """Return an active assignment now (an abandoned one holding its items until its
    deadline): its unanswered items give their slot back, its answered items stay answered.
    False when it is no longer active (submitted, expired or returned meanwhile)."""
    with transaction.atomic():
        # The lock: a save of its last answer (which would hand it in) and this release
        # must not interleave.
        locked = list(for_update(Assignment.objects.filter(
            pk=assignment_id, status=Assignment.Status.ACTIVE)).values_list("id", flat=True))
        if locked:
            _release(locked, status=Assignment.Status.RETURNED)
    return bool(locked)


def _release(assignment_ids: list[int], status: str = Assignment.Status.EXPIRED) -> None:
    """Close locked active assignments (expired, or returned by a researcher) and give back
    the slots of their unanswered items."""
    Assignment.objects.filter(pk__in=assignment_ids, status=Assignment.Status.ACTIVE).update(
        status=status)
    answered = Annotation.objects.filter(assignment=OuterRef("assignment"), item=OuterRef("item"))
    freed = list(
        AssignmentItem.objects.filter(assignment__in=assignment_ids, holds_slot=True)
        .exclude(Exists(answered))
        .values_list("id", "item_id", "item__control")
    )
    if not freed:
        return
    AssignmentItem.objects.filter(pk__in=[pk for pk, _, _ in freed]).update(holds_slot=False)
    per_item = Counter(item_id for _, item_id, control in freed if not control)
    by_count: dict[int, list[int]] = {}
    for item_id, count in per_item.items():
        by_count.setdefault(count, []).append(item_id)
    # Lock the items in id order first: two releases (the periodic task and a claim-time
    # call) sharing items then wait for each other instead of deadlocking.
    list(for_update(Item.objects.filter(pk__in=per_item).order_by("pk")).values_list("pk"))
    for count, item_ids in sorted(by_count.items()):
        Item.objects.filter(pk__in=item_ids).update(slots_taken=F("slots_taken") - count)
