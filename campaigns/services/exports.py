"""Export jobs: create and enqueue, and the work of a run (stream to a file in export storage).

The job's lifecycle (claim, heartbeat, attempts, stale sweep, cancel, retry) is
campaigns/jobs/lifecycle.py's; a run's progress doubles as its heartbeat, so when a
re-delivered message starts a newer attempt, or the job is cancelled, the older run stops at
its next chunk.
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
from django.db import DatabaseError, connection
from django.utils import timezone

from ..errors import ServiceError
from ..exporting import FORMATS, annotation_chunks, export_scope, line_counts, plan_columns
from ..exporting.readahead import read_ahead, read_ahead_possible
from ..exporting.source import CHUNK_SIZE, ExportScope
from ..exporting.sql import sql_path_enabled, write_csv
from ..jobs.kinds import EXPORT
from ..jobs.lifecycle import (
    JobFailed,
    Stopped,
    job_enqueue,
    job_enqueue_on_commit,
    job_heartbeat,
    job_run,
    jobs_sweep_stale,
)
from ..models import Campaign, ExportJob, Worker
from ..schema import SchemaInvalid, parse_schema
from ..selectors.campaigns import campaign_visible_to
from .spools import spool_open, spools_clean

logger = logging.getLogger(__name__)

OPTIONS = ("gzip", "raw_worker_ids", "exclude_flagged", "worker_platform")
# Whose rows an annotation export holds: people (the default), LLM judges, or both. LLM
# judges' answers come only on request, never mixed into a plain export of human work.
WORKER_PLATFORMS = ("human", "llm", "all")
ANALYSIS_FORMATS = {ExportJob.Format.ANALYSIS_CSV: "csv", ExportJob.Format.ANALYSIS_JSON: "json",
                    ExportJob.Format.ANALYSIS_MD: "md", ExportJob.Format.SOFT_LABELS: "csv"}


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
        job_enqueue_on_commit(EXPORT, job)
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
    job_enqueue(EXPORT, job)


# --- running ------------------------------------------------------------------------------------


def export_job_run(*, job_id: int) -> None:
    """Run one job to done or failed; return quietly if it is gone or already finished.

    Transient database errors propagate (the Celery task retries them); any other error fails
    the job with a message.
    """
    job_run(EXPORT, job_id, _run, discard=_discard)


def _run(job: ExportJob) -> dict[str, Any]:
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
    logger.info("export %s: %s rows written in %.1fs, stored as %s in %.1fs", job.pk, written,
                wrote - started, name, time.perf_counter() - wrote)
    return {"file": name, **({"rows_written": written} if written is not None else {})}


def _discard(job: ExportJob, fields: dict[str, Any]) -> None:
    # Taken over (or cancelled) while the file was stored: this file is nobody's.
    storages["exports"].delete(fields["file"])


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
        raise JobFailed(f"The campaign's task schema is invalid: {exc}") from None
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
    write_analysis(job=job, stream=stream)
    return None


def write_analysis(*, job: ExportJob, stream: TextIO) -> None:
    """Write the job's campaign statistics (and, for JSON and Markdown, the evaluation report
    built from them) to a text stream in the job's analysis format."""
    from ..exporting.analysis import write_soft_labels, write_statistics
    from ..selectors.analysis import campaign_statistics, evaluation_report
    from ..selectors.provenance import statistics_resamples

    if job.format == ExportJob.Format.SOFT_LABELS:
        from ..selectors.analysis.disagreement import SOFT_LABEL_COLUMNS, soft_label_records

        write_soft_labels(soft_label_records(
            campaign=job.campaign, exclude_flagged=bool(job.options.get("exclude_flagged"))),
            SOFT_LABEL_COLUMNS, stream)
        return
    statistics = campaign_statistics(
        campaign=job.campaign, exclude_flagged=bool(job.options.get("exclude_flagged")),
        n_boot=statistics_resamples())
    report = ({} if job.format == ExportJob.Format.ANALYSIS_CSV
              else evaluation_report(campaign=job.campaign, statistics=statistics))
    write_statistics(statistics, report, fmt=job.format, stream=stream)


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
    kind = ("analysis" if job.format in ANALYSIS_FORMATS
            and job.format != ExportJob.Format.SOFT_LABELS else job.format)
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
    if not job_heartbeat(EXPORT, job, **fields):
        raise Stopped


# --- sweeping -----------------------------------------------------------------------------------


def export_jobs_sweep_stale(*, older_than: timedelta | None = None) -> int:
    """Re-queue (or, with their attempts used up, fail) running exports whose heartbeat stopped,
    after deleting what killed attempts left in this host's spool. Returns how many jobs it
    touched."""
    spools_clean()
    return jobs_sweep_stale((EXPORT,), older_than=older_than)
