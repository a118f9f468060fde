"""Fair background work, against real `celery worker` processes, one per queue as deployed:
one researcher's heavy statistics do not delay another's export, their extra computations wait
(queued, with the reason) instead of taking every slot, a second request for the same figures
joins the pending one, and a job over its memory limit fails with that reason while its worker
goes on to the next job."""
import json
import time

import pytest
from django.core.files.base import ContentFile

from campaigns.models import ExportJob, ImportJob, StatisticsResult
from campaigns.services.exports import export_job_create
from campaigns.services.imports import import_job_create
from campaigns.services.statistics import statistics_request
from tests.factories import make_campaign, make_items

from .heavy import heavy_campaign

pytestmark = [pytest.mark.broker, pytest.mark.django_db(transaction=True)]

EXPORT_DELAY_SECONDS = 5  # "a few seconds": the export's own time on a busy shared machine


def _wait_for(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"{what}: not within {timeout}s")


def _ended(model, pk):
    row = model.objects.get(pk=pk)
    return row if row.status in ("done", "failed", "cancelled") else None


@pytest.fixture
def shared_imports(tmp_path, settings):
    """The import storage where the workers (MEDIA_ROOT=tmp_path/media) look for uploads."""
    settings.STORAGES = {**settings.STORAGES, "imports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "media" / "imports")}}}


def test_a_heavy_statistics_job_does_not_delay_another_researchers_export(
        owner, other_owner, start_worker):
    heavy = heavy_campaign(owner, items=2500)
    small = make_campaign(owner=other_owner)
    make_items(small, 3)
    start_worker("statistics", queues=("statistics",), concurrency=2)  # as docker-compose
    start_worker("exports", queues=("exports",))

    # One researcher asks for three sets of figures at once, and the first one again.
    options = [{}, {"alpha": 0.01}, {"correction": "bh"}]
    rows = [statistics_request(campaign=heavy, kind="statistics", options=o).row for o in options]
    again = statistics_request(campaign=heavy, kind="statistics", options={}).row
    assert again.pk == rows[0].pk  # joined the pending computation: one row, one job
    assert StatisticsResult.objects.filter(campaign=heavy).count() == 3
    _wait_for(lambda: StatisticsResult.objects.filter(campaign=heavy, status="running").exists(),
              60, "a statistics computation started")

    # Their share of the statistics queue is one job: the others wait, saying why.
    waiting = _wait_for(lambda: list(StatisticsResult.objects.filter(campaign=heavy)
                                     .exclude(waiting="")), 30, "the other two wait")
    assert all(row.status == "queued" for row in waiting)
    assert "alice already has 1 statistics job running" in waiting[0].waiting
    assert StatisticsResult.objects.filter(campaign=heavy, status="running").count() == 1

    # Meanwhile another researcher's 3-row export.
    asked = time.monotonic()
    job = export_job_create(campaign=small, requested_by=other_owner, fmt="csv")
    job = _wait_for(lambda: _ended(ExportJob, job.pk), 60, "the export")
    delay = time.monotonic() - asked
    assert job.status == "done", job.error
    assert delay < EXPORT_DELAY_SECONDS, f"the export took {delay:.1f}s behind the statistics"
    busy = StatisticsResult.objects.filter(campaign=heavy, status__in=("queued", "running"))
    assert busy.exists(), "the statistics were not still computing: the test proves nothing"
    print(f"\nexport of 3 rows behind 3 heavy computations: {delay:.2f}s")

    # None of the waiting computations is lost: each runs once the previous one ends.
    for row in rows:
        ended = _wait_for(lambda row=row: _ended(StatisticsResult, row.pk), 180,
                          f"statistics {row.options}")
        assert ended.status == "done", ended.error
        assert ended.waiting == "" and ended.attempts == 1


def test_a_job_over_its_memory_limit_fails_with_the_reason_and_its_worker_goes_on(
        owner, start_worker, shared_imports):
    campaign = make_campaign(owner=owner)
    start_worker("exports", queues=("exports",), extra_env={"JOB_MEMORY_LIMIT_MB": "40"})
    lines = [json.dumps({"id": f"i{n}", "prompt": "p" * 200, "completion": "c" * 200}) + "\n"
             for n in range(40_000)]  # 17 MB of JSON lines: hundreds of MB once parsed
    big = import_job_create(campaign=campaign, requested_by=owner, filename="items.jsonl",
                            upload=ContentFile("".join(lines).encode(), name="items.jsonl"))
    big = _wait_for(lambda: _ended(ImportJob, big.pk), 120, "the big import")
    assert big.status == "failed"
    assert "needed more than the 40 MB of memory a job may use (JOB_MEMORY_LIMIT_MB)" in big.error
    assert campaign.items.count() == 0  # all or nothing

    small = import_job_create(campaign=campaign, requested_by=owner, filename="items.jsonl",
                              upload=ContentFile("".join(lines[:10]).encode(),
                                                 name="items.jsonl"))
    small = _wait_for(lambda: _ended(ImportJob, small.pk), 60, "the next import")
    assert small.status == "done", small.error
    assert campaign.items.count() == small.created > 0
