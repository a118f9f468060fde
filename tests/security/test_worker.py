"""Against a real Celery worker: a judge run against a trickling endpoint and a gzip bomb
ends within its deadlines and memory, and a researcher's judge aimed at the operator's key
sends nothing; the worker then runs the next job."""
import time

import psutil
import pytest

from campaigns.models import Item, Judge, JudgeRun
from campaigns.services.judge_runs import judge_run_start
from tests.factories import make_campaign

from .conftest import declare
from .servers import completion, gzip_bomb, send, trickle

pytestmark = [pytest.mark.broker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def _tight_deadlines(monkeypatch):
    """In the worker's environment (read when it starts)."""
    monkeypatch.setenv("LLM_JUDGE_TIMEOUT_SECONDS", "2")
    monkeypatch.setenv("LLM_JUDGE_REQUEST_RETRIES", "1")
    monkeypatch.setenv("LLM_JUDGE_MAX_BACKOFF_SECONDS", "0.1")


def _wait(run: JudgeRun, timeout: float) -> JudgeRun:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.status in ("done", "failed", "cancelled"):
            return run
        time.sleep(0.05)
    pytest.fail(f"run {run.pk} still {run.status} after {timeout}s")


def test_hostile_endpoints_hold_a_real_worker_only_within_their_deadlines(
        owner, probe, settings, _tight_deadlines, start_worker):
    campaign = make_campaign(owner=owner)
    Item.objects.bulk_create(Item(campaign=campaign, external_id=f"i{n}", slots_wanted=3,
                                  data={"prompt": f"P{n}", "completion": f"C{n}"})
                             for n in range(4))
    slow, bomb = probe(trickle(seconds=60, every=0.3)), probe(gzip_bomb(1_000_000_000))
    fine = probe(lambda h: send(h, 200, completion('{"coherence": 3, "sentiment": 2}')))
    for name, server in (("slow", slow), ("bomb", bomb), ("fine", fine)):
        declare(settings, name, server)
    worker = start_worker("hostile")
    rss = []

    started = time.monotonic()
    run = judge_run_start(judge=Judge.objects.create(
        campaign=campaign, name="slow", provider="slow", model="m", concurrency=4),
        scope={"scope": "all"})
    run = _wait(run, timeout=30)
    assert run.status == "failed" and "within 2s" in run.error
    assert time.monotonic() - started < 12  # two tries of 2 s, plus the worker's own latency

    run = judge_run_start(judge=Judge.objects.create(
        campaign=campaign, name="bomb", provider="bomb", model="m", max_attempts=1),
        scope={"scope": "all"})
    processes = [psutil.Process(worker.proc.pid), *psutil.Process(worker.proc.pid).children(
        recursive=True)]
    while JudgeRun.objects.get(pk=run.pk).status not in ("done", "failed"):
        rss.append(sum(p.memory_info().rss for p in processes if p.is_running()))
        time.sleep(0.05)
    run = _wait(run, timeout=30)
    assert (run.status, run.failed) == ("done", 4)
    assert max(rss, default=0) < 600 * 1024 * 1024  # a 1 GB bomb, never inflated

    run = _wait(judge_run_start(judge=Judge.objects.create(
        campaign=campaign, name="fine", provider="fine", model="m"), scope={"scope": "all"}),
        timeout=30)
    assert (run.status, run.done) == ("done", 4)  # the worker is free for the next job
