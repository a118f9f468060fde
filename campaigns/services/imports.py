"""Background imports: a big item or judgments upload is stored, then imported by a Celery job
(all or nothing, through the same items_import or judgments_import as a small one), with its
progress in the cache."""
from __future__ import annotations

import logging

from django.conf import settings
from django.core.cache import cache
from django.core.files.base import File
from django.core.files.storage import storages
from django.db import transaction
from django.utils import timezone

from ..importing import ImportRejected, RowError
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
    platform."""
    if upload.size > settings.IMPORT_MAX_BYTES:
        raise ImportRejected([RowError(
            None, "", f"the file is larger than {settings.IMPORT_MAX_BYTES // (1024 * 1024)} MB")])
    job = ImportJob.objects.create(campaign=campaign, requested_by=requested_by, kind=kind,
                                   options=options or {}, filename=filename[:255],
                                   format=fmt or "", size=upload.size)
    job.file = storages["imports"].save(f"campaign-{campaign.pk}/import-{job.pk}.upload", upload)
    job.save(update_fields=["file"])
    if enqueue:
        from ..tasks import task_import_items  # the tasks module imports the services

        transaction.on_commit(lambda: task_import_items.delay(job_id=job.pk))
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
    ImportJob.objects.filter(pk=job_id, status=ImportJob.Status.QUEUED).update(
        status=ImportJob.Status.RUNNING)  # visible at once: the row lock below is not
    storage = storages["imports"]
    with transaction.atomic():
        job = (ImportJob.objects.select_for_update().select_related("campaign")
               .filter(pk=job_id, status=ImportJob.Status.RUNNING).first())
        if job is None:
            return  # gone, or finished by an earlier delivery
        _import_file(job, storage)
    if job.file:
        storage.delete(job.file)  # imported or refused: the upload has served its purpose
    cache.delete(_progress_key(job.pk))


def _import_file(job: ImportJob, storage) -> None:
    def report(phase: str) -> None:
        cache.set(_progress_key(job.pk), phase, PROGRESS_TTL)

    report("reading the file")
    try:
        with storage.open(job.file, "rb") as fh:
            content = fh.read()
        report(f"checking and storing {len(content):,} bytes")
        IMPORTERS[job.kind](job, content)
    except ImportRejected as exc:
        job.status, job.error_total = ImportJob.Status.FAILED, exc.total
        job.errors = [str(e) for e in exc.errors]
    except Exception:
        logger.exception("import job %s failed", job.pk)
        job.status, job.error_total = ImportJob.Status.FAILED, 1
        job.errors = ["the import failed unexpectedly; nothing was imported"]
    else:
        job.status = ImportJob.Status.DONE
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "created", "updated", "control_items", "judges", "errors",
                            "error_total", "finished_at"])


def _import_items(job: ImportJob, content: bytes) -> None:
    result = items_import(campaign=job.campaign, content=content, filename=job.filename,
                          fmt=job.format or None)
    job.created, job.control_items = result.created, result.control_items


def _import_judgments(job: ImportJob, content: bytes) -> None:
    rows = read_judgment_file(content, job.filename, judge=job.options.get("judge") or None)
    result = judgments_import(campaign=job.campaign, rows=rows,
                              platform=job.options.get("platform") or Worker.Platform.LLM)
    job.created, job.updated, job.judges = result.created, result.updated, result.judges


IMPORTERS = {ImportJob.Kind.ITEMS: _import_items, ImportJob.Kind.JUDGMENTS: _import_judgments}
