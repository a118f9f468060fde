"""Background imports: a big item or judgments upload is stored, then imported by a Celery job
(all or nothing, through the same items_import or judgments_import as a small one), with its
progress in the cache. The job's lifecycle is campaigns/jobs/lifecycle.py's (kind IMPORT: the
import and its outcome commit together under the job row's lock)."""
from __future__ import annotations

import logging

from django.conf import settings
from django.core.cache import cache
from django.core.files.base import File
from django.core.files.storage import storages
from django.utils import timezone

from ..errors import Conflict
from ..importing import ImportRejected, RowError
from ..jobs.kinds import IMPORT
from ..jobs.lifecycle import JobFailed, job_cancel, job_enqueue_on_commit, job_retry, job_run
from ..models import Campaign, ImportJob, Worker
from .items import items_import
from .judgments import judgments_import, read_judgment_file

logger = logging.getLogger(__name__)
PROGRESS_TTL = 24 * 3600


def import_is_background(*, size: int) -> bool:
    """Whether an upload of `size` bytes is imported by a job rather than in the request."""
    return size > settings.IMPORT_BACKGROUND_BYTES


def import_job_create(*, campaign: Campaign, requested_by, upload: File, filename: str,
                      fmt: str | None = None, kind: str = ImportJob.Kind.ITEMS,
                      options: dict | None = None, enqueue: bool = True) -> ImportJob:
    """Store the upload and queue its import (after the commit, so the worker finds the row).
    A judgments upload's `options` are its judge name (files without a judge column) and
    platform; an items upload's, how it writes conversations (`transcripts`)."""
    if upload.size > settings.IMPORT_MAX_BYTES:
        raise ImportRejected([RowError(
            None, "", f"the file is larger than {settings.IMPORT_MAX_BYTES // (1024 * 1024)} MB")])
    job = ImportJob.objects.create(campaign=campaign, requested_by=requested_by, kind=kind,
                                   options=options or {}, filename=filename[:255],
                                   format=fmt or "", size=upload.size, queued_at=timezone.now())
    job.file = storages["imports"].save(f"campaign-{campaign.pk}/import-{job.pk}.upload", upload)
    job.save(update_fields=["file"])
    if enqueue:
        job_enqueue_on_commit(IMPORT, job)
    return job


def _progress_key(job_id: int) -> str:
    return f"import-job:{job_id}:progress"


def import_job_progress(*, job: ImportJob) -> str:
    """What an unfinished job is doing (a short phrase), '' when it has not started or ended."""
    if job.status not in (ImportJob.Status.QUEUED, ImportJob.Status.RUNNING):
        return ""
    return cache.get(_progress_key(job.pk), "")


def import_job_run(*, job_id: int) -> None:
    """Import a job's file (items or judgments); the outcome (counts, or errors) is recorded
    on the row.

    The items and the job's outcome commit together, under a lock on the job row: a worker
    killed mid-import leaves neither, and the task's re-delivery (acks_late) runs the job
    again; a second delivery running at once waits for the first and then finds it finished.
    """
    ran: list[ImportJob] = []

    def work(job: ImportJob) -> dict:
        ran.append(job)
        return _import_file(job)

    job_run(IMPORT, job_id, work)
    if not ran:  # gone, ended, or given up (its upload stays, for a retry)
        return
    job = ImportJob.objects.filter(pk=job_id).first()
    if job is not None and job.status in (ImportJob.Status.DONE, ImportJob.Status.FAILED):
        storages["imports"].delete(job.file)  # imported or refused: it served its purpose
        cache.delete(_progress_key(job.pk))


def _import_file(job: ImportJob) -> dict:
    def report(phase: str) -> None:
        cache.set(_progress_key(job.pk), phase, PROGRESS_TTL)

    report("reading the file")
    try:
        with storages["imports"].open(job.file, "rb") as fh:
            content = fh.read()
        report(f"checking and storing {len(content):,} bytes")
        return IMPORTERS[job.kind](job, content)
    except ImportRejected as exc:
        raise JobFailed("the file was refused; nothing was imported",
                        errors=[str(e) for e in exc.errors], error_total=exc.total) from None
    except MemoryError:
        raise  # over the job's memory limit: the lifecycle states it
    except Exception:
        logger.exception("import job %s failed", job.pk)
        raise JobFailed("the import failed unexpectedly; nothing was imported",
                        errors=["the import failed unexpectedly; nothing was imported"],
                        error_total=1) from None


def import_job_cancel(*, job: ImportJob) -> ImportJob:
    """Cancel a queued import (409 once it runs: an import is all or nothing, in one go)."""
    job = job_cancel(IMPORT, job)
    if job.file:
        storages["imports"].delete(job.file)
    return job


def import_job_retry(*, job: ImportJob, enqueue: bool = True) -> ImportJob:
    """Queue a failed or cancelled import again, if its upload is still stored (an import
    that ran to its end, refused or not, deleted it: 409, upload the file again)."""
    if job.status in (ImportJob.Status.FAILED, ImportJob.Status.CANCELLED) and not (
            job.file and storages["imports"].exists(job.file)):
        raise Conflict("The upload is no longer stored; upload the file again.",
                       extra={"status": job.status})
    return job_retry(IMPORT, job, enqueue=enqueue)


def _import_items(job: ImportJob, content: bytes) -> dict:
    result = items_import(campaign=job.campaign, content=content, filename=job.filename,
                          fmt=job.format or None,
                          transcripts=job.options.get("transcripts") or "messages")
    return {"created": result.created, "control_items": result.control_items}


def _import_judgments(job: ImportJob, content: bytes) -> dict:
    rows = read_judgment_file(content, job.filename, judge=job.options.get("judge") or None)
    result = judgments_import(campaign=job.campaign, rows=rows,
                              platform=job.options.get("platform") or Worker.Platform.LLM)
    return {"created": result.created, "updated": result.updated, "judges": result.judges}


IMPORTERS = {ImportJob.Kind.ITEMS: _import_items, ImportJob.Kind.JUDGMENTS: _import_judgments}
