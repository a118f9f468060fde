"""Brokers that need nothing installed, compared: enqueue-to-start latency and idle CPU.

For each transport, a `celery worker` (prefork, one pool process) of bench/broker_app.py is
started; once ready it idles IDLE seconds (CPU of the worker's processes, and for the sqla
transport of the PostgreSQL backends serving it, is read before and after), then TASKS tasks
are sent one at a time, at random gaps of 0.2-1.2 s, each recording when it started.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/annotate_bench .venv/bin/python bench/broker.py

Transports: kombu's SQLAlchemy transport on DATABASE_URL's PostgreSQL as kombu ships it (one
look a second) and as annotate/broker.py polls it (the default broker of `make demo` and `make
test`), kombu's filesystem transport in a temporary folder, and Redis (CELERY_BROKER_URL, if
set) as the production reference.
"""
from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import psycopg2
from celery import Celery

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # annotate.broker, for the sender
IDLE = float(os.environ.get("BENCH_IDLE_SECONDS", 30))
TASKS = int(os.environ.get("BENCH_TASKS", 30))


def _tree_cpu(proc: psutil.Process) -> float:
    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def _pg_backends_cpu(dsn: str, dbname: str) -> float:
    with psycopg2.connect(dsn) as conn, conn.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s "
                       "AND pid <> pg_backend_pid()", [dbname])
        pids = [row[0] for row in cursor.fetchall()]
    total = 0.0
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
            total += t.user + t.system
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return total


def measure(name: str, url: str, options: dict, pg: tuple[str, str] | None,
            transport: str = "") -> dict:
    work = Path(tempfile.mkdtemp(prefix="bench-broker-"))
    latency_file = work / "latency"
    env = {**os.environ, "BENCH_BROKER_URL": url, "BENCH_TRANSPORT_OPTIONS": json.dumps(options),
           "BENCH_LATENCY_FILE": str(latency_file), "PYTHONPATH": str(ROOT),
           "BENCH_TRANSPORT": transport}
    log = (work / "worker.log").open("wb")
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "bench.broker_app", "worker", "--pool=prefork",
         "--concurrency=1", "--loglevel=INFO", "--without-gossip", "--without-mingle",
         "--without-heartbeat"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True)
    try:
        while b" ready." not in (work / "worker.log").read_bytes():
            if proc.poll() is not None or time.monotonic() - started > 60:
                raise SystemExit((work / "worker.log").read_text())
            time.sleep(0.05)
        ready = time.monotonic() - started
        time.sleep(3)  # past start-up
        worker = psutil.Process(proc.pid)
        cpu0, pg0, t0 = _tree_cpu(worker), pg and _pg_backends_cpu(*pg), time.monotonic()
        time.sleep(IDLE)
        elapsed = time.monotonic() - t0
        idle_cpu = (_tree_cpu(worker) - cpu0) / elapsed
        idle_pg = ((_pg_backends_cpu(*pg) - pg0) / elapsed) if pg else 0.0

        sender = Celery("bench_sender", broker=url)
        sender.conf.broker_transport = transport or None
        sender.conf.broker_transport_options = options
        rng = random.Random(1)
        for _ in range(TASKS):
            sender.send_task("bench.started", args=[time.time()])
            time.sleep(rng.uniform(0.2, 1.2))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            lines = latency_file.read_text().split() if latency_file.exists() else []
            if len(lines) >= TASKS:
                break
            time.sleep(0.1)
        latencies = sorted(float(x) * 1000 for x in lines)
        if os.environ.get("BENCH_VERBOSE"):
            print(name, [round(float(x) * 1000) for x in lines])
        sender.close()
    finally:
        os.killpg(proc.pid, 9)
        proc.wait()
        log.close()
    return {"transport": name, "ready_s": ready, "idle_worker_cpu_pct": 100 * idle_cpu,
            "idle_postgres_cpu_pct": 100 * idle_pg,
            "latency_ms_median": statistics.median(latencies),
            "latency_ms_p95": latencies[int(0.95 * (len(latencies) - 1))],
            "latency_ms_max": latencies[-1], "tasks": len(latencies)}


def main() -> None:
    # Celery prefers CELERY_BROKER_URL from the environment to the URL an app is given.
    redis = os.environ.pop("CELERY_BROKER_URL", "")
    database = urlsplit(os.environ["DATABASE_URL"])
    dbname = database.path.lstrip("/")
    dsn = os.environ["DATABASE_URL"]
    plain = "postgresql://" + os.environ["DATABASE_URL"].split("://", 1)[1]
    folder = Path(tempfile.mkdtemp(prefix="bench-fs-broker-"))
    (folder / "processed").mkdir()
    fs = {"data_folder_in": str(folder), "data_folder_out": str(folder),
          "processed_folder": str(folder / "processed"), "store_processed": False,
          "control_folder": str(folder / "control")}
    ours = "annotate.broker:Transport"
    runs = [("sqla, kombu 1 s", "sqla+" + plain, {}, (dsn, dbname), ""),
            ("sqla, ours 0.25 s", plain, {}, (dsn, dbname), ours),
            ("sqla, ours 0.1 s", plain, {"polling_interval": 0.1}, (dsn, dbname), ours),
            ("filesystem 1 s", "filesystem://", fs, None, ""),
            ("filesystem 0.25 s", "filesystem://", {**fs, "polling_interval": 0.25}, None, "")]
    if redis.startswith("redis"):
        runs.append(("redis (reference)", redis, {}, None, ""))
    print(f"{IDLE:.0f} s idle, {TASKS} tasks one at a time; latency = sent to started")
    print(f"{'transport':<20} {'ready s':>8} {'idle CPU worker %':>18} {'idle CPU pg %':>14} "
          f"{'median ms':>10} {'p95 ms':>8} {'max ms':>8}")
    for name, url, options, pg, transport in runs:
        r = measure(name, url, options, pg, transport)
        print(f"{r['transport']:<20} {r['ready_s']:>8.2f} {r['idle_worker_cpu_pct']:>18.2f} "
              f"{r['idle_postgres_cpu_pct']:>14.2f} {r['latency_ms_median']:>10.0f} "
              f"{r['latency_ms_p95']:>8.0f} {r['latency_ms_max']:>8.0f}")


if __name__ == "__main__":
    main()
