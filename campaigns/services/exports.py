"""Export jobs: create and enqueue, run (stream to a file in export storage), fail, sweep stale.

The job's state lives on its ExportJob row. A run claims the row by bumping `attempts`; every
later write of that run (progress, done) is conditional on that attempt number, so when a
re-delivered or re-queued message starts a newer attempt, the older run stops at its next chunk.
"""
from __future__ import annotations

import gzip
import io
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import IO, Any, TextIO

from django.conf import settings
from django.core.files import File
from django.core.files.storage import storages
from django.db import DatabaseError, InterfaceError, OperationalError, connection, transaction
from django.db.models import Q
from django.utils import timezone
from kombu.exceptions import KombuError

from ..errors import ServiceError
from ..exporting import FORMATS, annotation_chunks, export_scope, line_counts, plan_columns
from ..exporting.readahead import read_ahead, read_ahead_possible
from ..exporting.source import CHUNK_SIZE, ExportScope
from ..exporting.sql import sql_path_enabled, write_csv
from ..models import Campaign, ExportJob, Worker
from ..schema import SchemaInvalid, parse_schema
from ..selectors.campaigns import campaign_visible_to
from .spools import spool_open, spools_clean

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
OPTIONS = ("gzip", "raw_worker_ids", "exclude_flagged", "worker_platform")
# Whose rows an annotation export holds: people (the default), LLM judges, or both. LLM
# judges' answers come only on request, never mixed into a plain export of human work.
WORKER_PLATFORMS = ("human", "llm", "all")
ANALYSIS_FORMATS = {ExportJob.Format.ANALYSIS_CSV: "csv", ExportJob.Format.ANALYSIS_JSON: "json",
                    ExportJob.Format.ANALYSIS_MD: "md"}
# Publishing gives up quickly when the broker is down: the researcher is waiting on the page.
ENQUEUE_RETRY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}
# Errors worth another attempt (the task retries them); anything else fails the job.
TRANSIENT_ERRORS = (OperationalError, InterfaceError)


class Superseded(Exception):
    """A newer attempt took the job over; this run stops without touching the row."""


def stale_after() -> timedelta:
    """A running job whose heartbeat is older than this is considered lost."""
    return timedelta(seconds=getattr(settings, "EXPORT_STALE_SECONDS", 600))


def chunk_size() -> int:
    return int(getattr(settings, "EXPORT_CHUNK_SIZE", CHUNK_SIZE))


# --- creating and enqueueing -------------------------------------------------------------------


def export_job_create(
    *,
    campaign: Campaign,
    requested_by,
    fmt: str,
    options: dict[str, Any] | None = None,
    enqueue: bool = True,
) -> ExportJob:
    """Record an export job and queue it once the transaction commits.

    `requested_by` None means an operator at the shell. Raises ServiceError: 400 for an unknown
    format or option, 404 if the requester may not see the campaign, 503 if the task queue is
    unreachable (the job is then saved as failed with the reason). With enqueue=False the caller
    runs it (`export_job_run`), as `manage.py export_results` does.
    """
    if fmt not in ExportJob.Format.values:
        raise ServiceError(
            f"Unknown export format {fmt!r}; choose one of {', '.join(ExportJob.Format.values)}.",
            code="bad_format",
        )
    options = _clean_options(options)
    if requested_by is not None and not campaign_visible_to(requested_by, campaign):
        raise ServiceError("No such campaign.", code="not_found", status=404)
    job = ExportJob.objects.create(
        campaign=campaign, requested_by=requested_by, format=fmt, options=options
    )
    if enqueue:
        transaction.on_commit(lambda: export_job_enqueue(job=job))
    return job


def _clean_options(options: dict[str, Any] | None) -> dict[str, bool]:
    options = options or {}
    if not isinstance(options, dict):
        raise ServiceError("Export options must be an object.", code="bad_options")
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ServiceError(
            f"Unknown export option(s): {', '.join(unknown)}; known: {', '.join(OPTIONS)}.",
            code="bad_options",
        )
    for key, value in options.items():
        if key == "worker_platform":
            if value not in WORKER_PLATFORMS:
                raise ServiceError(f"Export option 'worker_platform' must be one of "
                                   f"{', '.join(WORKER_PLATFORMS)}.", code="bad_options")
        elif not isinstance(value, bool):
            raise ServiceError(f"Export option {key!r} must be true or false.", code="bad_options")
    return {key: value for key, value in options.items()
            if value and not (key == "worker_platform" and value == "human")}


def export_job_enqueue(*, job: ExportJob) -> None:
    """Send the job to the task queue; a broker that is down fails the job and raises 503."""
    try:
        _dispatch_run(job_id=job.pk)
    except (KombuError, OSError) as exc:
        reason = f"the task queue is unreachable: {exc}"
        export_job_fail(job_id=job.pk, message=reason)
        job.refresh_from_db()
        raise ServiceError(
            f"The export could not be started: {reason}. Try again later.",
            code="broker_unreachable",
            status=503,
        ) from None


def _dispatch_run(*, job_id: int) -> None:
    """Publish the run task (eagerly run in-process when no broker is configured)."""
    # Imported here: campaigns.tasks imports this module to call its services.
    from ..tasks import task_export_run

    task_export_run.apply_async(kwargs={"job_id": job_id}, retry=True, retry_policy=ENQUEUE_RETRY)


# --- running ------------------------------------------------------------------------------------


def export_job_run(*, job_id: int) -> None:
    """Run one job to done or failed; return quietly if it is gone or already finished.

    Transient database errors propagate (the Celery task retries them); any other error fails
    the job with a message.
    """
    job = _claim(job_id)
    if job is None:
        return
    try:
        _run(job)
    except Superseded:
        logger.info("export %s attempt %s was superseded by a newer attempt", job.pk, job.attempts)
    except ServiceError as exc:
        export_job_fail(job_id=job.pk, message=exc.message, attempt=job.attempts)
    except TRANSIENT_ERRORS:
        raise
    except Exception as exc:
        logger.exception("export %s failed", job.pk)
        export_job_fail(
            job_id=job.pk,
            message=f"unexpected error ({type(exc).__name__}): {exc}",
            attempt=job.attempts,
        )


def _claim(job_id: int) -> ExportJob | None:
    # The row lock makes two deliveries of the same job take turns: each gets its own attempt
    # number, and only the latest may record progress or the result.
    with transaction.atomic():
        job = ExportJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.status in (ExportJob.Status.DONE, ExportJob.Status.FAILED):
            return None
        if job.attempts >= MAX_ATTEMPTS:
            _fail_row(
                job,
                f"gave up after {job.attempts} attempts: the export's worker stopped each time "
                "(killed, restarted or out of memory)",
            )
            return None
        now = timezone.now()
        job.attempts += 1
        job.status = ExportJob.Status.RUNNING
        job.started_at = job.heartbeat_at = now
        job.rows_written, job.rows_total, job.error, job.finished_at = 0, None, "", None
        job.save(update_fields=["attempts", "status", "started_at", "heartbeat_at",
                                "rows_written", "rows_total", "error", "finished_at"])
    return job


def _run(job: ExportJob) -> None:
    campaign = job.campaign
    compress = bool(job.options.get("gzip"))
    started = time.perf_counter()
    with spool_open(job=job) as raw:
        with _text_stream(raw, compress=compress) as stream, _progress_without_flush_waits():
            if job.format in ANALYSIS_FORMATS:
                written, extension = _write_analysis(job, stream), ANALYSIS_FORMATS[job.format]
            else:
                written, extension = _write_annotations(job, stream), FORMATS[job.format].extension
        _progress(job)  # still ours? then store
        wrote = time.perf_counter()
        name = _store(raw, _file_name(job, campaign, extension, compress))
    _finish(job, name, written)
    logger.info("export %s: %s rows written in %.1fs, stored as %s in %.1fs", job.pk, written,
                wrote - started, name, time.perf_counter() - wrote)


def _other_platform_workers(campaign: Campaign, worker_platform: str) -> set[int]:
    """The workers an export's `worker_platform` leaves out: LLM judges for "human", people
    for "llm", nobody for "all"."""
    if worker_platform == "all":
        return set()
    workers = Worker.objects.filter(campaign=campaign)
    if worker_platform == "llm":
        workers = workers.exclude(platform=Worker.Platform.LLM)
    else:
        workers = workers.filter(platform=Worker.Platform.LLM)
    return set(workers.values_list("id", flat=True))


def _write_annotations(job: ExportJob, stream: TextIO) -> int:
    campaign = job.campaign
    try:
        schema = parse_schema(campaign.schema)
    except SchemaInvalid as exc:
        raise ServiceError(f"The campaign's task schema is invalid: {exc}") from None
    excluded = set(_flagged_workers(campaign) if job.options.get("exclude_flagged") else ())
    excluded |= _other_platform_workers(campaign, job.options.get("worker_platform", "human"))
    scope = export_scope(campaign_id=campaign.pk, excluded_workers=excluded)
    _progress(job, rows_total=scope.total)
    plan = plan_columns(
        campaign_id=campaign.pk,
        schema=schema,
        line_counts=line_counts(scope, schema),
        raw_worker_ids=_raw_ids_allowed(job),
    )
    if job.format in ("csv", "csv-long") and sql_path_enabled():
        written = write_csv(
            stream=stream, plan=plan, scope=scope, fmt=job.format,
            progress=lambda n: _progress(job, rows_written=n),
        )
        if written is not None:
            return written
    writer = FORMATS[job.format](stream, plan)
    writer.begin()
    written = 0
    for rows in _chunks(scope):
        writer.write_chunk(rows)
        written += len(rows)
        _progress(job, rows_written=written)
    writer.end()
    return written


def _chunks(scope: ExportScope) -> Iterator[list[tuple]]:
    def read() -> Iterator[list[tuple]]:
        return annotation_chunks(scope, chunk_size=chunk_size())

    return read_ahead(read) if read_ahead_possible() else read()


# The analysis imports pandas, numpy and scipy: loaded by the export run, which happens in a
# Celery worker, so that web processes (which import this module to create jobs) do without.


def _write_analysis(job: ExportJob, stream: TextIO) -> int | None:
    from ..exporting.analysis import write_analysis

    write_analysis(job=job, stream=stream)
    return None


def _flagged_workers(campaign: Campaign) -> set[int]:
    from ..selectors.analysis import flagged_worker_ids

    return set(flagged_worker_ids(campaign=campaign))


def _raw_ids_allowed(job: ExportJob) -> bool:
    # Raw platform ids identify people: only for an operator at the shell (no requester) or a
    # requester who (still) may see the campaign.
    if not job.options.get("raw_worker_ids"):
        return False
    return job.requested_by_id is None or campaign_visible_to(job.requested_by, job.campaign)


@contextmanager
def _text_stream(raw: IO[bytes], *, compress: bool) -> Iterator[TextIO]:
    binary: IO[bytes] = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if compress else raw
    text = io.TextIOWrapper(binary, encoding="utf-8", newline="")
    try:
        yield text
    finally:
        text.flush()
        text.detach()  # leave `raw` open for storing
        if compress:
            binary.close()


@contextmanager
def _progress_without_flush_waits() -> Iterator[None]:
    # A progress UPDATE per chunk is hundreds of commits; each would wait for its
    # WAL flush. Progress may be lost in a crash without harm (the run restarts from scratch),
    # so this session skips the wait until the run is written; the final "done" waits again.
    with connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit TO off")
    try:
        yield
    finally:
        try:
            with connection.cursor() as cursor:
                cursor.execute("RESET synchronous_commit")
        except DatabaseError:  # the connection is gone; a new one starts with the default
            pass


def _file_name(job: ExportJob, campaign: Campaign, extension: str, compress: bool) -> str:
    kind = "analysis" if job.format in ANALYSIS_FORMATS else job.format
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    name = f"{campaign.slug}/{campaign.slug}-{kind}-{job.pk}-{stamp}.{extension}"
    return name + ".gz" if compress else name


class _SpooledExport(File):
    """The finished temporary file. FileSystemStorage moves a file that has a path into place
    (a rename on the same disk) instead of copying it; other storages upload it."""

    def temporary_file_path(self) -> str:
        return self.file.name


def _store(raw: IO[bytes], name: str) -> str:
    raw.flush()
    raw.seek(0)
    return storages["exports"].save(name, _SpooledExport(raw, name=name))


def _progress(job: ExportJob, **fields: Any) -> None:
    """Record progress and the heartbeat, if this run still owns the job (one cheap UPDATE)."""
    updated = ExportJob.objects.filter(
        pk=job.pk, attempts=job.attempts, status=ExportJob.Status.RUNNING
    ).update(heartbeat_at=timezone.now(), **fields)
    if not updated:
        raise Superseded


def _finish(job: ExportJob, name: str, written: int | None) -> None:
    fields: dict[str, Any] = {"rows_written": written} if written is not None else {}
    now = timezone.now()
    updated = ExportJob.objects.filter(
        pk=job.pk, attempts=job.attempts, status=ExportJob.Status.RUNNING
    ).update(status=ExportJob.Status.DONE, file=name, finished_at=now, heartbeat_at=now, **fields)
    if not updated:  # taken over while we stored the file: this file is nobody's
        storages["exports"].delete(name)
        raise Superseded


# --- failing and sweeping -----------------------------------------------------------------------


def export_job_fail(*, job_id: int, message: str, attempt: int | None = None) -> bool:
    """Mark a job failed with a message (unless it is done, or `attempt` is no longer current)."""
    jobs = ExportJob.objects.filter(pk=job_id).exclude(status=ExportJob.Status.DONE)
    if attempt is not None:
        jobs = jobs.filter(attempts=attempt)
    now = timezone.now()
    return bool(
        jobs.update(status=ExportJob.Status.FAILED, error=message, finished_at=now,
                    heartbeat_at=now)
    )


def _fail_row(job: ExportJob, message: str) -> None:
    job.status, job.error = ExportJob.Status.FAILED, message
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "error", "finished_at"])


def export_jobs_sweep_stale(*, older_than: timedelta | None = None) -> int:
    """Re-queue (or, after MAX_ATTEMPTS, fail) running jobs whose heartbeat stopped.

    A worker killed mid-run leaves its job "running"; this makes sure it ends done or failed.
    Returns how many jobs it touched.
    """
    spools_clean()  # what killed attempts left on this host
    cutoff = timezone.now() - (older_than if older_than is not None else stale_after())
    stale = ExportJob.objects.filter(status=ExportJob.Status.RUNNING).filter(
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
    )
    touched = 0
    for job in stale.only("pk", "attempts", "heartbeat_at"):
        if job.attempts >= MAX_ATTEMPTS:
            touched += export_job_fail(
                job_id=job.pk,
                attempt=job.attempts,
                message=f"gave up after {job.attempts} attempts: the export's worker stopped "
                "responding each time",
            )
            continue
        # Conditional on the heartbeat we saw: a run that is alive after all keeps its job.
        requeued = ExportJob.objects.filter(
            pk=job.pk, status=ExportJob.Status.RUNNING, heartbeat_at=job.heartbeat_at
        ).update(status=ExportJob.Status.QUEUED, heartbeat_at=timezone.now())
        if requeued:
            touched += 1
            try:
                export_job_enqueue(job=job)
            except ServiceError:
                pass  # the job is now failed with the reason
    return touched
