"""Per-process costs behind docs/deployment.md "Sizing": CPU per answered item, memory, DB load.

Usage (not part of the test suite; 127.0.0.1 only; starts and stops its own throwaway
PostgreSQL on 55432, Redis on 56379 and gunicorn on 8401, like `make test-faults`):

    .venv/bin/python bench/web_cost.py [--assignments 60] [--items 10] [--threads 6]

Counts CPU seconds (user + system) consumed by the gunicorn worker processes and by the
PostgreSQL server processes while simulated workers answer items (GET the item page, POST the
answer, follow the redirect), so the figures hold whatever else the machine is doing (wall
time does not). Also prints the resident memory of a gunicorn worker and of a Celery worker
before and during an export, and PostgreSQL commits per answered item.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.faults import client, stack  # noqa: E402


def cpu_seconds(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            times = psutil.Process(pid).cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


def postgres_pids() -> list[int]:
    postmaster = int((stack.PG_DATA / "postmaster.pid").read_text().split()[0])
    return [postmaster] + [c.pid for c in psutil.Process(postmaster).children()]


def commits(pg) -> int:
    with pg.connect() as db, db.cursor() as cursor:
        cursor.execute("SELECT xact_commit FROM pg_stat_database WHERE datname = %s",
                       [stack.DB_NAME])
        value = cursor.fetchone()[0]
    db.close()
    return value


def rss_mb(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / 1e6


def item_flow(tokens: list[str], per: int, keys: dict[str, str],
              threads: int) -> tuple[int, int, float]:
    """GET each item page, then POST its answer (the redirect's target is the next GET)."""
    outcome = client.Outcome()
    started = time.monotonic()
    import threading

    def work(share):
        conn = client.Connection()
        for token in share:
            for position in range(1, per + 1):
                status, _, _ = conn.request("GET", f"/a/{token}/{position}/")
                posted, _ = client.submit(conn, keys, token, position, 1 + position % 5)
                with outcome.lock:
                    outcome.requests += 2
                    outcome.statuses[status] += 1
                    outcome.statuses[posted] += 1
        conn.close()

    pool = [threading.Thread(target=work, args=(tokens[i::threads],)) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(600)
    answered = outcome.statuses.get(302, 0)
    return answered, outcome.requests, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--assignments", type=int, default=60)
    parser.add_argument("--items", type=int, default=10, help="items per assignment")
    parser.add_argument("--threads", type=int, default=6)
    parser.add_argument("--export-rows", type=int, default=50_000)
    args = parser.parse_args()

    stack.WORK.mkdir(parents=True, exist_ok=True)
    pg, redis = stack.PostgresCluster(), stack.RedisServer()
    pg.create()
    redis.start()
    env = stack.server_env(pg, GUNICORN_WORKERS="2", RATELIMIT_ENABLED="false",
                           EXPORT_CHUNK_SIZE="2000")
    web = stack.gunicorn(env)
    worker = stack.celery_worker(env, name="bench-celery")
    try:
        stack.manage(env, "migrate", "--noinput")
        stack.manage(env, "collectstatic", "--noinput")
        web.start()
        stack.wait_until(stack.web_ready, 60, "gunicorn")
        study = json.loads(stack.scenario(env, "study", "bench-cost", str(args.assignments),
                                          str(args.items)))
        tokens, per = study["tokens"], study["per_assignment"]
        keys = client.form_keys(tokens)
        item_flow(tokens[:2], 2, keys, 1)  # warm up both workers' code paths
        gunicorn_pids = web.children()
        web_before, db_before = cpu_seconds(gunicorn_pids), cpu_seconds(postgres_pids())
        commits_before = commits(pg)
        answered, requests, wall = item_flow(tokens[2:], per, keys, args.threads)
        web_cpu = cpu_seconds(gunicorn_pids) - web_before
        db_cpu = cpu_seconds(postgres_pids()) - db_before
        commit_count = commits(pg) - commits_before
        load = os.getloadavg()[0]
        print(f"web_cost: gunicorn 2 sync workers, {args.threads} client threads, "
              f"{psutil.cpu_count()} CPUs, load average {load:.1f}")
        print(f"  answered {answered} items with {requests} requests in {wall:.1f} s "
              f"({answered / wall:.1f} items/s wall clock on this machine)")
        print(f"  gunicorn CPU per answered item (item GET + answer POST): "
              f"{1000 * web_cpu / answered:.1f} ms  -> one fully busy process: "
              f"{answered / web_cpu:.0f} items/s")
        print(f"  PostgreSQL CPU per answered item: {1000 * db_cpu / answered:.1f} ms; "
              f"commits per answered item: {commit_count / answered:.2f}")
        print(f"  gunicorn worker RSS after the run: "
              f"{', '.join(f'{rss_mb(p):.0f} MB' for p in gunicorn_pids)}")

        json.loads(stack.scenario(env, "bulk", "bench-export", str(args.export_rows)))
        worker.start()
        stack.wait_until(lambda: "ready." in worker.log_since_start(), 60, "celery worker")
        idle = sum(rss_mb(p) for p in [worker.process.pid, *worker.children()])
        token = json.loads(stack.scenario(env, "researcher"))["api_token"]
        started = time.monotonic()
        job_id = client.start_export("bench-export", token)
        peak = 0.0
        while client.export_job(pg, job_id)["status"] not in ("done", "failed"):
            peak = max(peak, sum(rss_mb(p) for p in worker.children()))
            time.sleep(0.2)
            if time.monotonic() - started > 600:
                break
        job = client.export_job(pg, job_id)
        elapsed = time.monotonic() - started
        print(f"  celery worker (main + 1 pool process) RSS idle: {idle:.0f} MB; pool process "
              f"peak during a {args.export_rows:,}-row CSV export: {peak:.0f} MB; export "
              f"{job['status']} in {elapsed:.1f} s ({job['rows_written'] / elapsed:.0f} rows/s, "
              f"EXPORT_CHUNK_SIZE={env['EXPORT_CHUNK_SIZE']})")
    finally:
        worker.stop()
        web.stop()
        redis.stop()
        pg.destroy()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
