"""Benchmark: researcher requests for statistics on a 1,000,000-annotation campaign.

Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/annotate_analysis_bench \
       .venv/bin/python bench/stats_requests.py [--items 200000] [--raters 5] [--repeat 5]

The campaign of bench/agreement.py (200,000 items x 5 raters, ~950,000 annotations, generated
in SQL once and reused). The statistics themselves are computed by a Celery job; what this
times is every request a researcher makes, in-process through Django's test client (server
time, no network), interleaved, median of --repeat:
  reference: GET .../agreement/?question=quality (one question's alpha with a 1,000-resample
             CI, computed in the request: the endpoint the issue found fast enough)
  first:     GET .../stats/ with options never asked for: 202, the job queued
  cached:    GET .../stats/ with a stored result, checked for staleness: 200
  recompute: POST .../stats/: 202, the job queued
  page:      the admin statistics page from the stored result: 200
  pending:   the admin statistics page with options never asked for: "being computed"
and each one's ratio to the reference; the target is a few seconds at most. The queue is not
touched (the job is recorded, not sent): the bench times the requests, not Celery. The stored
result is the statistics of a 2,000-item slice of the same design (computing them for the
whole campaign is the job's business, not a request's).
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotate.settings")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/annotate_analysis_bench")

import django  # noqa: E402

django.setup()

from datetime import timedelta  # noqa: E402

from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from django.utils import timezone  # noqa: E402
from rest_framework.authtoken.models import Token  # noqa: E402

from annotate.celery import app  # noqa: E402
from bench.agreement import SLUG, generate  # noqa: E402
from campaigns import tasks  # noqa: E402
from campaigns.models import Campaign, StatisticsResult  # noqa: E402
from campaigns.selectors.analysis import campaign_statistics  # noqa: E402
from campaigns.services.researchers import researchers_group  # noqa: E402
from campaigns.services.statistics import Kind, _key, statistics_options  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--raters", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    setup_test_environment()
    campaign = Campaign.objects.filter(slug=SLUG).first()
    expected = args.items * args.raters
    if campaign is None or not 0.9 * expected < campaign.annotations.count() <= expected:
        started = time.perf_counter()
        campaign = generate(args.items, args.raters)
        print(f"generated {campaign.annotations.count():,} annotations in "
              f"{time.perf_counter() - started:.0f} s")
    print(f"campaign {SLUG}: {campaign.annotations.count():,} annotations")
    owner = campaign.owner
    owner.is_staff = True
    owner.save()
    owner.groups.add(researchers_group())

    result = _small_statistics()
    StatisticsResult.objects.filter(campaign=campaign).delete()
    options = statistics_options(kind=Kind.STATISTICS)
    StatisticsResult.objects.create(
        campaign=campaign, kind=Kind.STATISTICS, options=options, options_key=_key(options),
        status="done", result=result, computed_at=timezone.now() - timedelta(hours=1))

    sent: list[int] = []
    app.conf.task_always_eager = False
    tasks.task_statistics_compute.apply_async = lambda kwargs, **_: sent.append(kwargs)
    token = Token.objects.get_or_create(user=owner)[0].key
    api = Client(HTTP_AUTHORIZATION=f"Token {token}", HTTP_HOST="127.0.0.1")
    admin = Client(HTTP_HOST="127.0.0.1")
    admin.force_login(owner)
    stats = f"/api/campaigns/{SLUG}/stats/"
    page = f"/admin/campaigns/campaign/{campaign.pk}/statistics/"
    runs: dict[str, list[float]] = {}

    def timed(name: str, client: Client, method: str, url: str, status: int) -> None:
        started = time.perf_counter()
        response = getattr(client, method)(url)
        runs.setdefault(name, []).append(time.perf_counter() - started)
        assert response.status_code == status, (name, url, response.status_code, runs[name][-1])

    for n in range(args.repeat):  # interleaved, so load from other processes hits every path
        timed("reference", api, "get", f"/api/campaigns/{SLUG}/agreement/?question=quality",
              200)
        timed("first", api, "get", f"{stats}?alpha={0.0001 + n * 0.001:.4f}", 202)
        timed("cached", api, "get", stats, 200)
        StatisticsResult.objects.filter(campaign=campaign, options_key=_key(options)).update(
            status="done")
        timed("recompute", api, "post", stats, 202)
        StatisticsResult.objects.filter(campaign=campaign, options_key=_key(options)).update(
            status="done")
        timed("page", admin, "get", page, 200)
        timed("pending", admin, "get", f"{page}?exclude_flagged=1&n={n}", 200)
        StatisticsResult.objects.filter(campaign=campaign, options__exclude_flagged=True).delete()
    reference = statistics.median(runs["reference"])
    print(f"medians of {args.repeat} interleaved runs (server time, in-process):")
    for name, label in (("reference", "GET agreement/ (1 question, CI)"),
                        ("first", "GET stats/, new options (202)"),
                        ("cached", "GET stats/, cached + stale check"),
                        ("recompute", "POST stats/ (202)"),
                        ("page", "admin statistics page, cached"),
                        ("pending", "admin page, being computed")):
        median = statistics.median(runs[name])
        print(f"  {label:36} {median * 1000:8.1f} ms  (max {max(runs[name]) * 1000:.1f})  "
              f"ratio {median / reference:.3f}x")
    print(f"jobs queued: {len(sent)}; target: every request a few seconds at most")
    StatisticsResult.objects.filter(campaign=campaign).delete()


def _small_statistics() -> dict:
    small = Campaign.objects.filter(slug="bench-agreement-small").first()
    if small is None or not small.annotations.exists():
        big = Campaign.objects.get(slug=SLUG)
        Campaign.objects.filter(pk=big.pk).update(slug="bench-agreement-hold")
        try:
            small = generate(2000, 5)
            Campaign.objects.filter(pk=small.pk).update(slug="bench-agreement-small")
        finally:
            Campaign.objects.filter(pk=big.pk).update(slug=SLUG)
        small.refresh_from_db()
    return campaign_statistics(campaign=small)


if __name__ == "__main__":
    main()
