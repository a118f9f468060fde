"""Benchmark: server CPU ms and SQL queries per request kind of one worker flow, in-process.

Usage (not part of the test suite; needs PostgreSQL):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/annotate_perf \
        .venv/bin/python bench/worker_cpu.py [--flows 300] [--items 2000] [--profile]

Runs the same flow as bench/crowd.py through ONE django.test.Client (one handler, so handler
set-up is not measured) with DEBUG off, the form keys checked and the collected static files of a
temporary STATIC_ROOT: ONE worker (a fixed PROLIFIC_PID) opens the study link once (entry
GET, reported apart), then each flow is claim POST (answered with the item page), submit POST
(the one-item assignment is handed in by the submit, answered with the done page), as a worker
taking HIT after HIT; a checkout still on redirects adds the item GET. Prints the CPU time
of this process (time.process_time: Python + driver, not
PostgreSQL's), the wall time (with PostgreSQL's) and the number of SQL queries per request
kind, and the claim's wall time per block of flows (the worker's history grows by one
assignment per flow; "never the same item twice" must not get slower with it).
`--profile` prints the top of a cProfile; `--backend` adds the CPU time of this session's
PostgreSQL server process (its /proc schedstat) per request kind and, with `--statements`,
per statement.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
STATIC = tempfile.mkdtemp(prefix="annotate-worker-cpu-static-")
os.environ.update({"DEBUG": "false", "SECRET_KEY": "bench-" + "x" * 50,
                   "ALLOWED_HOSTS": "testserver", "SECURE_SSL_REDIRECT": "false",
                   "RATELIMIT_ENABLED": os.environ.get("RATELIMIT_ENABLED", "false"),
                   "STATIC_ROOT": STATIC, "LOG_LEVEL": "ERROR"})
subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT,
               check=True)
sys.path.insert(0, str(ROOT / "bench"))

import crowd  # noqa: E402  (sets up Django with the environment above)
import crowd_client  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402

from campaigns.work import prepared  # noqa: E402

KINDS = crowd.KINDS


class Meter:
    """CPU seconds, wall seconds and queries per request kind."""

    def __init__(self):
        self.cpu = defaultdict(float)
        self.wall = defaultdict(float)
        self.queries = defaultdict(int)
        self.count = defaultdict(int)
        self.claims: list[float] = []  # wall seconds of each claim, in order
        self.kind = ""
        self.show = False
        # (kind, SQL) -> [count, wall seconds, backend CPU seconds]
        self.statements: dict = defaultdict(lambda: [0, 0.0, 0.0])
        self.backend = defaultdict(float)  # PostgreSQL backend CPU seconds per request kind
        self.backend_pid = 0  # set by --backend: this session's server process, on this machine

    def __call__(self, execute, sql, params, many, context):
        self.queries[self.kind] += 1
        if self.show:
            print(f"  [{self.kind}] {sql[:400]}")
        started, backend = time.perf_counter(), self.backend_cpu()
        try:
            return execute(sql, params, many, context)
        finally:
            entry = self.statements[(self.kind, " ".join(sql.split())[:150])]
            entry[0] += 1
            entry[1] += time.perf_counter() - started
            entry[2] += self.backend_cpu() - backend

    def backend_cpu(self) -> float:
        """CPU seconds the PostgreSQL backend has run so far (ns-precise schedstat), or 0."""
        if not self.backend_pid:
            return 0.0
        with open(f"/proc/{self.backend_pid}/schedstat") as stat:
            return int(stat.read().split()[0]) / 1e9

    def request(self, kind, call, *args, **kwargs):
        self.kind = kind
        started, clock, backend = time.process_time(), time.perf_counter(), self.backend_cpu()
        response = call(*args, **kwargs)
        wall = time.perf_counter() - clock
        self.cpu[kind] += time.process_time() - started
        self.backend[kind] += self.backend_cpu() - backend
        self.wall[kind] += wall
        self.count[kind] += 1
        if kind == "claim":
            self.claims.append(wall)
        return response


class Worker:
    """One worker's browser: the study link opened once, its start form's key and ids."""

    def __init__(self, client: Client, meter: Meter, slug: str):
        pid = f"{time.time_ns():024x}"[-24:]  # in Prolific's form (24 hexadecimal characters)
        self.slug = slug
        self.ids = {"PROLIFIC_PID": pid, "STUDY_ID": "bench", "SESSION_ID": pid}
        response = meter.request(crowd.ENTRY, client.get, f"/c/{slug}/", self.ids)
        assert response.status_code == 200, response.status_code
        self.form_key = crowd_client.FORM_KEY_FIELD.search(response.content).group(1).decode()


FORM = "application/x-www-form-urlencoded"  # as browsers (and bench/crowd.py) post forms


def flow(client: Client, meter: Meter, worker: Worker, n: int) -> None:
    """Claim, (item GET after a redirect, in the flow before one request per answered item),
    submit; the last save lands on the done page."""
    response = meter.request("claim", client.post, f"/c/{worker.slug}/", urlencode(
        {**worker.ids, "form_key": worker.form_key}), content_type=FORM)
    location = crowd_client.landing_address(response.status_code, response.get("Location", ""),
                             response.content)
    assert location.startswith("/a/"), (response.status_code, response.content[:300])
    token = location.split("/")[2]
    if response.status_code == 302:
        response = meter.request("item", client.get, location)
    assert response.status_code == 200, response.status_code
    started = crowd_client.STARTED_FIELD.search(response.content).group(1).decode()
    key = crowd_client.FORM_KEY_FIELD.search(response.content).group(1).decode()
    response = meter.request("submit", client.post, location, urlencode({
        "q-coherence": str(1 + n % 5), "q-sentiment": str(1 + (n * 7) % 5),
        "form_key": key, "started": started}), content_type=FORM)
    landed = crowd_client.landing_address(
        response.status_code, response.get("Location", ""), response.content)
    assert landed == f"/a/{token}/done/", (response.status_code, landed)


def report_kinds(meter, args) -> None:
    """CPU, wall time and statements per request kind, the flow's sum, the claim by block."""
    total_cpu = total_wall = total_q = 0.0
    for kind in KINDS:
        n = max(meter.count[kind], 1)
        total_cpu += meter.cpu[kind] / n
        total_wall += meter.wall[kind] / n
        total_q += meter.queries[kind] / n
        print(f"  {kind:<7} {1000 * meter.cpu[kind] / n:6.2f} ms CPU  "
              f"{1000 * meter.wall[kind] / n:6.2f} ms wall  "
              f"{meter.queries[kind] / n:5.2f} queries"
              + (f"  PostgreSQL backend {1000 * meter.backend[kind] / n:5.2f} ms CPU"
                 if args.backend else ""))
    print(f"  flow    {1000 * total_cpu:6.2f} ms CPU  {1000 * total_wall:6.2f} ms wall  "
          f"{total_q:5.2f} queries  (requests counted per kind above)")
    entry = crowd.ENTRY
    print(f"  {entry:<7} {1000 * meter.cpu[entry]:6.2f} ms CPU  "
          f"{1000 * meter.wall[entry]:6.2f} ms wall  {meter.queries[entry]:5.2f} queries  "
          "(once per worker, not per submission)")
    block = max(1, len(meter.claims) // 5)
    blocks = [meter.claims[i:i + block] for i in range(0, len(meter.claims), block)]
    print("  claim wall ms by block of flows as the worker's history grows ("
          f"{args.warm_up} done before): " + ", ".join(
              f"{1000 * sum(b) / len(b):.2f}" for b in blocks if b))


def report_statements(meter, with_backend: bool) -> None:
    """Each statement's mean wall time per request kind, and the prepared statements' plans."""
    print("  statements by total wall time (one client: round trip + PostgreSQL's time):")
    ranked = sorted(meter.statements.items(), key=lambda kv: -kv[1][1])
    texts = {name: text for text, (name, _) in prepared._TEXT.items()}
    for (kind, sql), (count, wall, backend) in ranked[:25]:
        name = sql.split("(")[0].removeprefix("EXECUTE ").strip()
        sql = " ".join(texts.get(name, sql).split())[:150]
        print(f"    {kind:<6} {count / max(meter.count[kind], 1):4.1f}x "
              f"{1000 * wall / count:6.3f} ms"
              + (f" (backend CPU {1000 * backend / count:6.3f} ms)" if with_backend else "")
              + f"  {sql}")
    with connection.cursor() as cursor:
        cursor.execute("SELECT name, generic_plans, custom_plans FROM pg_prepared_statements")
        plans = cursor.fetchall()
    print("  prepared statements (generic plans / custom plans, i.e. planned again each time):")
    for name, generic, custom in plans:
        print(f"    {name}  {generic:5d} / {custom:5d}  "
              f"{' '.join(texts.get(name, name).split())[:110]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--flows", type=int, default=300)
    parser.add_argument("--warm-up", type=int, default=20)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--sql", action="store_true", help="print the SQL of one flow first")
    parser.add_argument("--statements", action="store_true",
                        help="print each statement's mean wall time (round trip + server)")
    parser.add_argument("--backend", action="store_true",
                        help="also the PostgreSQL backend's CPU per request kind and statement "
                             "(its /proc schedstat: the server must run on this machine)")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    owner, _ = get_user_model().objects.get_or_create(username="bench-owner")
    campaign = crowd.make_campaign(owner, "bench-worker-cpu", args.items)
    client = Client(enforce_csrf_checks=True)
    warm = Meter()
    worker = Worker(client, warm, campaign.slug)
    for n in range(args.warm_up):
        flow(client, warm, worker, n)
    if args.sql:
        shown = Meter()
        shown.show = True
        with connection.execute_wrapper(shown):
            flow(client, shown, worker, -1)
    meter = Meter()
    if args.backend:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            meter.backend_pid = cursor.fetchone()[0]
    profiler = cProfile.Profile(time.process_time) if args.profile else None
    with connection.execute_wrapper(meter):
        Worker(client, meter, campaign.slug)  # the study link, measured apart
        if profiler:
            profiler.enable()
        for n in range(args.flows):
            flow(client, meter, worker, args.warm_up + n)
        if profiler:
            profiler.disable()
    print(f"worker_cpu: {args.flows} flows (after {args.warm_up} warm-up) by one worker, one "
          f"test client, DEBUG off, PostgreSQL {connection.pg_version}")
    report_kinds(meter, args)
    if args.statements:
        report_statements(meter, args.backend)
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(45)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(
            r"campaigns/|template/base.py.*\(render\)|signing|csrf|middleware", 60)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
