"""The one job lifecycle, for every kind: claim, heartbeat, the stale sweep, attempts and
giving up, cancel and retry, and how a run's outcome is recorded."""
import threading
from datetime import timedelta
from itertools import count

import pytest
from django.db import OperationalError, connection, transaction
from django.utils import timezone

from campaigns.errors import Conflict, ServiceError
from campaigns.jobs import dispatch
from campaigns.jobs.kinds import EXPORT, IMPORT, JUDGE_RUN, KINDS, MAX_ATTEMPTS, STATISTICS
from campaigns.jobs.lifecycle import (
    JobFailed,
    Stopped,
    job_cancel,
    job_claim,
    job_enqueue,
    job_heartbeat,
    job_retry,
    job_run,
    jobs_sweep_stale,
)
from campaigns.models import (
    ExportJob,
    ImportJob,
    JobStatus,
    Judge,
    JudgeRun,
    StatisticsResult,
)

pytestmark = pytest.mark.django_db
LONG_AGO = timezone.now() - timedelta(days=1)
SERIAL = count()


def make_job(kind, campaign, **fields):
    if kind is EXPORT:
        return ExportJob.objects.create(campaign=campaign, format="csv", **fields)
    if kind is IMPORT:
        return ImportJob.objects.create(campaign=campaign, filename="items.csv", **fields)
    if kind is JUDGE_RUN:
        judge = Judge.objects.create(campaign=campaign, name=f"j{next(SERIAL)}", model="m")
        return JudgeRun.objects.create(judge=judge, **fields)
    return StatisticsResult.objects.create(campaign=campaign, kind="statistics", options={},
                                           options_key=f"k{next(SERIAL)}", **fields)


@pytest.fixture
def sent(monkeypatch):
    """The task queue, recording what is sent instead of running it."""
    messages: list[tuple[str, dict]] = []
    monkeypatch.setattr(dispatch, "send", lambda name, **kwargs: messages.append((name, kwargs)))
    return messages


kinds = pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.noun)


# --- claim and heartbeat ----------------------------------------------------------------------


@kinds
def test_a_claim_starts_a_numbered_attempt_and_a_second_claim_a_newer_one(kind, campaign):
    job = make_job(kind, campaign)
    first = job_claim(kind, job.pk)
    assert (first.status, first.attempts) == (JobStatus.RUNNING, 1)
    assert first.started_at == first.heartbeat_at is not None
    second = job_claim(kind, job.pk)  # a re-delivered message
    assert second.attempts == 2
    assert not job_heartbeat(kind, first)  # the older run sees it lost the job
    assert job_heartbeat(kind, second)


@kinds
@pytest.mark.parametrize("status", [JobStatus.DONE, JobStatus.FAILED, JobStatus.CANCELLED])
def test_an_ended_or_missing_job_is_not_claimed(kind, campaign, status):
    job = make_job(kind, campaign, status=status)
    assert job_claim(kind, job.pk) is None
    assert job_claim(kind, job.pk + 1000) is None
    job.refresh_from_db()
    assert (job.status, job.attempts) == (status, 0)


def test_a_claim_resets_the_progress_of_the_kinds_last_attempt(campaign):
    job = make_job(EXPORT, campaign, status="running", attempts=1, rows_written=7, rows_total=9)
    job = job_claim(EXPORT, job.pk)
    assert (job.rows_written, job.rows_total) == (0, None)


def test_a_heartbeat_records_progress_only_while_the_run_owns_the_job(campaign):
    job = job_claim(EXPORT, make_job(EXPORT, campaign).pk)
    assert job_heartbeat(EXPORT, job, rows_written=5)
    job_cancel(EXPORT, job)
    assert not job_heartbeat(EXPORT, job, rows_written=9)
    job.refresh_from_db()
    assert (job.status, job.rows_written) == (JobStatus.CANCELLED, 5)


# --- attempts ---------------------------------------------------------------------------------


def test_the_attempts_policy_is_three_and_judge_runs_get_five():
    assert MAX_ATTEMPTS == 3
    assert {k.noun: k.max_attempts for k in KINDS} == {
        "export": 3, "import": 3, "computation": 3, "run": 5}


@kinds
def test_a_job_whose_worker_stopped_every_time_is_failed_at_its_next_claim(kind, campaign):
    job = make_job(kind, campaign, status="running", attempts=kind.max_attempts - 1)
    assert job_claim(kind, job.pk).attempts == kind.max_attempts  # the last one allowed
    assert job_claim(kind, job.pk) is None
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED
    assert f"gave up after {kind.max_attempts} attempts" in job.error


# --- the stale sweep --------------------------------------------------------------------------


@kinds
def test_the_sweep_requeues_a_running_job_whose_heartbeat_stopped(kind, campaign, sent):
    job = make_job(kind, campaign, status="running", attempts=1, heartbeat_at=LONG_AGO)
    assert jobs_sweep_stale(KINDS) == 1
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED
    assert sent == [(kind.task, {kind.id_kwarg: job.pk})]


@kinds
def test_the_sweep_fails_a_stale_job_that_used_up_its_attempts(kind, campaign, sent):
    job = make_job(kind, campaign, status="running", attempts=kind.max_attempts,
                   heartbeat_at=LONG_AGO)
    assert jobs_sweep_stale(KINDS) == 1
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and "stopped responding" in job.error
    assert sent == []


@kinds
def test_the_sweep_leaves_live_queued_and_ended_jobs_alone(kind, campaign, sent):
    live = make_job(kind, campaign, status="running", attempts=1, heartbeat_at=timezone.now())
    queued = make_job(kind, campaign, status="queued", heartbeat_at=LONG_AGO)
    ended = make_job(kind, campaign, status="done", heartbeat_at=LONG_AGO)
    assert jobs_sweep_stale(KINDS) == 0
    assert sent == []
    for job, status in ((live, "running"), (queued, "queued"), (ended, "done")):
        job.refresh_from_db()
        assert job.status == status


@pytest.mark.django_db(transaction=True)  # the live run holds the row from its own connection
def test_the_sweep_skips_a_job_whose_live_run_holds_its_row(campaign, sent):
    job = make_job(IMPORT, campaign, status="running", attempts=1, heartbeat_at=LONG_AGO)
    locked, release = threading.Event(), threading.Event()

    def live_import():  # one long transaction, under the job row's lock, as an import runs
        try:
            with transaction.atomic():
                ImportJob.objects.select_for_update().get(pk=job.pk)
                locked.set()
                release.wait(10)
        finally:
            connection.close()

    thread = threading.Thread(target=live_import)
    thread.start()
    assert locked.wait(10)
    try:
        assert jobs_sweep_stale((IMPORT,)) == 0
    finally:
        release.set()
        thread.join()
    assert jobs_sweep_stale((IMPORT,)) == 1  # its worker is gone: now it is stale
    assert sent == [(IMPORT.task, {"job_id": job.pk})]


def test_each_kind_has_its_own_stale_time(campaign, sent, settings):
    settings.EXPORT_STALE_SECONDS, settings.LLM_JUDGE_STALE_SECONDS = 60, 3600
    ten_minutes_ago = timezone.now() - timedelta(minutes=10)
    export = make_job(EXPORT, campaign, status="running", attempts=1,
                      heartbeat_at=ten_minutes_ago)
    run = make_job(JUDGE_RUN, campaign, status="running", attempts=1,
                   heartbeat_at=ten_minutes_ago)
    assert jobs_sweep_stale(KINDS) == 1
    assert sent == [(EXPORT.task, {"job_id": export.pk})]
    run.refresh_from_db()
    assert run.status == JobStatus.RUNNING


# --- cancel and retry -------------------------------------------------------------------------


@kinds
def test_a_queued_job_is_cancelled(kind, campaign):
    job = job_cancel(kind, make_job(kind, campaign))
    assert job.status == JobStatus.CANCELLED and job.finished_at is not None
    assert job_claim(kind, job.pk) is None  # a message still queued finds it ended


@pytest.mark.parametrize("kind", [EXPORT, JUDGE_RUN, STATISTICS], ids=lambda k: k.noun)
def test_a_running_job_is_cancelled_and_its_run_stops_at_its_next_heartbeat(kind, campaign):
    job = job_claim(kind, make_job(kind, campaign).pk)
    job_cancel(kind, job)
    assert not job_heartbeat(kind, job)


def test_a_running_import_cannot_be_cancelled_it_is_one_transaction(campaign):
    job = job_claim(IMPORT, make_job(IMPORT, campaign).pk)
    with pytest.raises(Conflict, match="only a queued import can be cancelled"):
        job_cancel(IMPORT, job)


@kinds
def test_an_ended_job_cannot_be_cancelled(kind, campaign):
    job = make_job(kind, campaign, status="done")
    with pytest.raises(Conflict) as raised:
        job_cancel(kind, job)
    assert raised.value.status == 409 and raised.value.extra == {"status": "done"}


@kinds
@pytest.mark.parametrize("status", [JobStatus.FAILED, JobStatus.CANCELLED])
def test_a_retry_queues_a_failed_or_cancelled_job_with_a_fresh_allowance(
        kind, campaign, status, sent, django_capture_on_commit_callbacks):
    job = make_job(kind, campaign, status=status, attempts=kind.max_attempts, error="boom")
    with django_capture_on_commit_callbacks(execute=True):
        job = job_retry(kind, job)
    assert (job.status, job.error, job.queued_attempts) == ("queued", "", kind.max_attempts)
    assert sent == [(kind.task, {kind.id_kwarg: job.pk})]
    assert job_claim(kind, job.pk).attempts == kind.max_attempts + 1  # not given up


@kinds
@pytest.mark.parametrize("status", [JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.DONE])
def test_a_retry_of_a_job_that_did_not_fail_is_a_409(kind, campaign, status, sent):
    job = make_job(kind, campaign, status=status)
    with pytest.raises(Conflict, match="only a failed or cancelled"):
        job_retry(kind, job)
    job.refresh_from_db()
    assert job.status == status and sent == []


# --- running: the outcome ---------------------------------------------------------------------


def test_a_run_records_the_fields_its_work_returns_when_done(campaign):
    job = make_job(EXPORT, campaign)
    job_run(EXPORT, job.pk, lambda job: {"file": "out.csv", "rows_written": 3})
    job.refresh_from_db()
    assert (job.status, job.file, job.rows_written, job.attempts) == ("done", "out.csv", 3, 1)
    assert job.finished_at is not None


def test_a_work_that_cannot_succeed_fails_the_job_with_its_message(campaign):
    job = make_job(IMPORT, campaign)

    def refuse(job):
        raise JobFailed("the file was refused", errors=["row 2: no id"], error_total=1)

    job_run(IMPORT, job.pk, refuse)
    job.refresh_from_db()
    assert (job.status, job.error, job.errors) == ("failed", "the file was refused",
                                                   ["row 2: no id"])


def test_an_unexpected_error_fails_the_job_naming_it(campaign):
    job = make_job(STATISTICS, campaign)
    job_run(STATISTICS, job.pk, lambda job: 1 / 0)
    job.refresh_from_db()
    assert job.status == "failed" and job.error.startswith("unexpected error (ZeroDivision")


def test_a_transient_error_is_left_to_the_tasks_retry_for_kinds_that_retry(campaign):
    def drop(job):
        raise OperationalError("server closed the connection")

    export = make_job(EXPORT, campaign)
    with pytest.raises(OperationalError):
        job_run(EXPORT, export.pk, drop)
    export.refresh_from_db()
    assert export.status == "running"  # the re-delivery is the next attempt
    computation = make_job(STATISTICS, campaign)
    job_run(STATISTICS, computation.pk, drop)  # no retries for this kind: failed at once
    computation.refresh_from_db()
    assert computation.status == "failed"


def test_a_run_that_lost_its_job_leaves_the_row_and_discards_its_result(campaign):
    job = make_job(EXPORT, campaign)
    discarded = []

    def work_then_cancelled(job):
        ExportJob.objects.filter(pk=job.pk).update(status="cancelled")
        return {"file": "late.csv"}

    job_run(EXPORT, job.pk, work_then_cancelled, discard=lambda job, f: discarded.append(f))
    job.refresh_from_db()
    assert (job.status, job.file, discarded) == ("cancelled", "", [{"file": "late.csv"}])

    def stopped(job):
        raise Stopped

    job = make_job(EXPORT, campaign)
    job_run(EXPORT, job.pk, stopped)
    job.refresh_from_db()
    assert (job.status, job.error) == ("running", "")


def test_an_atomic_kinds_work_and_outcome_commit_together(campaign):
    job = make_job(IMPORT, campaign)

    def write_then_fail(job):
        ImportJob.objects.filter(pk=job.pk).update(created=99)  # rolled back with the work
        raise JobFailed("refused")

    job_run(IMPORT, job.pk, write_then_fail)
    job.refresh_from_db()
    assert (job.status, job.created) == ("failed", 0)


# --- queueing ---------------------------------------------------------------------------------


def test_a_queue_that_is_down_leaves_a_failed_job_with_the_reason_and_a_503(
        campaign, monkeypatch):
    def down(name, **kwargs):
        raise dispatch.QueueUnreachable("connection refused")

    monkeypatch.setattr(dispatch, "send", down)
    job = make_job(JUDGE_RUN, campaign)
    with pytest.raises(ServiceError) as raised:
        job_enqueue(JUDGE_RUN, job)
    assert (raised.value.status, raised.value.code) == (503, "broker_unreachable")
    assert job.status == "failed"
    assert job.error == "the task queue is unreachable: connection refused"
    assert not JudgeRun.objects.filter(status="queued").exists()
