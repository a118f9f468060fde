"""Benchmark: server CPU ms and SQL queries per request kind of one worker flow, in-process.

Usage (not part of the test suite; needs PostgreSQL):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/annotate_perf \
        .venv/bin/python bench/worker_cpu.py [--flows 300] [--items 2000] [--profile]

Runs the same flow as bench/crowd.py (entry GET, claim POST, item GET, submit POST, finish
POST) through ONE django.test.Client (one handler, so handler set-up is not measured) with
DEBUG off, CSRF enforced and the collected static files of a temporary STATIC_ROOT, and
prints the CPU time of this process (time.process_time: Python + driver, not PostgreSQL's)
and the number of SQL queries per request kind. `--profile` prints the top of a cProfile.
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
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402

KINDS = crowd.KINDS


class Meter:
    """CPU seconds and queries per request kind."""

    def __init__(self):
        self.cpu = defaultdict(float)
        self.queries = defaultdict(int)
        self.count = defaultdict(int)
        self.kind = ""
        self.show = False

    def __call__(self, execute, sql, params, many, context):
        self.queries[self.kind] += 1
        if self.show:
            print(f"  [{self.kind}] {sql[:400]}")
        return execute(sql, params, many, context)

    def request(self, kind, call, *args, **kwargs):
        self.kind = kind
        started = time.process_time()
        response = call(*args, **kwargs)
        self.cpu[kind] += time.process_time() - started
        self.count[kind] += 1
        return response


def flow(client: Client, meter: Meter, slug: str, n: int) -> None:
    pid = f"cpu-{time.time_ns()}-{n}"
    ids = {"PROLIFIC_PID": pid, "STUDY_ID": "bench", "SESSION_ID": pid}
    response = meter.request("entry", client.get, f"/c/{slug}/", ids)
    assert response.status_code == 200, response.status_code
    csrf = crowd.CSRF_FIELD.search(response.content).group(1).decode()
    response = meter.request("claim", client.post, f"/c/{slug}/",
                             {**ids, "csrfmiddlewaretoken": csrf})
    assert response.status_code == 302, (response.status_code, response.content[:300])
    location = response["Location"]
    token = location.split("/")[2]
    response = meter.request("item", client.get, location)
    assert response.status_code == 200, response.status_code
    started = crowd.STARTED_FIELD.search(response.content).group(1).decode()
    response = meter.request("submit", client.post, location, {
        "q-coherence": str(1 + n % 5), "q-sentiment": str(1 + (n * 7) % 5),
        "csrfmiddlewaretoken": csrf, "started": started})
    assert response.status_code == 302, (response.status_code, response.content[:300])
    response = meter.request("finish", client.post, f"/a/{token}/finish/",
                             {"csrfmiddlewaretoken": csrf})
    assert response.status_code == 302, response.status_code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--flows", type=int, default=300)
    parser.add_argument("--warm-up", type=int, default=20)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--sql", action="store_true", help="print the SQL of one flow first")
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        raise SystemExit("bench/worker_cpu.py needs PostgreSQL: set DATABASE_URL=postgres://...")
    call_command("migrate", verbosity=0)
    owner, _ = get_user_model().objects.get_or_create(username="bench-owner")
    campaign = crowd.make_campaign(owner, "bench-worker-cpu", args.items)
    client = Client(enforce_csrf_checks=True)
    warm = Meter()
    for n in range(args.warm_up):
        flow(client, warm, campaign.slug, n)
    if args.sql:
        shown = Meter()
        shown.show = True
        with connection.execute_wrapper(shown):
            flow(client, shown, campaign.slug, -1)
    meter = Meter()
    profiler = cProfile.Profile(time.process_time) if args.profile else None
    with connection.execute_wrapper(meter):
        if profiler:
            profiler.enable()
        for n in range(args.flows):
            flow(client, meter, campaign.slug, args.warm_up + n)
        if profiler:
            profiler.disable()
    print(f"worker_cpu: {args.flows} flows (after {args.warm_up} warm-up), one test client, "
          f"DEBUG off, PostgreSQL {connection.pg_version}")
    total_cpu = total_q = 0.0
    for kind in KINDS:
        n = max(meter.count[kind], 1)
        total_cpu += meter.cpu[kind] / n
        total_q += meter.queries[kind] / n
        print(f"  {kind:<7} {1000 * meter.cpu[kind] / n:6.2f} ms CPU  "
              f"{meter.queries[kind] / n:5.2f} queries")
    print(f"  flow    {1000 * total_cpu:6.2f} ms CPU  {total_q:5.2f} queries")
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(45)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(
            r"campaigns/|template/base.py.*\(render\)|signing|csrf|middleware", 60)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
