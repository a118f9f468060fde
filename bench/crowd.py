"""Benchmark: N simulated crowd workers over HTTP against gunicorn and PostgreSQL.

Usage (not part of the test suite; needs PostgreSQL):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/annotate_pages \
        .venv/bin/python bench/crowd.py [--workers 4] [--threads 1] [--seconds 20] [--port 8102]

What it does, all on 127.0.0.1:
- sets up a campaign of 20,000 items (an ~80-word prompt and a ~50-word completion each,
  imported through the import service), k=3 annotations per item, one item per assignment;
- starts `gunicorn annotate.wsgi -w 4 --preload` (sync workers, two per core; DEBUG off,
  SECRET_KEY set, ALLOWED_HOSTS=127.0.0.1, bench.settings for the ceiling view's URLconf,
  rate limits off; the worker pages' SQL as prepared statements, as in production);
- for N = 1, 8, 32, 64 threads, each a worker (one PROLIFIC_PID per thread) that opens the
  Prolific study link once (GET /c/<slug>/?PROLIFIC_PID=..., for the start form's key), then loops
  until the time is up or the campaign has no work left, like a worker taking one HIT after
  another (Turkle's accept-next): claim (POST start; 302 to the item), load the item page,
  submit valid answers (the last item of the assignment, so the save hands the assignment
  in; 302 to the done page). 3 requests per submission; the campaign sets no limit on
  assignments per worker;
- in the same run and through the same server, N threads POSTing to a trivial Django view
  that does one INSERT (the ceiling for this machine), and the ratio of the two rates: the
  one-INSERT rate another machine would need for 300 submissions/s at the same ratio;
- prints submissions/s, the CPU per submission of gunicorn, PostgreSQL and this client, and
  p50/p95/p99 per request kind (the entry GETs separately, outside the per-submission
  figures), then verifies every successful submit is stored exactly once,
  its assignment is submitted, no item has more than k annotations and the counters agree;
- runs N=64 with a 200,000-item campaign, the 20,000-item one again, then the big one again,
  and prints the ratio of the big campaign's rate to the small one's over those alternating
  runs.
Before each run the tables the runs write are vacuumed when PostgreSQL's autovacuum is off
(it is on by default; this machine's CI configuration turns it off), and during a run they are
analyzed whenever autovacuum's own rule says so (AutoAnalyze): without that, a run starting on
nearly empty tables keeps query plans made for a few rows.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotate.settings")

import django  # noqa: E402

django.setup()

from crowd_client import (  # noqa: E402
    ENTRY,
    KINDS,
    SERVER,
    ceiling_loop,
    report_latencies,
    run,
    worker_loop,
)
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Count, F  # noqa: E402

from bench.views import TABLE  # noqa: E402
from campaigns.models import Annotation, Assignment, Campaign, Item  # noqa: E402
from campaigns.services.allocation import campaign_allocate  # noqa: E402
from campaigns.services.items import items_import  # noqa: E402

LIKERT = [{"value": v, "label": str(v), "description": f"level {v}"} for v in range(1, 6)]
SCHEMA = {
    "display": [
        {"field": "prompt", "label": "Prompt (read me first!)", "suffix": "..."},
        {"field": "completion", "label": "System's generation (rate this!)", "prefix": "..."},
    ],
    "questions": [
        {"id": "coherence", "kind": "likert", "text": "Coherent?", "points": LIKERT},
        {"id": "sentiment", "kind": "likert", "text": "Positive?", "points": LIKERT},
        {"id": "feedback", "kind": "text", "text": "Feedback", "required": False},
    ],
}
WORDS = ("the film was a slow and quiet study of grief with moments of real beauty though its "
         "second half drags and the ending feels unearned despite strong acting by the lead "
         "I cannot believe anyone is giving this movie a good rating terrible plot pace").split()


# --- setup ---------------------------------------------------------------------------------

def _text(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n_words))


def make_campaign(owner, slug: str, n_items: int, per_assignment: int = 1,
                  allocation: str = "uniform") -> Campaign:
    """A live campaign of n_items (imported through the import service), k=3, per_assignment
    items per HIT; under an adaptive allocation, at least 1 and at most 3 per item."""
    Campaign.objects.filter(slug=slug).delete()
    campaign = Campaign.objects.create(
        owner=owner, slug=slug, name=slug, schema=SCHEMA, status="live",
        annotations_per_item=3, items_per_assignment=per_assignment,
        assignment_timeout_minutes=30,
        # One worker takes HIT after HIT (a Prolific participant's default would be one).
        max_assignments_per_worker=1_000_000, allocation=allocation,
        min_annotations_per_item=1, max_annotations_per_item=3)
    rng = random.Random(11)
    started = time.perf_counter()
    for start in range(0, n_items, 50_000):
        rows = (json.dumps({"id": f"i{i}", "system": f"sys-{i % 4}", "prompt": _text(rng, 80),
                            "completion": _text(rng, 50)})
                for i in range(start, min(n_items, start + 50_000)))
        items_import(campaign=campaign, content="\n".join(rows).encode(),
                     filename="items.jsonl")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE campaigns_item")
    if allocation != "uniform":
        campaign_allocate(campaign=campaign)
    print(f"  set up {n_items:,} items in {time.perf_counter() - started:.1f}s")
    return campaign


class AllocationJob(threading.Thread):
    """The periodic allocation job (Celery beat's task_update_allocations) during a run,
    every `every` seconds, on its own connection."""

    def __init__(self, campaign: Campaign, every: float):
        super().__init__(daemon=True)
        self.campaign, self.every, self.runs = campaign, every, 0
        self.halt = threading.Event()

    def run(self) -> None:
        try:
            while not self.halt.wait(self.every):
                campaign_allocate(campaign=Campaign.objects.get(pk=self.campaign.pk))
                self.runs += 1
        finally:
            connection.close()

    def stop(self) -> int:
        self.halt.set()
        self.join()
        return self.runs


def adaptive_against_uniform(owner, uniform: Campaign, args, submitted: list) -> bool:
    """An adaptive campaign and the uniform one in the same run, alternating at the largest N,
    each beside its one-INSERT ceiling: submissions per one-INSERT request, and the ratio."""
    n = max(int(x) for x in args.n.split(","))
    adaptive = make_campaign(owner, "bench-crowd-adaptive", args.items, allocation=args.adaptive)
    adaptive_submitted: list[str] = []
    shares: dict[str, list[float]] = {"uniform": [], args.adaptive: []}
    for _ in range(2):
        for name, campaign, into in (("uniform", uniform, submitted),
                                     (args.adaptive, adaptive, adaptive_submitted)):
            job = AllocationJob(campaign, args.allocation_every) if campaign is adaptive \
                else None
            if job:
                job.start()
            rate = crowd(campaign, n, args.seconds, args.port, into)
            runs = job.stop() if job else 0
            shares[name].append(rate / ceiling(n, min(args.seconds, 10), args.port))
            print(f"    {name}: {shares[name][-1]:.3f} submissions per one-INSERT request"
                  + (f" (allocation job ran {runs} times)" if job else ""))
    ratio = sum(shares[args.adaptive]) / sum(shares["uniform"])
    print(f"  {args.adaptive} vs uniform at N={n}, alternating: submissions per one-INSERT "
          f"request {ratio:.3f}x ({'within' if abs(ratio - 1) <= 0.1 else 'NOT within'} 10%)")
    return verify(adaptive, adaptive_submitted)


BEFORE_SCHEMA = "bench_before"  # the code before's database functions, under --before-sql


def install_before_sql(before: Path, units: str) -> None:
    """The database functions of the code before (`claim:3,save_answer:3`: the files of its
    campaigns/work/sql) in a schema of their own, which the before server's sessions search
    first (PGOPTIONS), so that both servers run their own SQL over the same tables."""
    with connection.cursor() as cursor:
        cursor.execute(f"DROP SCHEMA IF EXISTS {BEFORE_SCHEMA} CASCADE")
        cursor.execute(f"CREATE SCHEMA {BEFORE_SCHEMA}")
        cursor.execute(f"SET search_path = {BEFORE_SCHEMA}, public")
        try:
            for unit in filter(None, units.split(",")):
                name, version = unit.split(":")
                sql = before / "campaigns" / "work" / "sql" / f"{name}_v{int(version)}.sql"
                cursor.execute(sql.read_text(encoding="utf-8"))
        finally:
            cursor.execute("SET search_path = public")


def drop_before_sql() -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"DROP SCHEMA IF EXISTS {BEFORE_SCHEMA} CASCADE")


def start_gunicorn(port: int, workers: int, threads: int = 1,
                   root: Path = ROOT, before_sql: bool = False) -> subprocess.Popen:
    """gunicorn serving the checkout at `root` (this one, or another for before/after runs);
    `before_sql`: its sessions find the functions of install_before_sql first."""
    env = {**os.environ, "PYTHONPATH": str(root), "DEBUG": "false",
           **({"PGOPTIONS": f"-c search_path={BEFORE_SCHEMA},public"} if before_sql else {}),
           "SECRET_KEY": "bench-" + "x" * 50,
           "ALLOWED_HOSTS": "127.0.0.1", "SECURE_SSL_REDIRECT": "false",
           "RATELIMIT_ENABLED": "false", "CONN_MAX_AGE": "600",
           # The project's settings with the ceiling view's URLconf (bench/urls.py).
           "DJANGO_SETTINGS_MODULE": "bench.settings",
           "STATIC_ROOT": f"/tmp/annotate-bench-static-{port}", "LOG_LEVEL": "ERROR"}
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
                   cwd=root, env=env, check=True)
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    proc = subprocess.Popen(
        # --preload: the app is imported once in the master, not by every worker at once.
        [gunicorn, "annotate.wsgi", "-w", str(workers), "-b", f"127.0.0.1:{port}",
         "--preload", "--timeout", "120", "--backlog", "2048", "--log-level", "warning",
         # Heartbeat files in memory, as docker/gunicorn.conf.py sets in production.
         *(["--worker-tmp-dir", "/dev/shm"] if os.path.isdir("/dev/shm") else []),
         *(["--worker-class", "gthread", "--threads", str(threads)] if threads > 1 else [])],
        cwd=root, env=env, start_new_session=True)
    for _ in range(300):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                break
        except OSError:
            time.sleep(0.2)
    else:
        proc.kill()
        raise SystemExit("gunicorn did not start")
    warm_up(port, workers)
    return proc


def warm_up(port: int, workers: int) -> None:
    """Every worker loads the URLconf and templates before anything is measured."""
    def hit():
        for _ in range(3):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            conn.request("GET", "/c/bench-warm-up/")  # a 404 page: URLconf, middleware, views
            conn.getresponse().read()
            conn.close()
    threads = [threading.Thread(target=hit) for _ in range(2 * workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def stop_gunicorn(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)


# --- the simulated workers -----------------------------------------------------------------



WRITTEN_TABLES = ("campaigns_item", "campaigns_assignment", "campaigns_assignmentitem",
                  "campaigns_annotation", "campaigns_itemtally", "campaigns_worker")


def vacuum() -> None:
    """VACUUM (ANALYZE) the tables a run writes, as autovacuum would between bursts.

    Every claim and answer updates item rows (slots_taken, annotations_done), whose old
    versions stay in the table and in the fill-order index until a vacuum; a PostgreSQL with
    autovacuum off (as this machine's is) would make each run pay for all earlier ones.
    """
    with connection.cursor() as cursor:
        if autovacuum_on(cursor):
            return
        cursor.execute(f"VACUUM (ANALYZE) {', '.join(WRITTEN_TABLES)}")


def autovacuum_on(cursor) -> bool:
    cursor.execute("SHOW autovacuum")
    return cursor.fetchone()[0] == "on"


class AutoAnalyze(threading.Thread):
    """ANALYZE a written table during a run whenever autovacuum's own rule says it is due.

    PostgreSQL analyzes a table once more rows changed since its last ANALYZE than
    autovacuum_analyze_threshold + autovacuum_analyze_scale_factor x its rows (50 + 10% by
    default); an ANALYZE also makes the sessions re-plan their cached statements. With
    autovacuum off (this machine), a run that starts on tables analyzed while nearly empty
    would keep plans made for a few rows (sequential scans of the assignment tables inside
    the prepared statements and the foreign-key checks: every request slower as the run
    inserts thousands of rows). This thread applies the same rule every second (autovacuum
    checks once a minute by default); it does nothing when autovacuum is on.
    """

    def __init__(self):
        super().__init__(daemon=True)
        self.halt = threading.Event()
        self.analyzed: list[str] = []

    def run(self) -> None:
        try:
            with connection.cursor() as cursor:
                if autovacuum_on(cursor):
                    return
                while not self.halt.wait(1.0):
                    cursor.execute(
                        "SELECT s.relname FROM pg_stat_user_tables s "
                        "JOIN pg_class c ON c.oid = s.relid WHERE s.relname = ANY(%s) AND "
                        "s.n_mod_since_analyze > current_setting("
                        "'autovacuum_analyze_threshold')::float8 + current_setting("
                        "'autovacuum_analyze_scale_factor')::float8 * GREATEST(c.reltuples, 0)",
                        [list(WRITTEN_TABLES)])
                    for (table,) in cursor.fetchall():
                        cursor.execute(f"ANALYZE {table}")
                        self.analyzed.append(table)
        finally:
            connection.close()

    def stop(self) -> list[str]:
        self.halt.set()
        self.join()
        return self.analyzed


def crowd(campaign: Campaign, n: int, seconds: float, port: int, all_submitted: list,
          figures: dict | None = None, follow_done: bool = False) -> float:
    """One run of n workers; returns submissions/s and fills `figures` (per answered item)."""
    vacuum()
    stop = threading.Event()
    analyze = AutoAnalyze()
    analyze.start()
    timings, results, elapsed, cpu = run(worker_loop, n, seconds, port, slug=campaign.slug,
                                         stop=stop, per_assignment=campaign.items_per_assignment,
                                         follow_done=follow_done)
    analyzed = analyze.stop()
    rate = len(results["submitted"]) / elapsed
    all_submitted += results["submitted"]
    errors = results["errors"]
    detail = f"errors {len(errors)}" + (f" e.g. {errors[:3]}" if errors else "")
    print(f"  N={n:<3} {len(results['submitted']):>6} submissions in {elapsed:5.1f}s = "
          f"{rate:7.1f} submissions/s  (handed in by the last save "
          f"{len(results['handed_in'])}, {detail}"
          f"{', campaign used up' if stop.is_set() else ''}; client CPU {cpu:.1f}s; "
          f"load average {os.getloadavg()[0]:.1f})")
    requests = sum(len(timings[kind]) for kind in KINDS)
    answered = max(len(results["answered"]), 1)
    server = results["server_cpu"]  # includes the N entry GETs (a few ms in all)
    per_submission = requests / max(len(results["submitted"]), 1)
    print(f"    {per_submission:.2f} requests per submission, {requests / answered:.2f} per "
          f"answered item (+ {len(timings[ENTRY])} entry GETs, one per worker): "
          f"{requests / elapsed:.1f} requests/s; gunicorn CPU "
          f"{1000 * server / max(requests, 1):.1f} ms per request, "
          f"{1000 * server / answered:.2f} ms per answered item; PostgreSQL CPU "
          f"{1000 * results['postgres_cpu'] / answered:.2f} ms per answered item; client CPU "
          f"{1000 * cpu / answered:.2f} ms per answered item")
    report_latencies(timings, KINDS)
    report_latencies(timings, [ENTRY])
    if analyzed:
        counts = ", ".join(f"{t.removeprefix('campaigns_')} {analyzed.count(t)}"
                           for t in dict.fromkeys(analyzed))
        print(f"    ANALYZE during the run (autovacuum's rule, autovacuum being off): {counts}")
    if figures is not None:
        figures.update(rate=rate, requests_per_item=requests / answered,
                       server_ms=1000 * server / answered,
                       postgres_ms=1000 * results["postgres_cpu"] / answered,
                       items_per_s=len(results["answered"]) / elapsed)
    return rate


def ceiling(n: int, seconds: float, port: int) -> float:
    timings, results, elapsed, _ = run(ceiling_loop, n, seconds, port)
    rate = len(results["inserted"]) / elapsed
    cpu_ms = 1000 * results["server_cpu"] / max(len(results["inserted"]), 1)
    pg_ms = 1000 * results["postgres_cpu"] / max(len(results["inserted"]), 1)
    print(f"  ceiling N={n:<3} one-INSERT view: {rate:7.1f} requests/s  "
          f"(errors {len(results['errors'])}; gunicorn CPU {cpu_ms:.1f} ms, PostgreSQL CPU "
          f"{pg_ms:.1f} ms per request)")
    report_latencies(timings, ["insert"])
    return rate


def verify(campaign: Campaign, submitted: list[str]) -> bool:
    """Every successful submit stored exactly once and its assignment submitted; no item
    above k; counters agree."""
    k = campaign.annotations_per_item
    per_assignment = dict(
        Annotation.objects.filter(campaign=campaign).values("assignment__token")
        .annotate(n=Count("id")).values_list("assignment__token", "n"))
    missing = [t for t in submitted if per_assignment.get(t, 0) == 0]
    per_item = campaign.items_per_assignment  # every item of a handed-in assignment, once
    duplicated = [t for t in submitted if per_assignment.get(t, 0) != per_item]
    duplicated += [t for t, n in per_assignment.items() if n > per_item]
    repeated_submits = len(submitted) - len(set(submitted))
    status = dict(Assignment.objects.filter(campaign=campaign, token__in=submitted)
                  .values_list("token", "status"))
    not_submitted = [t for t in submitted if status.get(t) != Assignment.Status.SUBMITTED]
    # ... and the other way round: a submitted assignment has its annotation.
    submitted_empty = (Assignment.objects.filter(campaign=campaign, status="submitted")
                       .exclude(token__in=per_assignment).count())
    over_k = (Annotation.objects.filter(campaign=campaign).values("item")
              .annotate(n=Count("id")).filter(n__gt=k).count())
    over_slots = Item.objects.filter(campaign=campaign, slots_taken__gt=F("slots_wanted")).count()
    counter_drift = (Item.objects.filter(campaign=campaign)
                     .annotate(n=Count("annotations")).exclude(annotations_done=F("n")).count())
    stored = sum(per_assignment.values())
    ok = not (missing or duplicated or repeated_submits or not_submitted or submitted_empty
              or over_k or over_slots or counter_drift)
    print(f"  verify {campaign.slug}: {len(submitted)} successful submits, {stored} annotations "
          f"stored; missing={len(missing)} duplicated={len(duplicated)} "
          f"repeated-tokens={repeated_submits} not-submitted={len(not_submitted)} "
          f"submitted-without-annotation={submitted_empty} items-above-k={over_k} "
          f"slots-above-k={over_slots} counter-drift={counter_drift} -> "
          f"{'OK: zero integrity violations' if ok else 'FAILED'}")
    return ok


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def compare(args, owner) -> bool:
    """Before (the checkout at --compare) and after (this one), alternating short blocks on
    two servers over the same database: at N=64 with one item per assignment, submissions per
    one-INSERT request (each run's ceiling measured on its own server right after it), and
    with --multi items per assignment, requests and CPU per answered item."""
    n = max(int(x) for x in args.n.split(","))
    one = make_campaign(owner, "bench-crowd", args.items)
    multi = make_campaign(owner, "bench-crowd-multi", args.items, per_assignment=args.multi)
    if args.before_sql:
        install_before_sql(Path(args.compare).resolve(), args.before_sql)
    servers = {"before": (start_gunicorn(args.port + 1, args.workers, args.threads,
                                         root=Path(args.compare).resolve(),
                                         before_sql=bool(args.before_sql)), args.port + 1),
               "after": (start_gunicorn(args.port, args.workers, args.threads), args.port)}
    shares: dict = defaultdict(list)
    per_item: dict = defaultdict(list)
    submitted: dict = defaultdict(list)
    try:
        for block in range(args.blocks):
            for label in ("before", "after") if block % 2 == 0 else ("after", "before"):
                proc, port = servers[label]
                SERVER[:] = [proc]
                print(f"block {block + 1}, {label} ({args.compare if label == 'before' else ROOT})")
                rate = crowd(one, n, args.seconds, port, submitted["one"],
                             follow_done=args.follow_done)
                shares[label].append(rate / ceiling(n, min(args.seconds, 5), port))
                print(f"    {shares[label][-1]:.3f} submissions per one-INSERT request")
                figures: dict = {}
                crowd(multi, n, args.seconds, port, submitted["multi"], figures,
                      follow_done=args.follow_done)
                per_item[label].append(figures)
    finally:
        for proc, _ in servers.values():
            stop_gunicorn(proc)
        if args.before_sql:
            drop_before_sql()
    ratios = [a / b for a, b in zip(shares["after"], shares["before"], strict=True)]
    print(f"\nbefore vs after, {args.blocks} alternating blocks at N={n} (shared machine):")
    for label in ("before", "after"):
        rows = per_item[label]
        print(f"  {label:<6} one item per assignment: submissions per one-INSERT request "
              f"{' / '.join(f'{x:.3f}' for x in shares[label])} (median "
              f"{_median(shares[label]):.3f}); {args.multi} items per assignment, median per "
              f"answered item: {_median([r['requests_per_item'] for r in rows]):.2f} requests, "
              f"gunicorn CPU {_median([r['server_ms'] for r in rows]):.2f} ms, PostgreSQL CPU "
              f"{_median([r['postgres_ms'] for r in rows]):.2f} ms, "
              f"{_median([r['items_per_s'] for r in rows]):.1f} answered items/s")
    print(f"  after / before, per block: {', '.join(f'{r:.2f}' for r in ratios)}; median "
          f"{_median(ratios):.2f}")
    return verify(one, submitted["one"]) & verify(multi, submitted["multi"])


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    # Two sync workers per core: fewer leave a core idle while a request waits on PostgreSQL;
    # more cost context switches (bench/README.md has the figures).
    parser.add_argument("--workers", type=int, default=4, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads per gunicorn worker (gthread worker class when > 1)")
    parser.add_argument("--seconds", type=float, default=20, help="duration of each run")
    parser.add_argument("--port", type=int, default=8102)
    parser.add_argument("--n", default="1,8,32,64", help="numbers of simulated workers")
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--big-items", type=int, default=200_000, help="0 skips the big run")
    parser.add_argument("--adaptive", default="adaptive_precision",
                        help="an allocation strategy to run against uniform ('' skips it)")
    parser.add_argument("--allocation-every", type=float, default=10.0,
                        help="seconds between runs of the allocation job in the adaptive run")
    parser.add_argument("--compare", default="",
                        help="another checkout (the code before): alternate blocks of before "
                             "and after instead of the runs above")
    parser.add_argument("--blocks", type=int, default=4, help="blocks of --compare")
    parser.add_argument("--before-sql", default="",
                        help="with --compare: the code before's database functions, e.g. "
                             "claim:3,save_answer:3 (files of its campaigns/work/sql), which its "
                             "server then runs instead of the ones this checkout's migrations "
                             "installed")
    parser.add_argument("--follow-done", action="store_true",
                        help="GET the done page after a redirect to it, as a browser does (the "
                             "flow with one request per answered item gets it with the save)")
    parser.add_argument("--multi", type=int, default=12,
                        help="items per assignment of --compare's second campaign")
    return parser.parse_args()


def rates_by_n(small: Campaign, args, submitted: list) -> dict[int, float]:
    """Submissions/s at each N of --n, each beside its one-INSERT ceiling."""
    rates = {}
    for n in [int(x) for x in args.n.split(",")]:
        rates[n] = crowd(small, n, args.seconds, args.port, submitted)
        ceiling_rate = ceiling(n, min(args.seconds, 10), args.port)
        # The same ratio on another machine predicts its rate from its one-INSERT figure.
        share = rates[n] / ceiling_rate
        print(f"    {share:.3f} submissions per one-INSERT request: 300 submissions/s "
              f"would need a one-INSERT rate of {300 / share:,.0f} requests/s")
    return rates


def main() -> int:
    args = arguments()
    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {TABLE}")
        cursor.execute(f"CREATE TABLE {TABLE} (id bigserial PRIMARY KEY, at timestamptz)")
    owner, _ = get_user_model().objects.get_or_create(username="bench-owner")
    kind = f"gthread, {args.threads} threads each" if args.threads > 1 else "sync workers"
    print(f"crowd bench: gunicorn annotate.wsgi -w {args.workers} ({kind}), PostgreSQL "
          f"{connection.pg_version}, {os.cpu_count()} CPUs, {args.seconds:g}s per run; "
          f"each worker opens the study link once, then loops claim POST, item GET, submit "
          f"POST (the submit hands the one-item assignment in)")
    if args.compare:
        ok = compare(args, owner)
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {TABLE}")
        print("VERDICT:", "OK" if ok else "INTEGRITY VIOLATIONS")
        return 0 if ok else 1
    small = make_campaign(owner, "bench-crowd", args.items)
    proc = start_gunicorn(args.port, args.workers, args.threads)
    SERVER[:] = [proc]
    ok = True
    try:
        submitted: list[str] = []
        rates = rates_by_n(small, args, submitted)
        ok &= verify(small, submitted)
        if args.adaptive:
            ok &= adaptive_against_uniform(owner, small, args, submitted)
            ok &= verify(small, submitted)
        if args.big_items:
            stop_gunicorn(proc)
            big = make_campaign(owner, "bench-crowd-big", args.big_items)
            proc = start_gunicorn(args.port, args.workers, args.threads)
            SERVER[:] = [proc]
            big_submitted: list[str] = []
            n = max(rates)
            # Alternating small, big, small, big at N: this machine's speed drifts by tens of
            # percent within minutes, and a ratio of two runs minutes apart measured it too.
            small_rates = [rates[n]]
            big_rates = [crowd(big, n, args.seconds, args.port, big_submitted)]
            small_rates.append(crowd(small, n, args.seconds, args.port, submitted))
            big_rates.append(crowd(big, n, args.seconds, args.port, big_submitted))
            ok &= verify(small, submitted)
            ok &= verify(big, big_submitted)
            ratio = sum(big_rates) / sum(small_rates)
            pairs = ", ".join(f"{b / s:.2f}" for b, s in zip(big_rates, small_rates, strict=True))
            print(f"  {args.big_items:,} vs {args.items:,} items at N={n}, alternating runs: "
                  f"{' / '.join(f'{r:.1f}' for r in big_rates)} vs "
                  f"{' / '.join(f'{r:.1f}' for r in small_rates)} submissions/s, "
                  f"ratio {ratio:.2f} (pairs: {pairs})")
    finally:
        stop_gunicorn(proc)
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {TABLE}")
    print("VERDICT:", "OK" if ok else "INTEGRITY VIOLATIONS")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
