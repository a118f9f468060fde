"""The statistics job's memory budget: refuse a campaign too large for it before reading
anything, and resample less when the data read already holds much of it.

The job's peak memory grows with the campaign's annotations (the analysis frame and the arrays
built from it); the resamples are drawn in blocks, so their number barely moves it. The
estimate below comes from bench/stats_scale.py (peak RSS at 100,000 and 1,000,000 annotations,
docs/deployment.md has the table); `STATISTICS_MEMORY_LIMIT_MB` sets the limit.
"""
from __future__ import annotations

from dataclasses import dataclass

import psutil
from django.conf import settings

from ...models import Annotation, Campaign

BASE_MB = 350  # the process with Django, pandas and scipy loaded, and its first arrays
# Peak 395 MB at 100,000 and 970 MB at 1,000,000 annotations (bench/stats_scale.py,
# 2026-12-04, the job and its report): the line through both, rounded up.
MB_PER_MILLION_ANNOTATIONS = 700
DEGRADE_SHARE = 0.5  # past this share of the limit once the data is read: fewer resamples
FEWER_RESAMPLES = 5  # resample this many times fewer
MIN_RESAMPLES = 200


class StatisticsTooLarge(Exception):
    """The campaign's statistics would pass the memory limit: nothing is computed."""


@dataclass(frozen=True)
class Resamples:
    requested: int
    used: int
    note: str = ""

    def as_dict(self) -> dict:
        return {"requested": self.requested, "used": self.used, "note": self.note}


def memory_estimate_mb(annotations: int) -> float:
    return BASE_MB + MB_PER_MILLION_ANNOTATIONS * annotations / 1_000_000


def check_memory_budget(*, campaign: Campaign) -> None:
    """Raise StatisticsTooLarge when the campaign's estimate is over the limit."""
    limit = settings.STATISTICS_MEMORY_LIMIT_MB
    if not limit:
        return
    count = Annotation.objects.filter(campaign=campaign).count()
    estimate = memory_estimate_mb(count)
    if estimate > limit:
        raise StatisticsTooLarge(
            f"The statistics of {count:,} annotations need about {estimate:,.0f} MB of memory, "
            f"more than this server allows a statistics job ({limit:,} MB, "
            "STATISTICS_MEMORY_LIMIT_MB). Nothing was computed: ask the operator to raise the "
            "limit (docs/deployment.md sizes it), or export the annotations and analyse them "
            "elsewhere.")


def resamples_within_budget(n_boot: int) -> Resamples:
    """The resamples to use, once the data is read: all of them, or fewer (and why) when the
    process already holds DEGRADE_SHARE of the limit."""
    limit = settings.STATISTICS_MEMORY_LIMIT_MB
    held = psutil.Process().memory_info().rss / 2**20
    if not limit or n_boot <= MIN_RESAMPLES or held <= DEGRADE_SHARE * limit:
        return Resamples(n_boot, n_boot)
    used = max(MIN_RESAMPLES, n_boot // FEWER_RESAMPLES)
    return Resamples(n_boot, used, (
        f"Intervals from {used} resamples instead of {n_boot}: with the data read, the job held "
        f"{held:,.0f} MB of its {limit:,} MB memory limit (STATISTICS_MEMORY_LIMIT_MB), so it "
        "resampled less to stay within it. The intervals are a little less precise."))
