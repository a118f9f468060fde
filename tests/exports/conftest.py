"""Export test helpers: annotations made directly (no worker flow), and a run-and-read helper."""
import gzip
from datetime import timedelta

import pytest
from django.core.files.storage import storages
from django.utils import timezone

from campaigns.models import Annotation, Assignment, ExportJob, Item, Worker
from campaigns.services.exports import export_job_create


def make_annotation(campaign, *, item="i1", answers, system="sys-a", control="", data=None,
                    platform="prolific", platform_id="PID-1", control_passed=None,
                    seconds=12.5, seconds_first=None, **assignment_fields) -> Annotation:
    item_obj, _ = Item.objects.get_or_create(
        campaign=campaign, external_id=item,
        defaults={"system": system, "control": control, "data": data or {}},
    )
    worker, _ = Worker.objects.get_or_create(
        campaign=campaign, platform=platform, platform_id=platform_id
    )
    assignment = Assignment.objects.create(
        campaign=campaign, worker=worker, deadline=timezone.now() + timedelta(hours=1),
        status=Assignment.Status.SUBMITTED, submitted_at=timezone.now(), **assignment_fields,
    )
    return Annotation.objects.create(
        campaign=campaign, assignment=assignment, item=item_obj, worker=worker, answers=answers,
        seconds_spent=seconds, seconds_first=seconds_first, control_passed=control_passed,
    )


def read_export(job: ExportJob) -> str:
    job.refresh_from_db()
    assert job.status == ExportJob.Status.DONE, job.error
    with storages["exports"].open(job.file, "rb") as handle:
        content = handle.read()
    if job.file.endswith(".gz"):
        content = gzip.decompress(content)
    return content.decode("utf-8")


@pytest.fixture
def export(django_capture_on_commit_callbacks, owner, celery_eager):
    """export(campaign, fmt, **options) -> (job, text): runs the job (eager Celery) and reads it."""

    def run(campaign, fmt, *, user=None, **options):
        with django_capture_on_commit_callbacks(execute=True):
            job = export_job_create(
                campaign=campaign, requested_by=user or owner, fmt=fmt, options=options
            )
        return job, read_export(job)

    return run


@pytest.fixture(autouse=True)
def _export_storage(settings, tmp_path):
    """Each test writes its files (and its spools) under its own temporary folder."""
    settings.EXPORT_SPOOL_DIR = tmp_path / "spool"
    settings.STORAGES = {
        **settings.STORAGES,
        "exports": {"BACKEND": "django.core.files.storage.FileSystemStorage",
                    "OPTIONS": {"location": str(tmp_path / "exports")}},
    }
    # pytest-django's `settings` sends setting_changed, which resets django's storages cache.
