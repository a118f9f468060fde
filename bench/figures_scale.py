"""Benchmark: the statistics job with its figures, and the statistics page served from the
cache, on campaigns of 100,000 and 1,000,000 annotations.

Usage (not part of the test suite; needs PostgreSQL; one size at a time is one heavy job):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/annotate_figures_bench \\
        .venv/bin/python bench/figures_scale.py [--sizes 100000,1000000] [--workers N] \\
        [--reps 3] [--rebuild]

Each size's campaign is a rating campaign built in SQL by bench/synthetic.py (4 systems, 5
raters per item out of 1 worker per 1,000 annotations, or `--workers`, one 1-5 likert
question) and kept between runs. Then, each in a child process of its own (peak RSS sampled
by the parent):

  statistics: campaign_statistics with the job's default options (1,000 bootstrap resamples),
              what the job computed before it drew figures: the reference;
  job:        the statistics job exactly as a Celery worker runs it (statistics_compute on a
              queued result row): the statistics, draw_figures (timed inside) and storing the
              row, which fills the cache the page reads;
  page:       GET of the admin statistics page by a superuser from that cache, `reps` times
              (median and slowest), with the page's size and the figures' SVG sizes.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics as stats
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotate.settings")
os.environ.setdefault("DATABASE_URL",
                      "postgres://postgres@127.0.0.1:5432/annotate_figures_bench")
RATERS_PER_ITEM = 5
WORKERS = 0  # --workers: 0 is 1 per 1,000 annotations


def workers(size: int) -> int:
    return WORKERS or max(RATERS_PER_ITEM, size // 1000)


def slug(size: int) -> str:
    return f"bench-figures-{size}" + (f"-{WORKERS}-workers" if WORKERS else "")


def build(size: int, rebuild: bool):
    from django.contrib.auth import get_user_model

    from bench.synthetic import kept_or_built

    owner, _ = get_user_model().objects.get_or_create(username="bench-owner")
    return kept_or_built(owner, slug=slug(size), items=size // RATERS_PER_ITEM,
                         raters_per_item=RATERS_PER_ITEM,
                         workers=workers(size), rebuild=rebuild)


# --- the children ------------------------------------------------------------------------------

def child_statistics(size: int, reps: int) -> dict:
    from campaigns.models import Campaign
    from campaigns.selectors.analysis import campaign_statistics
    from campaigns.services.statistics import Kind, statistics_options

    options = statistics_options(kind=Kind.STATISTICS)
    options["subset_by"] = tuple(options["subset_by"])
    started = time.perf_counter()
    campaign_statistics(campaign=Campaign.objects.get(slug=slug(size)), **options)
    return {"seconds": time.perf_counter() - started}


def child_job(size: int, reps: int) -> dict:
    """The job on a fresh result row (the cache the page reads), its figures timed inside."""
    from django.utils import timezone

    import campaigns.analysis.figures as figures
    from campaigns.models import Campaign, StatisticsResult
    from campaigns.services import statistics as service

    drawn = {}
    draw = figures.draw_figures

    def timed_draw(statistics, **kwargs):
        started = time.perf_counter()
        out = draw(statistics, **kwargs)
        drawn["seconds"] = time.perf_counter() - started
        return out

    figures.draw_figures = timed_draw
    campaign = Campaign.objects.get(slug=slug(size))
    options = service.statistics_options(kind=service.Kind.STATISTICS)
    StatisticsResult.objects.filter(campaign=campaign).delete()
    row = StatisticsResult.objects.create(
        campaign=campaign, kind=service.Kind.STATISTICS, options=options,
        options_key=service._key(options), status=service.Status.QUEUED,
        queued_at=timezone.now())
    started = time.perf_counter()
    service.statistics_compute(result_id=row.pk)
    seconds = time.perf_counter() - started
    row.refresh_from_db()
    if row.status != service.Status.DONE:
        raise SystemExit(f"the job did not finish: {row.status} {row.error}")
    return {"seconds": seconds, "figures_seconds": drawn.get("seconds"),
            "figures": len(row.figures), "svg_kb": [round(len(f["svg"]) / 1024)
                                                    for f in row.figures]}


def child_page(size: int, reps: int) -> dict:
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from campaigns.models import Campaign

    campaign = Campaign.objects.get(slug=slug(size))
    admin, _ = get_user_model().objects.get_or_create(
        username="bench-admin", defaults={"is_staff": True, "is_superuser": True})
    client = Client()
    client.force_login(admin)
    url = reverse("admin:campaigns_campaign_statistics", args=[campaign.pk])
    times, size_kb = [], 0
    for _ in range(reps):
        started = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - started)
        if response.status_code != 200 or b"stats-figure" not in response.content:
            raise SystemExit(f"the page is not served from the cache: {response.status_code}")
        size_kb = len(response.content) / 1024
    return {"median": stats.median(times), "slowest": max(times), "page_kb": size_kb}


CHILDREN = {"statistics": child_statistics, "job": child_job, "page": child_page}


def run_child(kind: str, size: int, reps: int) -> dict:
    """One child; its result, wall time and peak RSS (sampled every 50 ms)."""
    import psutil

    command = [sys.executable, __file__, "--child", kind, "--sizes", str(size),
               "--reps", str(reps), "--workers", str(WORKERS)]
    started = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    watched, peak = psutil.Process(proc.pid), 0
    while proc.poll() is None:
        try:
            peak = max(peak, watched.memory_info().rss)
        except psutil.Error:
            break
        time.sleep(0.05)
    output, _ = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"{kind} child failed ({proc.returncode})")
    result = json.loads(output.strip().splitlines()[-1])
    return {**result, "wall": time.perf_counter() - started, "peak_mb": peak / 2**20}


def report(size: int, results: dict) -> None:
    s, job, page = results["statistics"], results["job"], results["page"]
    rest = job["seconds"] - job["figures_seconds"]
    print(f"{size:>9,} annotations, {workers(size):,} workers  "
          f"(load {os.getloadavg()[0]:.1f})")
    print(f"  statistics alone (reference): {s['seconds']:7.1f} s   peak {s['peak_mb']:6.0f} MB")
    print(f"  job with figures:             {job['seconds']:7.1f} s   peak "
          f"{job['peak_mb']:6.0f} MB   (figures {job['figures_seconds']:.1f} s, the rest "
          f"{rest:.1f} s; {job['figures']} figures, SVG KB {job['svg_kb']})")
    print(f"  page from the cache:          {page['median']:7.2f} s median, "
          f"{page['slowest']:.2f} s slowest, {page['page_kb']:.0f} KB, peak "
          f"{page['peak_mb']:.0f} MB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--only", default="statistics,job,page")
    parser.add_argument("--child", default="")
    args = parser.parse_args()
    global WORKERS
    WORKERS = args.workers

    import django

    django.setup()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.child:
        print(json.dumps(CHILDREN[args.child](sizes[0], args.reps)))
        return 0
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    for size in sizes:
        build(size, args.rebuild)
        report(size, {kind: run_child(kind, size, args.reps) for kind in args.only.split(",")})
    return 0


if __name__ == "__main__":
    sys.exit(main())
