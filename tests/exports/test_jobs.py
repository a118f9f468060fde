"""Export jobs: options, the broker being down, attempts, the stale sweep, bounded queries."""
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.celery import app
from campaigns.errors import ServiceError
from campaigns.jobs.kinds import MAX_ATTEMPTS
from campaigns.models import ExportJob
from campaigns.services.exports import (
    export_job_create,
    export_job_run,
    export_jobs_sweep_stale,
)

from .conftest import make_annotation, read_export

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]

ANSWERS = {"coherence": 3, "sentiment": 4}


@pytest.fixture
def broker_down(monkeypatch):
    """Celery not eager, pointed at a closed port."""
    conf = app.conf
    saved = conf.task_always_eager, conf.broker_url, conf.broker_transport
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://127.0.0.1:1/0")  # Celery reads it first
    # No transport named: the database broker's would win over the URL.
    conf.task_always_eager, conf.broker_url, conf.broker_transport = (
        False, "redis://127.0.0.1:1/0", None)
    app._pool, app.amqp._producer_pool = None, None
    yield
    conf.task_always_eager, conf.broker_url, conf.broker_transport = saved
    app._pool, app.amqp._producer_pool = None, None


def test_a_broker_that_is_down_gives_a_failed_job_with_the_reason_and_a_503(
    campaign, owner, broker_down, django_capture_on_commit_callbacks
):
    with pytest.raises(ServiceError) as raised:
        with django_capture_on_commit_callbacks(execute=True):
            export_job_create(campaign=campaign, requested_by=owner, fmt="csv")
    assert raised.value.status == 503
    assert "the task queue is unreachable" in raised.value.message
    job = ExportJob.objects.get(campaign=campaign)
    assert job.status == ExportJob.Status.FAILED
    assert job.error.startswith("the task queue is unreachable: ")


@pytest.mark.parametrize("fmt, options, message", [
    ("xlsx", {}, "Unknown export format 'xlsx'"),
    ("csv", {"zip": True}, "Unknown export option(s): zip"),
    ("csv", {"gzip": "yes"}, "'gzip' must be true or false"),
    ("csv", {"worker_platform": "robots"}, "'worker_platform' must be one of human, llm, all"),
])
def test_it_rejects_an_unknown_format_or_option_before_recording_a_job(
    campaign, owner, fmt, options, message
):
    with pytest.raises(ServiceError) as raised:
        export_job_create(campaign=campaign, requested_by=owner, fmt=fmt, options=options)
    assert message in raised.value.message
    assert raised.value.status == 400
    assert not ExportJob.objects.exists()


def test_a_researcher_cannot_export_another_researchers_campaign(campaign, other_owner):
    with pytest.raises(ServiceError) as raised:
        export_job_create(campaign=campaign, requested_by=other_owner, fmt="csv")
    assert raised.value.status == 404
    assert not ExportJob.objects.exists()


def test_a_collaborator_may_export_with_raw_worker_ids(campaign, other_owner, export):
    campaign.collaborators.add(other_owner)
    make_annotation(campaign, answers=ANSWERS, platform_id="RAW-7")
    _, text = export(campaign, "csv", user=other_owner, raw_worker_ids=True)
    assert "RAW-7" in text


def test_raw_worker_ids_are_left_out_if_the_requester_lost_access_before_the_run(
    campaign, other_owner
):
    campaign.collaborators.add(other_owner)
    make_annotation(campaign, answers=ANSWERS, platform_id="RAW-7")
    job = export_job_create(campaign=campaign, requested_by=other_owner, fmt="csv",
                            options={"raw_worker_ids": True}, enqueue=False)
    campaign.collaborators.remove(other_owner)
    export_job_run(job_id=job.pk)
    assert "RAW-7" not in read_export(job)


def test_progress_and_totals_are_recorded_on_the_job(campaign, export, settings):
    settings.EXPORT_CHUNK_SIZE = 2
    for n in range(5):
        make_annotation(campaign, item=f"i{n}", answers=ANSWERS)
    job, text = export(campaign, "csv")
    assert (job.status, job.rows_total, job.rows_written, job.attempts) == ("done", 5, 5, 1)
    assert job.started_at <= job.finished_at
    assert len(text.splitlines()) == 6


def test_the_number_of_queries_grows_with_chunks_not_rows(campaign, settings):
    settings.EXPORT_SQL_PATH = False  # the Python path's chunks (the SQL path: test_sql_path)
    def queries(chunk: int) -> int:
        settings.EXPORT_CHUNK_SIZE = chunk
        job = export_job_create(campaign=campaign, requested_by=None, fmt="csv", enqueue=False)
        with CaptureQueriesContext(connection) as captured:
            export_job_run(job_id=job.pk)
        assert ExportJob.objects.get(pk=job.pk).status == "done"
        return len(captured)

    for n in range(12):
        make_annotation(campaign, item=f"i{n}", answers=ANSWERS, platform_id=f"P{n % 3}")
    one_chunk = queries(100)
    six_chunks = queries(2)
    # Six full chunks and an empty last page: 7 SELECTs and 6 progress UPDATEs, against 1 and 1.
    assert six_chunks - one_chunk == (7 - 1) + (6 - 1)
    for n in range(12, 40):
        make_annotation(campaign, item=f"i{n}", answers=ANSWERS, platform_id=f"P{n % 3}")
    assert queries(100) == one_chunk  # more rows, same chunks, same queries


def test_excluding_flagged_workers_leaves_their_annotations_out(campaign, monkeypatch):
    import sys
    import types

    kept = make_annotation(campaign, item="a", answers=ANSWERS, platform_id="good")
    flagged = make_annotation(campaign, item="b", answers=ANSWERS, platform_id="bad")
    fake = types.ModuleType("campaigns.selectors.analysis")
    fake.flagged_worker_ids = lambda *, campaign: {flagged.worker_id}
    monkeypatch.setitem(sys.modules, "campaigns.selectors.analysis", fake)
    job = export_job_create(campaign=campaign, requested_by=None, fmt="jsonl",
                            options={"exclude_flagged": True}, enqueue=False)
    export_job_run(job_id=job.pk)
    records = [json.loads(line) for line in read_export(job).splitlines()]
    assert [r["annotation_id"] for r in records] == [kept.pk]


def test_a_redelivered_job_restarts_from_scratch_as_a_new_attempt(campaign):
    make_annotation(campaign, answers=ANSWERS)
    job = export_job_create(campaign=campaign, requested_by=None, fmt="csv", enqueue=False)
    ExportJob.objects.filter(pk=job.pk).update(status="running", attempts=1, rows_written=7)
    export_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.attempts, job.rows_written) == ("done", 2, 1)


def test_a_job_whose_worker_died_every_time_is_failed_not_left_running(campaign):
    job = export_job_create(campaign=campaign, requested_by=None, fmt="csv", enqueue=False)
    ExportJob.objects.filter(pk=job.pk).update(status="running", attempts=MAX_ATTEMPTS)
    export_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == "failed"
    assert f"gave up after {MAX_ATTEMPTS} attempts" in job.error


def test_a_finished_or_deleted_job_is_left_alone(campaign):
    job = export_job_create(campaign=campaign, requested_by=None, fmt="csv", enqueue=False)
    ExportJob.objects.filter(pk=job.pk).update(status="done", file="kept.csv")
    export_job_run(job_id=job.pk)
    assert ExportJob.objects.get(pk=job.pk).file == "kept.csv"
    export_job_run(job_id=job.pk + 1000)  # gone: returns quietly


def test_an_older_attempt_stops_when_a_newer_one_took_the_job_over(campaign, monkeypatch):
    from campaigns.services import exports

    make_annotation(campaign, answers=ANSWERS)
    job = export_job_create(campaign=campaign, requested_by=None, fmt="csv", enqueue=False)
    real_scope = exports.export_scope

    def scope_then_taken_over(**kwargs):
        ExportJob.objects.filter(pk=job.pk).update(attempts=9)  # another delivery claimed it
        return real_scope(**kwargs)

    monkeypatch.setattr(exports, "export_scope", scope_then_taken_over)
    export_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.file, job.attempts) == ("running", "", 9)


def test_the_sweep_requeues_a_stale_running_job_and_it_then_finishes(
    campaign, django_capture_on_commit_callbacks
):
    make_annotation(campaign, answers=ANSWERS)
    job = export_job_create(campaign=campaign, requested_by=None, fmt="csv", enqueue=False)
    ExportJob.objects.filter(pk=job.pk).update(status="running", attempts=1)
    assert export_jobs_sweep_stale() == 0  # heartbeat is None but started_at is None too
    ExportJob.objects.filter(pk=job.pk).update(heartbeat_at="2000-01-01T00:00:00Z")
    with django_capture_on_commit_callbacks(execute=True):
        assert export_jobs_sweep_stale() == 1
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("done", 2)


def test_the_sweep_fails_a_stale_job_that_used_up_its_attempts(campaign):
    job = export_job_create(campaign=campaign, requested_by=None, fmt="csv", enqueue=False)
    ExportJob.objects.filter(pk=job.pk).update(
        status="running", attempts=MAX_ATTEMPTS, heartbeat_at="2000-01-01T00:00:00Z")
    assert export_jobs_sweep_stale() == 1
    job.refresh_from_db()
    assert job.status == "failed" and "stopped responding" in job.error


def test_the_sweep_leaves_a_job_with_a_fresh_heartbeat_alone(campaign):
    from django.utils import timezone

    job = export_job_create(campaign=campaign, requested_by=None, fmt="csv", enqueue=False)
    ExportJob.objects.filter(pk=job.pk).update(status="running", attempts=1,
                                               heartbeat_at=timezone.now())
    assert export_jobs_sweep_stale() == 0
    assert ExportJob.objects.get(pk=job.pk).status == "running"


@pytest.mark.parametrize("fmt", ["csv", "csv-long", "jsonl"])
def test_llm_judges_rows_come_only_on_request(campaign, export, fmt):
    make_annotation(campaign, item="i1", answers={"coherence": 4, "sentiment": 2})
    make_annotation(campaign, item="i1", answers={"coherence": 1, "sentiment": 1},
                    platform="llm", platform_id="gpt-4o")
    counts = {}
    for choice in ("human", "llm", "all"):
        job, text = export(campaign, fmt, worker_platform=choice)
        counts[choice] = job.rows_total
        assert ("gpt-4o" in text or "llm" in text) == (choice != "human")
    assert counts == {"human": 1, "llm": 1, "all": 2}
    _, default = export(campaign, fmt)
    assert "llm" not in default
