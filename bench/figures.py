"""Benchmark: what drawing the figures adds to the statistics job.

Usage (not part of the test suite; needs the database of DATABASE_URL, migrated):

    .venv/bin/python bench/figures.py [--workers 20] [--reps 2] [--templates story-rating ...|all]

For a few starter templates' sample campaigns (by default one of each design: ratings,
pairwise, MQM error spans; their sample items, each answered by `workers` simulated workers,
as tests/admin/simulate.py does), times, `reps` times each and prints the
medians and the peak Python memory of one more run (tracemalloc, untimed):

- statistics: `campaign_statistics` (1,000 bootstrap resamples), what the job computed before
  figures;
- figures (SVG): `draw_figures(statistics)`, what a statistics job adds;
- figures (SVG + PDF): `draw_figures(statistics, pdf=True)`, what a report job adds;
- stored: the size of the figures as the result row keeps them (JSON).

The figures' cost grows with the systems, questions and workers drawn, not with the number of
annotations: a bigger campaign makes the statistics, not the figures, slower. The campaigns are
deleted afterwards.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics as stats
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotate.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402

from campaigns.analysis.figures import draw_figures  # noqa: E402
from campaigns.models import Campaign  # noqa: E402
from campaigns.selectors.analysis import campaign_statistics  # noqa: E402
from campaigns.services.items import items_import  # noqa: E402
from campaigns.starters import starter_get, starter_list  # noqa: E402
from tests.admin.simulate import simulate  # noqa: E402

# One of each design: ratings (3 questions), pairwise, error spans (MQM).
DEFAULT_TEMPLATES = ("story-rating", "pairwise-preference", "mqm")


def _campaign(owner, template: str, workers: int) -> Campaign:
    starter = starter_get(template)
    fields = {**starter.campaign_fields(), "items_per_assignment": len(starter.items),
              "annotations_per_item": workers, "status": Campaign.Status.LIVE}
    campaign = Campaign.objects.create(owner=owner, slug=f"bench-figures-{template}", **fields)
    items_import(campaign=campaign, content=starter.items_jsonl().encode(),
                 filename=f"{template}.jsonl")
    simulate(campaign, workers=workers, rng=random.Random(1), prefix="bench")
    return campaign


def _timed(fn, reps: int) -> tuple[float, float, object]:
    """Median seconds of `reps` runs; then the peak memory of one more run traced alone
    (tracemalloc slows Python severalfold, so it never runs under the clock)."""
    times, out = [], None
    for _ in range(reps):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return stats.median(times), peak / 2**20, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=20)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--templates", nargs="*", default=list(DEFAULT_TEMPLATES),
                        help="starter templates to run (all: --templates all)")
    args = parser.parse_args()
    owner, _ = get_user_model().objects.get_or_create(username="bench-figures")
    Campaign.objects.filter(slug__startswith="bench-figures-").delete()
    print(f"{'template':26} {'annotations':>11} {'statistics s':>12} {'MiB':>6} "
          f"{'SVG s':>6} {'MiB':>6} {'+PDF s':>7} {'MiB':>6} {'figures':>7} {'stored KB':>9}")
    try:
        chosen = [s.name for s in starter_list()] if args.templates == ["all"] else args.templates
        for starter in map(starter_get, chosen):
            campaign = _campaign(owner, starter.name, args.workers)
            s_time, s_mem, computed = _timed(lambda c=campaign: campaign_statistics(campaign=c),
                                             args.reps)
            svg_time, svg_mem, figures = _timed(lambda s=computed: draw_figures(s), args.reps)
            pdf_time, pdf_mem, with_pdf = _timed(lambda s=computed: draw_figures(s, pdf=True),
                                                 args.reps)
            stored = len(json.dumps(with_pdf)) / 1024
            print(f"{starter.name:26} {computed['counts']['annotations']:>11} {s_time:>12.2f} "
                  f"{s_mem:>6.0f} {svg_time:>6.2f} {svg_mem:>6.0f} {pdf_time:>7.2f} "
                  f"{pdf_mem:>6.0f} {len(figures):>7} {stored:>9.0f}")
    finally:
        Campaign.objects.filter(slug__startswith="bench-figures-").delete()


if __name__ == "__main__":
    main()
