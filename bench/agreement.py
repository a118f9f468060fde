"""Benchmark: Krippendorff's alpha for one question over ~1,000,000 ratings from the database.

Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/annotate_analysis_bench \
       .venv/bin/python bench/agreement.py [--items 200000] [--raters 5] [--repeat 3] [--rebuild]

200,000 items x 5 raters, about 5% of the ratings missing, one 1-5 likert question (ordinal).
The data is generated in SQL once (bench/synthetic.py) and reused. Timed in the same run,
interleaved (median of --repeat runs):
  reference: krippendorff.alpha on a ready 5 x 200,000 reliability matrix (the package alone)
  counts:    question_value_counts (database -> per-item value counts, read from the per-item
             tallies PostgreSQL keeps as annotations are written, models.ItemTally) ->
             alpha_from_counts (the package on those counts): our pipeline, the figure the
             target is about
  ratings:   question_ratings (item, worker, value rows read out of the JSON answers) ->
             krippendorff_alpha (the path for questions without a fixed scale)
  frame:     annotations_frame (the statistics page's whole tidy frame) -> krippendorff_alpha
and each one's ratio to the reference (the target is within 3x). Every timed path is the point
estimate only; question_agreement (alpha with a 1,000-resample bootstrap CI, raters counted) is
timed once, separately, and not compared.
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

import krippendorff  # noqa: E402
import numpy as np  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

from bench.synthetic import kept_or_built  # noqa: E402
from campaigns.analysis.agreement import alpha_from_counts, krippendorff_alpha  # noqa: E402
from campaigns.models import Annotation, Campaign  # noqa: E402
from campaigns.selectors.analysis import (  # noqa: E402
    annotations_frame,
    question_agreement,
    question_ratings,
    question_value_counts,
)

SLUG = "bench-agreement"
MISSING = 0.05


def generate(n_items: int, n_raters: int, rebuild: bool) -> Campaign:
    """Every rater rates every item (bench/synthetic.py), about 5% of the ratings left out."""
    owner, _ = get_user_model().objects.get_or_create(username="bench-owner")
    return kept_or_built(owner, slug=SLUG, items=n_items, rebuild=rebuild,
                         raters_per_item=n_raters, missing=MISSING)


def counts_pipeline(campaign: Campaign) -> tuple[float, dict]:
    """Database -> per-item value counts -> alpha (the package on the counts), with timings."""
    started = time.perf_counter()
    counts, domain, level = question_value_counts(campaign=campaign, question="quality")
    read = time.perf_counter()
    alpha = alpha_from_counts(counts, domain, level)
    done = time.perf_counter()
    return alpha, {"frame": read - started, "alpha": done - read, "total": done - started,
                   "rows": int(counts.sum())}


def pipeline(campaign: Campaign) -> tuple[float, dict]:
    """Database -> ratings frame -> value counts -> alpha (the package), with timings."""
    started = time.perf_counter()
    ratings = question_ratings(campaign=campaign, question="quality")
    framed = time.perf_counter()
    result = krippendorff_alpha(ratings["item"].to_numpy(), ratings["worker"].to_numpy(),
                                ratings["value"].to_numpy(), level="ordinal", n_boot=0)
    done = time.perf_counter()
    return result.alpha, {"frame": framed - started, "alpha": done - framed,
                          "total": done - started, "rows": len(ratings)}


def full_pipeline(campaign: Campaign) -> tuple[float, dict]:
    """The statistics page's path: the whole tidy frame (all facts) -> alpha."""
    started = time.perf_counter()
    frame = annotations_frame(campaign=campaign)
    framed = time.perf_counter()
    rated = frame[frame["question"].eq("quality")]
    result = krippendorff_alpha(rated["item"].to_numpy(), rated["worker"].to_numpy(),
                                rated["value"].to_numpy(), level="ordinal", n_boot=0)
    done = time.perf_counter()
    return result.alpha, {"frame": framed - started, "alpha": done - framed,
                          "total": done - started, "rows": len(frame)}


def ready_matrix(campaign: Campaign) -> np.ndarray:
    """The reliability matrix (raters x items, NaN for missing) the package takes as input."""
    rows = np.array(Annotation.objects.filter(campaign=campaign).values_list(
        "worker_id", "item_id", "answers__quality"), dtype=float)
    raters, r = np.unique(rows[:, 0], return_inverse=True)
    items, i = np.unique(rows[:, 1], return_inverse=True)
    matrix = np.full((len(raters), len(items)), np.nan)
    matrix[r, i] = rows[:, 2]
    return matrix


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--raters", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    campaign = generate(args.items, args.raters, args.rebuild)
    matrix = ready_matrix(campaign)
    print(f"ratings: {int(np.isfinite(matrix).sum()):,}; matrix {matrix.shape[0]} x "
          f"{matrix.shape[1]:,}")

    paths = (("counts", counts_pipeline, "question_value_counts -> alpha"),
             ("lean", pipeline, "question_ratings -> alpha"),
             ("full", full_pipeline, "annotations_frame -> alpha"))
    timings: dict[str, list] = {name: [] for name, _, _ in paths}
    timings["reference"] = []
    for _ in range(args.repeat):  # interleaved, so load from other processes hits every path
        started = time.perf_counter()
        expected_alpha = krippendorff.alpha(reliability_data=matrix,
                                            level_of_measurement="ordinal")
        timings["reference"].append(time.perf_counter() - started)
        for name, run, _ in paths:
            alpha, timing = run(campaign)
            assert abs(alpha - expected_alpha) < 1e-9, (name, alpha, expected_alpha)
            timings[name].append(timing)
    ref_s = statistics.median(timings["reference"])
    print(f"alpha (ordinal): {alpha:.6f} from the database = {expected_alpha:.6f} (package)")
    print(f"medians of {args.repeat} interleaved runs; point estimate only (no bootstrap):")
    print(f"{'krippendorff.alpha on a ready matrix':36} {ref_s:.3f} s  ratio 1.0x")
    for name, _, label in paths:
        runs = timings[name]
        total = statistics.median(r["total"] for r in runs)
        print(f"{label:36} {total:.3f} s  (read {statistics.median(r['frame'] for r in runs):.3f}"
              f" s for {runs[0]['rows']:,} ratings/rows, alpha "
              f"{statistics.median(r['alpha'] for r in runs):.3f} s)  ratio {total / ref_s:.2f}x")
    print("target: question_value_counts -> alpha within 3x of the package's own time")
    started = time.perf_counter()
    row = question_agreement(campaign=campaign, question="quality")
    print(f"separately, question_agreement (what GET /api/campaigns/<slug>/agreement/ returns: "
          f"alpha {row['alpha']:.4f}, 1,000-resample bootstrap CI [{row['ci_low']:.4f}, "
          f"{row['ci_high']:.4f}], {row['n_items']:,} items, {row['n_raters']} raters): "
          f"{time.perf_counter() - started:.1f} s")

if __name__ == "__main__":
    main()
