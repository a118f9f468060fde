"""Export spools live in the application's own directory and do not outlive their export:
killed attempts' spools are deleted at Celery worker start and by the stale sweep."""
import os
import stat

import pytest
from celery.signals import worker_ready

from campaigns.models import ExportJob
from campaigns.services import exports
from campaigns.services.exports import export_job_create, export_job_run, export_jobs_sweep_stale
from campaigns.services.spools import spools_clean, spools_purge
from tests.exports.conftest import make_annotation

pytestmark = pytest.mark.django_db
ANSWERS = {"coherence": 4, "sentiment": 2}


@pytest.fixture
def spool(settings, tmp_path):
    settings.EXPORT_SPOOL_DIR = tmp_path / "spool"
    return tmp_path / "spool"


def _leftover(spool, job, attempt, campaign=None) -> str:
    spool.mkdir(mode=0o700, exist_ok=True)
    path = spool / f"export-{campaign or job.campaign_id}-{job.pk}-{attempt}-abc123"
    path.write_text("pseudonym,session,answer\nw-1,SESSION-1,4\n")
    return path


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_an_export_is_spooled_in_the_applications_directory_and_the_spool_is_gone_after(
        campaign, spool, monkeypatch, fmt):
    make_annotation(campaign, answers=ANSWERS)
    job = export_job_create(campaign=campaign, requested_by=None, fmt=fmt, enqueue=False)
    seen = []
    real_store = exports._store

    def store(raw, name):
        seen.append(os.path.dirname(raw.name))
        return real_store(raw, name)

    monkeypatch.setattr(exports, "_store", store)
    export_job_run(job_id=job.pk)
    assert ExportJob.objects.get(pk=job.pk).status == "done"
    assert seen == [str(spool)]
    assert stat.S_IMODE(spool.stat().st_mode) == 0o700
    assert list(spool.iterdir()) == []


def test_cleaning_deletes_the_spools_of_attempts_no_longer_running_and_keeps_the_live_one(
        campaign, spool):
    done = export_job_create(campaign=campaign, requested_by=None, fmt="csv", enqueue=False)
    live = export_job_create(campaign=campaign, requested_by=None, fmt="csv", enqueue=False)
    ExportJob.objects.filter(pk=live.pk).update(status="running", attempts=2)
    killed = [_leftover(spool, done, 1), _leftover(spool, live, 1)]
    stray = spool / "something-else"
    stray.write_text("x")
    running = _leftover(spool, live, 2)
    assert spools_clean() == 3
    assert not any(p.exists() for p in [*killed, stray]) and running.exists()


def test_a_celery_worker_starting_cleans_the_spools(campaign, spool):
    job = export_job_create(campaign=campaign, requested_by=None, fmt="csv", enqueue=False)
    path = _leftover(spool, job, 1)
    import campaigns.tasks  # noqa: F401 - a worker loads the tasks module, which connects it

    worker_ready.send(sender=None)
    assert not path.exists()


def test_the_stale_export_sweep_cleans_the_spools(campaign, spool):
    job = export_job_create(campaign=campaign, requested_by=None, fmt="csv", enqueue=False)
    path = _leftover(spool, job, 1)
    export_jobs_sweep_stale()
    assert not path.exists()


def test_purging_a_campaign_deletes_only_its_spools(campaign, spool):
    job = export_job_create(campaign=campaign, requested_by=None, fmt="csv", enqueue=False)
    ExportJob.objects.filter(pk=job.pk).update(status="running", attempts=1)
    ours, other = _leftover(spool, job, 1), _leftover(spool, job, 1, campaign=campaign.pk + 1)
    assert spools_purge(campaign_id=campaign.pk) == 1
    assert not ours.exists() and other.exists()
