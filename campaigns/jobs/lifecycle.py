"""The one lifecycle of every background job (exports, imports, judge runs, statistics).

A job's state lives on its row (a BackgroundJob):

    queued --claim--> running --work--> done
       ^                 |  \\--------> failed     (the work's error, or attempts used up)
       |                 |
       +--- stale sweep -+   (heartbeat stopped: re-queued, or failed once attempts are used)
    queued/running --cancel--> cancelled;   failed/cancelled --retry--> queued

- A claim, under the row's lock, bumps `attempts`; the run's later writes (heartbeat,
  progress, done) are conditional on that attempt number and on the row still running, so a
  re-delivered message's newer attempt, or a cancel, makes the older run stop at its next write.
- Attempts: a job whose worker stopped (killed, restarted, out of memory) `max_attempts` times
  since it was last queued is failed rather than tried for ever (kinds.py states the policy).
  A retry on request starts a fresh allowance (`queued_attempts`).
- The stale sweep (one periodic task for every kind) re-queues running jobs whose heartbeat
  is older than the kind's `stale_after`; a row a live run holds locked is skipped.
- Fair shares: a researcher has at most JOBS_RUNNING_PER_RESEARCHER jobs running on each
  queue (fairness.py); a claim over that cap leaves the job queued with the reason in its
  `waiting` field, and the end of one of their jobs (or the stale sweep) starts it.
- Memory: a run in a worker may allocate at most JOB_MEMORY_LIMIT_MB (memory.py); past it the
  job fails with that reason.
- Each kind supplies only its work function (through `job_run`) and its own fields.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Model, Q
from django.utils import timezone

from annotate.celery import queue_of

from ..errors import Conflict, ServiceError
from ..models import JobStatus
from . import dispatch, fairness
from .memory import MemoryLimitExceeded, job_memory_limit

logger = logging.getLogger(__name__)

ACTIVE = (JobStatus.QUEUED, JobStatus.RUNNING)
ENDED_WITHOUT_SUCCESS = (JobStatus.FAILED, JobStatus.CANCELLED)


@dataclass(frozen=True)
class JobKind:
    """What the lifecycle needs to know of a kind of job; kinds.py declares each one."""

    noun: str  # how messages name one job: "export", "run", ...
    model: type[Model]
    task: str  # the Celery task's name (stable: queued messages carry it)
    id_kwarg: str  # the task's keyword argument naming the row
    stale_setting: str  # the setting with the seconds after which a silent run is lost
    max_attempts: int
    # Errors worth another delivery (the task retries them); any other error fails the job.
    transient: tuple[type[BaseException], ...] = ()
    # A running job can be cancelled (its run stops at its next heartbeat); False for a kind
    # whose run is one transaction, which cannot be stopped half-way.
    cancel_running: bool = True
    # The run and its outcome commit together, under the job row's lock (all or nothing).
    atomic: bool = False
    reset: dict[str, Any] = field(default_factory=dict)  # a new attempt's fresh progress
    related: tuple[str, ...] = ()  # select_related when a run loads its row
    # The lookup from a job to the researcher it counts against (the campaign's owner).
    owner: str = "campaign__owner"

    def __post_init__(self) -> None:
        fairness.REGISTERED.append(self)

    def stale_after(self) -> timedelta:
        return timedelta(seconds=getattr(settings, self.stale_setting))

    @property
    def queue(self) -> str:
        """The Celery queue its task goes to (annotate/celery.py routes every task)."""
        return queue_of(self.task)


class JobFailed(Exception):
    """The work cannot succeed: the job fails with this message (and these fields)."""

    def __init__(self, message: str, **fields: Any):
        super().__init__(message)
        self.message, self.fields = message, fields


class Stopped(Exception):
    """The run no longer owns its job (cancelled, or a newer attempt took it over)."""


# --- queueing ------------------------------------------------------------------------------


def job_enqueue(kind: JobKind, job) -> None:
    """Send the job to the task queue. A broker that is down fails the job with the reason
    (no queued row is left without a message) and raises a 503 ServiceError."""
    try:
        dispatch.send(kind.task, **{kind.id_kwarg: job.pk})
    except dispatch.QueueUnreachable as exc:
        reason = f"the task queue is unreachable: {exc}"
        job_fail(kind, job.pk, reason)
        job.refresh_from_db()
        raise ServiceError(f"The {kind.noun} could not be started: {reason}. Try again later.",
                           code="broker_unreachable", status=503) from None


def job_enqueue_on_commit(kind: JobKind, job) -> None:
    """Queue the job once the caller's transaction commits (so the worker finds the row)."""
    transaction.on_commit(lambda: job_enqueue(kind, job))


# --- running -------------------------------------------------------------------------------


def job_claim(kind: JobKind, job_id: int):
    """The job, now running as a new attempt; None if it is gone, has ended, or has used up
    its attempts (it is then failed)."""
    # The row lock makes two deliveries of the same job take turns: each gets its own attempt
    # number, and only the latest may record progress or the result.
    with transaction.atomic():
        job = (kind.model.objects.select_for_update(of=("self",)).select_related(*kind.related)
               .filter(pk=job_id).first())
        if job is None or job.status not in ACTIVE:
            return None
        used = job.attempts - job.queued_attempts
        if used >= kind.max_attempts:
            job_fail(kind, job.pk, f"gave up after {used} attempts: the {kind.noun}'s worker "
                     "stopped each time (killed, restarted or out of memory)")
            return None
        if fairness.owner_at_cap(kind, job):
            return None  # left queued with the reason; the end of another job starts it
        now = timezone.now()
        job.attempts += 1
        job.status, job.error, job.waiting = JobStatus.RUNNING, "", ""
        job.started_at = job.heartbeat_at = now
        job.finished_at = None
        for name, value in kind.reset.items():
            setattr(job, name, value)
        job.save(update_fields=["attempts", "status", "error", "waiting", "started_at",
                                "heartbeat_at",
                                "finished_at", *kind.reset])
    return job


def _owned(kind: JobKind, job):
    return kind.model.objects.filter(pk=job.pk, attempts=job.attempts, status=JobStatus.RUNNING)


def job_heartbeat(kind: JobKind, job, **fields: Any) -> bool:
    """Record the heartbeat (and progress fields) if this run still owns the job."""
    return bool(_owned(kind, job).update(heartbeat_at=timezone.now(), **fields))


def job_done(kind: JobKind, job, **fields: Any) -> bool:
    """Mark the job done with its result fields, if this run still owns it."""
    now = timezone.now()
    return bool(_owned(kind, job).update(status=JobStatus.DONE, finished_at=now,
                                         heartbeat_at=now, **fields))


def job_fail(kind: JobKind, job_id: int, message: str, *, attempt: int | None = None,
             **fields: Any) -> bool:
    """Mark a queued or running job failed with a message (unless `attempt` is no longer
    the current one)."""
    rows = kind.model.objects.filter(pk=job_id, status__in=ACTIVE)
    if attempt is not None:
        rows = rows.filter(attempts=attempt)
    now = timezone.now()
    return bool(rows.update(status=JobStatus.FAILED, error=message[:5000], finished_at=now,
                            heartbeat_at=now, **fields))


def job_run(kind: JobKind, job_id: int, work: Callable[[Any], dict],
            discard: Callable[[Any, dict], None] | None = None) -> None:
    """Claim the job and run `work(job)`, which returns the fields of its result (or raises
    JobFailed, or Stopped when it saw it no longer owns the job). Return quietly if the job
    is gone or has ended. `discard(job, fields)` undoes a result nobody owns any more (a
    newer attempt or a cancel came while it was being stored)."""
    job = job_claim(kind, job_id)
    if job is None:
        return
    try:
        _work_and_store(kind, job, work, discard)
    finally:
        fairness.start_waiting(kind, job)


def _work_and_store(kind: JobKind, job, work: Callable[[Any], dict],
                    discard: Callable[[Any, dict], None] | None) -> None:
    try:
        if kind.atomic:
            with transaction.atomic():
                if not list(_owned(kind, job).select_for_update().values_list("pk")):
                    raise Stopped  # a newer attempt claimed it meanwhile
                with job_memory_limit():
                    fields = work(job)
                if not job_done(kind, job, **fields):
                    raise Stopped
        else:
            with job_memory_limit():
                fields = work(job)
            if not job_done(kind, job, **fields):
                if discard is not None:
                    discard(job, fields)
                raise Stopped
    except Stopped:
        logger.info("%s %s attempt %s stopped: cancelled or taken over by a newer attempt",
                    kind.noun, job.pk, job.attempts)
    except JobFailed as exc:
        job_fail(kind, job.pk, exc.message, attempt=job.attempts, **exc.fields)
    except MemoryLimitExceeded as exc:
        logger.warning("%s %s went over its memory limit", kind.noun, job.pk)
        job_fail(kind, job.pk, f"the {kind.noun} {exc}", attempt=job.attempts)
    except ServiceError as exc:  # a rule of the domain the job's data breaks
        job_fail(kind, job.pk, exc.message, attempt=job.attempts)
    except kind.transient:
        raise  # the task retries: a new delivery, a new attempt
    except Exception as exc:
        logger.exception("%s %s failed", kind.noun, job.pk)
        job_fail(kind, job.pk, f"unexpected error ({type(exc).__name__}): {exc}",
                 attempt=job.attempts)


# --- on request: cancel, retry ---------------------------------------------------------------


def job_cancel(kind: JobKind, job):
    """Stop a queued (or, where the kind allows, running) job; 409 once it has ended. A running
    run stops at its next heartbeat; what it stored so far stays."""
    cancellable = ACTIVE if kind.cancel_running else (JobStatus.QUEUED,)
    changed = kind.model.objects.filter(pk=job.pk, status__in=cancellable).update(
        status=JobStatus.CANCELLED, finished_at=timezone.now(), waiting="")
    job.refresh_from_db()
    if not changed:
        what = " or ".join(cancellable)
        raise Conflict(f"The {kind.noun} is {job.status}; only a {what} {kind.noun} can be "
                       "cancelled.", extra={"status": job.status})
    return job


def job_retry(kind: JobKind, job, *, enqueue: bool = True):
    """Queue a failed or cancelled job again, with a fresh allowance of attempts; 409 for a
    job that is queued, running or done. Queued once the caller's transaction commits."""
    # `attempts` goes on counting: a cancelled attempt still finishing sees a newer one (or a
    # queued row) at its next write and stops there.
    changed = kind.model.objects.filter(pk=job.pk, status__in=ENDED_WITHOUT_SUCCESS).update(
        status=JobStatus.QUEUED, error="", waiting="", finished_at=None,
        queued_at=timezone.now(), queued_attempts=F("attempts"))
    job.refresh_from_db()
    if not changed:
        raise Conflict(f"The {kind.noun} is {job.status}; only a failed or cancelled "
                       f"{kind.noun} can be retried.", extra={"status": job.status})
    if enqueue:
        job_enqueue_on_commit(kind, job)
    return job


# --- the stale sweep -------------------------------------------------------------------------


def jobs_sweep_stale(kinds: tuple[JobKind, ...], *, older_than: timedelta | None = None) -> int:
    """Re-queue (or, with their attempts used up, fail) running jobs whose heartbeat stopped:
    a worker killed mid-run leaves its job running, and this makes sure it ends. Returns how
    many jobs it touched."""
    touched = 0
    for kind in kinds:
        cutoff = timezone.now() - (older_than if older_than is not None else kind.stale_after())
        requeued = []
        with transaction.atomic():
            # A row a live run holds locked (a kind whose run is one transaction) is not stale.
            stale = (kind.model.objects.select_for_update(skip_locked=True)
                     .filter(status=JobStatus.RUNNING)
                     .filter(Q(heartbeat_at__lt=cutoff)
                             | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)))
            for job in stale:
                used = job.attempts - job.queued_attempts
                if used >= kind.max_attempts:
                    touched += job_fail(kind, job.pk, f"gave up after {used} attempts: the "
                                        f"{kind.noun}'s worker stopped responding each time")
                    continue
                kind.model.objects.filter(pk=job.pk).update(
                    status=JobStatus.QUEUED, queued_at=timezone.now(),
                    heartbeat_at=timezone.now())
                requeued.append(job)
        for job in requeued:
            touched += 1
            try:
                job_enqueue(kind, job)
            except ServiceError:
                pass  # the job is now failed with the reason
    # A waiting job whose wake-up was lost (its starter killed, the broker down) starts here.
    return touched + fairness.start_all_waiting(kinds)
