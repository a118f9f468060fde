"""Fair shares of the job queues: a researcher has at most JOBS_RUNNING_PER_RESEARCHER jobs
running on each queue at once (statistics, exports and imports, judge runs; annotate/celery.py),
so that one researcher's eight computations take one slot and leave the others to everyone else.

A job claimed over the cap is not run and not lost: it stays queued, its `waiting` field says
why, and when one of that researcher's jobs on the queue ends, the oldest waiting one is sent
again. The stale sweep (every few minutes) sends any waiting job whose wake-up was lost (its
starter killed, the broker down at that moment). Counting and waking take one PostgreSQL
advisory lock per researcher and queue, so a claim and the end of another job cannot both miss
each other.
"""
from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction

from ..models import JobStatus
from . import dispatch

# A kind of job (lifecycle.JobKind, which imports this module): its model, task, queue, owner.
JobKind = Any

logger = logging.getLogger(__name__)

# Every kind of job declared (kinds.py adds each one): a queue's cap counts all of its kinds.
REGISTERED: list[JobKind] = []


def cap() -> int:
    """Jobs one researcher may have running on one queue (0: no cap)."""
    return int(getattr(settings, "JOBS_RUNNING_PER_RESEARCHER", 0) or 0)


def _siblings(kind: JobKind) -> list[JobKind]:
    return [other for other in REGISTERED if other.queue == kind.queue]


def _owner_of(kind: JobKind, job) -> int | None:
    return kind.model.objects.filter(pk=job.pk).values_list(kind.owner, flat=True).first()


def _lock(queue: str, owner_id: int) -> None:
    """Held to the end of the caller's transaction: one counter of this researcher's queue."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s), %s)",
                       [f"jobs:{queue}", owner_id])


def _running(queue_kinds: list[JobKind], owner_id: int, but: tuple | None = None) -> int:
    """Their running jobs on the queue, `but` (kind, pk) aside: a re-delivered job's own."""
    total = 0
    for kind in queue_kinds:
        rows = kind.model.objects.filter(status=JobStatus.RUNNING, **{kind.owner: owner_id})
        if but is not None and but[0].model is kind.model:
            rows = rows.exclude(pk=but[1])
        total += rows.count()
    return total


def owner_at_cap(kind: JobKind, job) -> bool:
    """Whether the job's researcher already runs their share of its queue; if so the job is
    left queued with the reason (call inside the claim's transaction)."""
    limit = cap()
    owner_id = _owner_of(kind, job) if limit > 0 else None
    if owner_id is None:
        return False
    _lock(kind.queue, owner_id)
    running = _running(_siblings(kind), owner_id, but=(kind, job.pk))
    if running < limit:
        return False
    owner = get_user_model().objects.filter(pk=owner_id).values_list("username", flat=True)
    reason = (f"waiting for a free slot: {owner.first() or 'the researcher'} already has "
              f"{running} {kind.queue} job{'s' if running != 1 else ''} running (at most "
              f"{limit} at a time, JOBS_RUNNING_PER_RESEARCHER); this {kind.noun} starts as "
              "soon as one of them ends")
    kind.model.objects.filter(pk=job.pk).update(waiting=reason)
    logger.info("%s %s waits: its researcher %s is at the cap of %s on %s", kind.noun, job.pk,
                owner_id, limit, kind.queue)
    return True


def start_waiting(kind: JobKind, job) -> int:
    """After one of a researcher's jobs ends: send their oldest waiting jobs on its queue, as
    many as the cap now allows. Returns how many were sent."""
    owner_id = _owner_of(kind, job) if cap() > 0 else None
    return 0 if owner_id is None else _start_for(kind.queue, owner_id)


def start_all_waiting(kinds: tuple[JobKind, ...]) -> int:
    """Send every waiting job the cap allows now (the stale sweep's safety net)."""
    if cap() <= 0:
        return 0
    started = 0
    for queue in {kind.queue for kind in kinds}:
        owners = set()
        for kind in (k for k in kinds if k.queue == queue):
            owners |= set(kind.model.objects.filter(status=JobStatus.QUEUED)
                          .exclude(waiting="").values_list(kind.owner, flat=True))
        started += sum(_start_for(queue, owner_id) for owner_id in owners if owner_id)
    return started


def _queued_at(job):
    """When the job was queued (a kind that does not record it: when it was created)."""
    return job.queued_at or getattr(job, "created_at", None)


def _start_for(queue: str, owner_id: int) -> int:
    queue_kinds = [kind for kind in REGISTERED if kind.queue == queue]
    with transaction.atomic():
        _lock(queue, owner_id)
        free = cap() - _running(queue_kinds, owner_id)
        if free <= 0:
            return 0
        waiting = sorted(
            ((_queued_at(job), job.pk, kind) for kind in queue_kinds
             for job in kind.model.objects.filter(status=JobStatus.QUEUED, **{kind.owner: owner_id})
             .exclude(waiting="")),
            key=lambda entry: (entry[0] is None, entry[0], entry[1]))[:free]
        # Cleared under the lock: two jobs ending at once never send the same one twice.
        for _at, pk, kind in waiting:
            kind.model.objects.filter(pk=pk).update(waiting="")
    sent = 0
    for _at, pk, kind in waiting:
        try:
            dispatch.send(kind.task, **{kind.id_kwarg: pk})
            sent += 1
        except dispatch.QueueUnreachable as exc:
            kind.model.objects.filter(pk=pk, status=JobStatus.QUEUED).update(
                waiting=f"waiting: the task queue was unreachable ({exc}); it is sent again "
                        "within minutes")
    return sent
