"""A real `celery worker` process (the sqla broker, or Redis) runs exports end to end, and a
worker killed mid-run leaves a job that ends done (re-delivered or swept), never "running"."""
import csv
import io
import signal
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from campaigns.models import Annotation, Assignment, ExportJob, Item, Worker
from campaigns.services.exports import export_job_create, export_jobs_sweep_stale
from tests.factories import make_campaign

pytestmark = [pytest.mark.broker, pytest.mark.django_db(transaction=True)]

ANSWERS = {"coherence": 4, "sentiment": 2}


def _annotations(campaign, count: int) -> None:
    items = Item.objects.bulk_create(
        Item(campaign=campaign, external_id=f"i{n}", system=f"s{n % 3}", slots_wanted=3)
        for n in range(count))
    workers = Worker.objects.bulk_create(
        Worker(campaign=campaign, platform="prolific", platform_id=f"P{n}") for n in range(20))
    deadline = timezone.now() + timedelta(hours=1)
    assignments = Assignment.objects.bulk_create(
        Assignment(campaign=campaign, worker=workers[n % 20], deadline=deadline,
                   status="submitted", token=f"tok-{campaign.pk}-{n}") for n in range(count))
    Annotation.objects.bulk_create(
        Annotation(campaign=campaign, assignment=a, item=i, worker=a.worker, answers=ANSWERS)
        for a, i in zip(assignments, items, strict=True))


def _wait_for(job: ExportJob, until, timeout: float) -> ExportJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if until(job):
            return job
        time.sleep(0.02)
    pytest.fail(f"export {job.pk} still {job.status} ({job.rows_written}/{job.rows_total}) "
                f"after {timeout}s; error: {job.error!r}")


def _finished(job: ExportJob) -> bool:
    return job.status in (ExportJob.Status.DONE, ExportJob.Status.FAILED)


def _rows(job: ExportJob) -> list[dict]:
    from django.core.files.storage import storages

    with storages["exports"].open(job.file, "rb") as handle:
        return list(csv.DictReader(io.StringIO(handle.read().decode())))


def test_a_real_worker_runs_an_export_and_a_killed_one_never_leaves_it_running(
    owner, start_worker
):
    assert settings.DATABASES["default"]["ENGINE"].endswith("postgresql")
    first = start_worker("first")

    # End to end: requested here, run by the worker process, file in storage.
    small = make_campaign(owner=owner)
    _annotations(small, 30)
    job = export_job_create(campaign=small, requested_by=owner, fmt="csv")
    job = _wait_for(job, _finished, timeout=20)
    assert (job.status, job.rows_total, job.rows_written, job.error) == ("done", 30, 30, "")
    assert len(_rows(job)) == 30

    # The whole worker is SIGKILLed mid-run: the job is left "running" with a stopped heartbeat.
    big = make_campaign(owner=owner)
    _annotations(big, 3000)
    job = export_job_create(campaign=big, requested_by=owner, fmt="csv")
    _wait_for(job, lambda j: j.status == "running" and j.rows_written > 0, timeout=20)
    first.kill()
    time.sleep(1.5)
    job.refresh_from_db()
    assert job.status == "running" and job.rows_written < 3000

    # A new worker; the periodic sweep finds the stale job and re-queues it: it finishes.
    second = start_worker("second")
    assert export_jobs_sweep_stale(older_than=timedelta(seconds=1)) == 1
    job = _wait_for(job, _finished, timeout=30)
    assert (job.status, job.attempts, job.rows_written) == ("done", 2, 3000)
    assert len(_rows(job)) == 3000

    # Only the pool process dies (OOM-killer style): acks_late + reject_on_worker_lost make the
    # worker re-deliver the message, and the next attempt restarts from scratch and finishes.
    job = export_job_create(campaign=big, requested_by=owner, fmt="jsonl")
    _wait_for(job, lambda j: j.status == "running" and j.rows_written > 0, timeout=20)
    for child in second.pool_children():
        child.send_signal(signal.SIGKILL)
    job = _wait_for(job, _finished, timeout=30)
    assert (job.status, job.attempts, job.rows_written) == ("done", 2, 3000)


def test_a_real_worker_runs_a_judge_and_a_killed_one_is_resumed_without_asking_twice(
    owner, start_worker, settings
):
    from campaigns.models import JudgeOutput, JudgeRun
    from campaigns.services.judge_runs import judge_run_start, judge_runs_sweep_stale
    from campaigns.services.judges import judge_create
    from tests.judges.conftest import valid_reply
    from tests.judges.standin import Reply, StandIn

    server = StandIn(lambda body, n: Reply(valid_reply(body, n).content, delay=0.15)).start()
    server.declare(settings)
    try:
        campaign = make_campaign(owner=owner)
        Item.objects.bulk_create(Item(campaign=campaign, external_id=f"i{n}", slots_wanted=3,
                                      data={"prompt": f"P{n}", "completion": f"C{n}"})
                                 for n in range(40))
        judge = judge_create(campaign=campaign, name="worker-judge", provider=server.provider,
                             model="m", concurrency=2, requests_per_minute=60_000)
        first = start_worker("judge-first")
        run = judge_run_start(judge=judge, scope={"scope": "all"})  # no atomic: sent now
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            run.refresh_from_db()
            if run.done >= 8:
                break
            time.sleep(0.02)
        assert run.status == "running" and run.done >= 8, (run.status, run.error)
        first.kill()
        asked_before = server.requests
        assert asked_before < 40

        # The beat's sweep finds the run whose heartbeat stopped and queues it again.
        assert judge_runs_sweep_stale(older_than=timedelta(0)) == 1
        start_worker("judge-second")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            run.refresh_from_db()
            if run.status in ("done", "failed"):
                break
            time.sleep(0.05)
        assert (run.status, run.done, run.failed, run.attempts) == ("done", 40, 0, 2), run.error
        assert JudgeOutput.objects.filter(judge=judge, failed=False).count() == 40
        assert Annotation.objects.filter(worker__platform="llm").count() == 40
        # Only answers received after the killed worker's last store are asked again.
        assert server.requests - 40 <= 2 * 2 + 2
        assert JudgeRun.objects.get(pk=run.pk).requests >= 40
    finally:
        server.close()
