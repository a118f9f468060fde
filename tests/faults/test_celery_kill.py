"""A Celery worker killed (SIGKILL) in the middle of an export: the job is picked up again and
finishes (or is failed with a reason); it is never left "running"."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from . import client, stack

pytestmark = pytest.mark.faults

ANNOTATIONS = 20000


@pytest.fixture(scope="module")
def bulk(env):
    return json.loads(stack.scenario(env, "bulk", f"faults-bulk-{os.getpid()}", str(ANNOTATIONS)))


def test_a_pool_process_killed_mid_export_is_redelivered_and_finishes(
        web, pg, celery_worker, bulk, api_token):
    started = time.monotonic()
    job_id = client.start_export(bulk["slug"], api_token)
    running = client.wait_running(pg, job_id)
    child = celery_worker.children()[0]
    os.kill(child, signal.SIGKILL)
    job = client.wait_finished(pg, job_id, 120)
    print(f"killed pool process at {running['rows_written']} rows; job {job} after "
          f"{time.monotonic() - started:.1f} s")
    assert job["status"] == "done", job
    assert job["attempts"] >= 2 and job["rows_written"] == ANNOTATIONS


def test_a_whole_worker_killed_mid_export_is_recovered_by_the_sweep(
        web, pg, env, celery_worker, bulk, api_token):
    job_id = client.start_export(bulk["slug"], api_token)
    client.wait_running(pg, job_id)
    celery_worker.kill_group()  # master and pool: the message stays unacknowledged in Redis
    time.sleep(1)
    assert client.export_job(pg, job_id)["status"] == "running"
    celery_worker.start()  # a replacement worker (same name, as a restarted container)
    stack.wait_until(lambda: "ready." in celery_worker.log_since_start(), 60,
                     "the replacement worker")
    time.sleep(7)  # the heartbeat is now older than EXPORT_STALE_SECONDS
    # One tick of celery beat's "sweep-stale-exports", sent through the broker.
    subprocess.run([sys.executable, "-m", "celery", "-A", "annotate", "call",  # noqa: S603
                    "campaigns.export_sweep_stale"], cwd=stack.ROOT, env=env, check=True,
                   capture_output=True, timeout=60)
    job = client.wait_finished(pg, job_id, 120)
    print(f"after a whole-worker kill: {job}")
    assert job["status"] == "done", job
    assert job["rows_written"] == ANNOTATIONS
