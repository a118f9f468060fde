"""Coverage and false-positive tables of the statistics' conclusions, by simulation through the
product's own analysis functions (no database).

Usage: .venv/bin/python bench/coverage.py [--reps 300] [--seed 0]

Tables printed (each a share over --reps simulated studies; a 95% interval should cover about
95%, a test at alpha 0.05 should name a winner among identical systems at most 5%):
  crossed raters  system-mean intervals with 15 raters of leniency sd 0.5, 3 raters per item,
                  item sd 1, residual sd 1, at 30 and 100 items: item bootstrap (raters held
                  fixed), two-way cluster-robust t (the default with >= 10 raters), pigeonhole
                  bootstrap
  Bradley-Terry   coverage of s0's true centred log-strength (0.5) by the item-bootstrap
                  intervals of the plain and the position-adjusted fits at 5, 8 and 40 items
                  (4 systems, 6 judgments per item, strengths 0.5, 0, 0, -0.5, a balanced order)
  MQM             coverage of the true mean segment penalty (Poisson errors x weight 1 or 5)
                  by the item-bootstrap interval at 12 and 50 segments
  null            share of studies naming any winner among 4 identical systems: numeric
                  (compare_systems, Holm), pairwise sign tests (Holm), MQM paired tests (Holm)
"""
import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotate.settings")

from campaigns.analysis.comparisons import compare_systems  # noqa: E402
from campaigns.analysis.crossed import two_way_bootstrap_ci, two_way_cluster_ci  # noqa: E402
from campaigns.analysis.design_tests import unit_tests  # noqa: E402
from campaigns.analysis.preference import bradley_terry  # noqa: E402
from campaigns.analysis.preference_position import bradley_terry_position  # noqa: E402
from campaigns.analysis.preference_tests import preference_comparisons  # noqa: E402
from campaigns.analysis.scores import item_cluster_ci  # noqa: E402
from campaigns.analysis.spans import resampled_sums  # noqa: E402


def crossed(n_items, seed, raters=15, per_item=3, leniency=0.5):
    rng = np.random.default_rng(seed)
    item = np.repeat(np.arange(n_items), per_item)
    rater = np.concatenate([rng.choice(raters, per_item, replace=False)
                            for _ in range(n_items)])
    value = (rng.normal(0, 1, n_items)[item] + rng.normal(0, leniency, raters)[rater]
             + rng.normal(0, 1, len(item)))
    return item, rater, value


def crossed_table(reps):
    print("\ncrossed raters (15 raters, leniency sd 0.5): coverage of the true mean")
    print(f"{'items':>6} {'item bootstrap':>15} {'two-way cluster t':>18} {'pigeonhole':>11}")
    for n in (30, 100):
        hits = np.zeros(3)
        for seed in range(reps):
            item, rater, value = crossed(n, seed)
            for k, (low, high, _) in enumerate((
                    item_cluster_ci(item, value, n_boot=500, seed=seed),
                    two_way_cluster_ci(item, rater, value),
                    two_way_bootstrap_ci(item, rater, value, n_boot=500, seed=seed))):
                hits[k] += low <= 0 <= high
        print(f"{n:>6} {hits[0] / reps:>15.3f} {hits[1] / reps:>18.3f} {hits[2] / reps:>11.3f}")


def judgments(n_items, seed, theta=(0.5, 0.0, 0.0, -0.5), per_item=6, gamma=0.0):
    rng = np.random.default_rng(seed)
    theta = np.asarray(theta)
    rows = []
    for it in range(n_items):
        for _ in range(per_item):
            a, b = rng.choice(len(theta), 2, replace=False)
            win = rng.random() < 1 / (1 + np.exp(-(theta[a] - theta[b] + gamma)))
            rows.append((f"i{it}", "w", f"s{a}", f"s{b}", float(win)))
    return pd.DataFrame(rows, columns=["item", "worker", "first", "second", "score"])


def bt_table(reps):
    print("\nBradley-Terry: coverage of s0's true centred strength 0.5 (4 systems, 6/item)")
    print(f"{'items':>6} {'plain':>7} {'position-adjusted':>18} {'usable':>7}")
    for n in (5, 8, 40):
        hits, used = np.zeros(2), 0
        for seed in range(reps):
            frame = judgments(n, seed)
            plain = bradley_terry(frame, n_boot=200, seed=seed)
            adjusted = bradley_terry_position(frame, n_boot=200, seed=seed)["table"]
            if len(plain) < 4 or len(adjusted) < 4 or plain["ci_low"].isna().any():
                continue
            used += 1
            for k, table in enumerate((plain, adjusted)):
                t = table.set_index("system")
                # The interval of a strength, centred on the true centred strength of s0.
                hits[k] += t.loc["s0", "ci_low"] <= 0.5 <= t.loc["s0", "ci_high"]
        used = max(used, 1)
        print(f"{n:>6} {hits[0] / used:>7.3f} {hits[1] / used:>18.3f} {used:>7}")


def mqm_table(reps):
    print("\nMQM: coverage of the true mean segment penalty (item bootstrap, percentile)")
    print(f"{'segments':>9} {'coverage':>9}")
    truth = 0.8 * 1 + 0.2 * 5  # Poisson(0.8) minor (1) + Poisson(0.2) major (5) per segment
    for n in (12, 50):
        hits = 0
        for seed in range(reps):
            rng = np.random.default_rng(seed)
            penalty = rng.poisson(0.8, n) + 5 * rng.poisson(0.2, n)
            sums = resampled_sums(penalty[:, None].astype(float), n_boot=500, seed=seed)
            low, high = np.percentile(sums[:, 0] / n, [2.5, 97.5])
            hits += low <= truth <= high
        print(f"{n:>9} {hits / reps:>9.3f}")


def null_table(reps):
    print("\nnull: share of studies naming any winner among 4 identical systems (Holm)")
    found = np.zeros(3)
    for seed in range(reps):
        rng = np.random.default_rng(seed)
        frame = pd.DataFrame({"system": np.repeat(["a", "b", "c", "d"], 40),
                              "item": np.arange(160), "worker": "w", "question": "q",
                              "part": "", "segment": None, "value": rng.normal(size=160)})
        found[0] += compare_systems(frame, n_boot=0)["better"].notna().any()
        found[1] += preference_comparisons(judgments(60, seed, theta=(0, 0, 0, 0)))[
            "better"].notna().any()
        units = pd.DataFrame({"system": np.repeat(["a", "b", "c", "d"], 30),
                              "item": [f"{s}{j}" for s in "abcd" for j in range(30)],
                              "segment": np.tile(np.arange(30), 4),
                              "value": rng.poisson(1.0, 120).astype(float)})
        ratings = units.assign(worker=np.tile(["r1", "r2"], 60))
        found[2] += unit_tests(units, ratings, question="mqm", higher_is_better=False)[
            "comparisons"]["better"].notna().any()
    print(f"{'numeric':>8} {found[0] / reps:.3f}  {'pairwise':>8} {found[1] / reps:.3f}  "
          f"{'MQM':>4} {found[2] / reps:.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    args = parser.parse_args()
    start = time.time()
    crossed_table(args.reps)
    bt_table(max(50, args.reps // 3))
    mqm_table(args.reps)
    null_table(max(50, args.reps // 3))
    print(f"\n{time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
