"""Benchmark: export 1,000,000 rubric annotations as csv and jsonl, beside PostgreSQL COPY.

Usage:
  DATABASE_URL=postgres://postgres@127.0.0.1:5432/annotate_bench .venv/bin/python bench/export.py
  options: --annotations N (default 1,000,000)  --fresh (regenerate)  --formats csv,jsonl

Generates (once; reused by later runs) a rubric campaign (15 criteria + total) with N annotations
by SQL `INSERT ... SELECT generate_series`. Then, in the same run: PostgreSQL's
`COPY (SELECT ...) TO STDOUT WITH CSV` of the same rows and columns (worker pseudonym stand-in,
one column per rubric criterion) into a file, and each export format run through the Celery
task in a separate process, whose wall time and peak RSS (wait4's ru_maxrss) are printed.
Targets: export time <= 2x COPY, peak RSS < 250 MB.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotate.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from campaigns.models import Annotation, Assignment, Campaign, Item, Worker  # noqa: E402
from tests.factories import RUBRIC_SCHEMA  # noqa: E402

SLUG = "bench-export"
ITEMS, WORKERS, PER_ASSIGNMENT = 20_000, 5_000, 10
CRITERIA = [(c["id"], c["max"]) for c in RUBRIC_SCHEMA["questions"][0]["criteria"]]


# --- data ---------------------------------------------------------------------------------------


def _clone(model, proto, count: int, overrides: dict[str, str]) -> tuple[int, int]:
    """INSERT `count` copies of a prototype row, with SQL expressions over g = 1..count."""
    table = connection.ops.quote_name(model._meta.db_table)
    cols = [f.column for f in model._meta.concrete_fields if not f.primary_key]
    select = [overrides.get(c, f"p.{connection.ops.quote_name(c)}") for c in cols]
    select = [expression.replace("%", "%%") for expression in select]  # psycopg2 placeholders
    with connection.cursor() as cur:
        cur.execute(
            f"INSERT INTO {table} ({', '.join(connection.ops.quote_name(c) for c in cols)}) "
            f"SELECT {', '.join(select)} FROM {table} p, generate_series(1, %s) g "
            f"WHERE p.id = %s ORDER BY g",
            [count, proto.pk],
        )
        cur.execute(f"SELECT min(id), max(id), count(*) FROM {table} "
                    f"WHERE campaign_id = %s AND id <> %s", [proto.campaign_id, proto.pk])
        low, high, n = cur.fetchone()
    assert n == count and high - low + 1 == count, f"{table}: ids are not contiguous"
    return low, high


def _rubric_answers() -> str:
    terms = [f"(((g::bigint * {7919 * (i + 3)}) % 1000003) % {mx + 1})::int"
             for i, (_, mx) in enumerate(CRITERIA)]
    pairs = ", ".join(f"'{cid}', {t}" for (cid, _), t in zip(CRITERIA, terms, strict=True))
    return (f"jsonb_build_object('rubric', jsonb_build_object({pairs}, "
            f"'total', {' + '.join(terms)}))")


def generate(n: int) -> Campaign:
    owner, _ = get_user_model().objects.get_or_create(username="bench")
    Campaign.objects.filter(slug=SLUG).delete()
    campaign = Campaign.objects.create(owner=owner, slug=SLUG, name="Export bench",
                                       schema=RUBRIC_SCHEMA, status="live",
                                       annotations_per_item=n // ITEMS)
    item = Item.objects.create(campaign=campaign, external_id="proto")
    worker = Worker.objects.create(campaign=campaign, platform="prolific", platform_id="proto")
    assignment = Assignment.objects.create(campaign=campaign, worker=worker,
                                           deadline="2030-01-01T00:00Z", token="bench-proto")
    annotation = Annotation.objects.create(campaign=campaign, assignment=assignment, item=item,
                                           worker=worker, answers={})
    started = time.perf_counter()
    k = n // ITEMS
    i0, _ = _clone(Item, item, ITEMS, {
        "external_id": "'item-' || g", "system": "'sys-' || (g % 5)", "data": "'{}'::jsonb",
        "slots_wanted": str(k), "slots_taken": str(k), "annotations_done": str(k)})
    w0, _ = _clone(Worker, worker, WORKERS, {"platform_id": "'PID-' || g"})
    n_assignments = -(-n // PER_ASSIGNMENT)
    a0, _ = _clone(Assignment, assignment, n_assignments, {
        "worker_id": f"{w0} + (g - 1) % {WORKERS}", "token": f"'bench-{campaign.pk}-' || g",
        "status": "'submitted'", "started_at": "now() - interval '2 days'",
        "submitted_at": "now() - interval '1 day'", "study_id": "'STUDY-1'",
        "session_id": "'SESSION-' || g", "completion_code": "'CODE-' || g"})
    _clone(Annotation, annotation, n, {
        "assignment_id": f"{a0} + (g - 1) / {PER_ASSIGNMENT}",
        "item_id": f"{i0} + (g - 1) % {ITEMS}",
        "worker_id": f"{w0} + ((g - 1) / {PER_ASSIGNMENT}) % {WORKERS}",
        "answers": _rubric_answers(), "seconds_spent": "(g % 300) + 0.5",
        "created_at": "now() - (g || ' seconds')::interval",
        "updated_at": "now() - (g || ' seconds')::interval"})
    annotation.delete()
    assignment.delete()
    worker.delete()
    item.delete()
    with connection.cursor() as cur:
        for model in (Item, Worker, Assignment, Annotation):
            cur.execute(f"VACUUM ANALYZE {model._meta.db_table}")
    print(f"generated {n:,} annotations in {time.perf_counter() - started:.1f}s")
    return campaign


def campaign_with(n: int, fresh: bool) -> Campaign:
    campaign = Campaign.objects.filter(slug=SLUG).first()
    if campaign and not fresh and campaign.annotations.count() == n:
        return campaign
    return generate(n)


# --- measuring ----------------------------------------------------------------------------------


def copy_sql(campaign: Campaign) -> str:
    """The same rows and columns as the csv export, written by PostgreSQL itself."""
    criteria = ", ".join(f"a.answers -> 'rubric' ->> '{cid}'" for cid, _ in CRITERIA)
    return (
        "COPY (SELECT a.id, i.external_id, i.system, i.control, "
        "'w_' || left(md5(a.campaign_id || ':' || w.platform || ':' || w.platform_id), 16), "
        "w.platform, s.id, s.study_id, s.session_id, s.mturk_assignment_id, s.mturk_hit_id, "
        "s.completion_code, s.started_at, s.submitted_at, a.created_at, a.updated_at, "
        f"a.seconds_spent, a.control_passed, {criteria}, a.answers -> 'rubric' ->> 'total' "
        "FROM campaigns_annotation a JOIN campaigns_item i ON i.id = a.item_id "
        "JOIN campaigns_worker w ON w.id = a.worker_id "
        "JOIN campaigns_assignment s ON s.id = a.assignment_id "
        f"WHERE a.campaign_id = {int(campaign.pk)} ORDER BY a.id) TO STDOUT WITH CSV HEADER"
    )


def run_copy(campaign: Campaign) -> tuple[float, int]:
    with tempfile.TemporaryFile() as out, connection.cursor() as cur:
        started = time.perf_counter()
        cur.cursor.copy_expert(copy_sql(campaign), out)
        out.flush()
        elapsed = time.perf_counter() - started
        size = out.tell()
    return elapsed, size


def run_child(fmt: str) -> dict:
    """The export, through the Celery task, in a fresh process: time and peak RSS."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, __file__, "--child", fmt], stdout=subprocess.PIPE,
                            cwd=ROOT)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"the {fmt} export process failed ({proc.returncode})")
    result = json.loads(out.decode().strip().splitlines()[-1])
    result["process_seconds"] = time.perf_counter() - started
    result["peak_rss_mb"] = usage.ru_maxrss / 1024  # KiB on Linux
    result["cpu_seconds"] = usage.ru_utime + usage.ru_stime
    return result


def child(fmt: str) -> None:
    from django.core.files.storage import storages

    from campaigns.models import ExportJob
    from campaigns.services.exports import export_job_create
    from campaigns.tasks import task_export_run

    campaign = Campaign.objects.get(slug=SLUG)
    job = export_job_create(campaign=campaign, requested_by=None, fmt=fmt, enqueue=False)
    started = time.perf_counter()
    task_export_run.apply(kwargs={"job_id": job.pk})
    elapsed = time.perf_counter() - started
    job.refresh_from_db()
    assert job.status == ExportJob.Status.DONE, job.error
    size = storages["exports"].size(job.file)
    storages["exports"].delete(job.file)
    print(json.dumps({"seconds": elapsed, "rows": job.rows_written, "bytes": size}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotations", type=int, default=1_000_000)
    parser.add_argument("--formats", default="csv,jsonl")
    parser.add_argument("--fresh", action="store_true", help="Regenerate the campaign.")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child)
    call_command("migrate", verbosity=0)
    campaign = campaign_with(args.annotations, args.fresh)
    run_copy(campaign)  # warm the cache, as the exports below find it warm too
    copies = [run_copy(campaign)]
    print(f"COPY ... TO STDOUT WITH CSV: {copies[0][0]:.2f}s, {copies[0][1] / 1e6:.0f} MB "
          f"({args.annotations:,} rows)")
    for fmt in args.formats.split(","):
        r = run_child(fmt)
        copies.append(run_copy(campaign))
        print(f"COPY ... TO STDOUT WITH CSV: {copies[-1][0]:.2f}s")
        # The machine's load may change during the run: compare with the COPYs just before and
        # just after this export.
        copy_seconds = (copies[-2][0] + copies[-1][0]) / 2
        ratio = r["seconds"] / copy_seconds
        print(f"export {fmt:6}: {r['seconds']:.2f}s ({r['rows'] / r['seconds']:,.0f} rows/s), "
              f"{r['bytes'] / 1e6:.0f} MB, {ratio:.2f}x COPY (mean of the COPYs around it: "
              f"{copy_seconds:.2f}s) [{'ok' if ratio <= 2 else 'over'} <= 2x], peak RSS "
              f"{r['peak_rss_mb']:.0f} MB [{'ok' if r['peak_rss_mb'] < 250 else 'over'} < 250 MB], "
              f"process {r['process_seconds']:.2f}s wall, {r['cpu_seconds']:.2f}s CPU")
    print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} CPUs")

if __name__ == "__main__":
    main()
