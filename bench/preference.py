"""Benchmark: Bradley-Terry on a pairwise campaign's 200,000 judgments over 20 systems.

Usage (not part of the test suite; no database needed):

    .venv/bin/python bench/preference.py [--judgments 200000] [--systems 20] [--reps 5]

Simulates the judgments as `campaigns.selectors.analysis.preference_frame` returns them
(item, worker, first, second, score): 40,000 items, each a pair of systems judged by 5
workers in a random order, outcomes drawn from Davidson's model (about 10% ties). Then, in
alternation, `reps` times each:

- ours: `bradley_terry(frame, n_boot=0)`, one fit from the frame (system names included),
  on the decided judgments;
- choix: `choix.ilsr_pairwise` (Maystre and Grossglauser 2015) on the same judgments as
  (winner, loser) index pairs, prepared before the clock starts;

and prints the medians and the ratio (target: ours <= 2x choix), and how far apart the two
fits are. Then times the whole pairwise analysis of the question once per rep
(`preference_tables`: pairs, win rates, Bradley-Terry with 1,000 item-bootstrap resamples,
position bias) on all judgments, ties split, and once with Davidson's ties; target: <= 20x
one fit.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from campaigns.analysis.preference import bradley_terry, preference_tables  # noqa: E402

RATERS_PER_ITEM = 5


def simulate(n: int, k: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, k)
    items = n // RATERS_PER_ITEM
    pair = np.array([rng.choice(k, 2, replace=False) for _ in range(items)])
    item = np.repeat(np.arange(items), RATERS_PER_ITEM)
    a, b = pair[item, 0], pair[item, 1]
    swap = rng.random(len(item)) < 0.5
    first, second = np.where(swap, b, a), np.where(swap, a, b)
    p_first, p_second = np.exp(strength[first]), np.exp(strength[second])
    tie = 0.3 * np.sqrt(p_first * p_second)
    u = rng.random(len(item)) * (p_first + p_second + tie)
    score = np.where(u < p_first, 1.0, np.where(u < p_first + tie, 0.5, 0.0))
    names = np.array([f"system-{i:02d}" for i in range(k)])
    return pd.DataFrame({"item": item, "worker": rng.integers(0, 500, len(item)),
                         "first": names[first], "second": names[second], "score": score})


def timed(function) -> tuple[float, object]:
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def main() -> None:
    import choix

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgments", type=int, default=200_000)
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    frame = simulate(args.judgments, args.systems)
    decided = frame[frame["score"] != 0.5].reset_index(drop=True)
    names = sorted(set(frame["first"]))
    index = {s: i for i, s in enumerate(names)}
    first, second = decided["first"].map(index), decided["second"].map(index)
    won = decided["score"] == 1
    pairs = list(zip(np.where(won, first, second).tolist(), np.where(won, second, first)
                     .tolist(), strict=True))
    print(f"{len(frame):,} judgments ({(frame['score'] == 0.5).mean():.1%} ties), "
          f"{frame['item'].nunique():,} items, {args.systems} systems; "
          f"{len(decided):,} decided judgments for the one-fit comparison; "
          f"load average {os.getloadavg()[0]:.1f}")
    ours, theirs, gap = [], [], 0.0
    for _ in range(args.reps):
        t, table = timed(lambda: bradley_terry(decided, n_boot=0))
        ours.append(t)
        t, params = timed(lambda: choix.ilsr_pairwise(args.systems, pairs, tol=1e-10,
                                                      max_iter=1000))
        theirs.append(t)
        strengths = table.set_index("system").loc[names, "strength"].to_numpy()
        gap = float(np.max(np.abs(strengths - (params - params.mean()))))
    one_fit, reference = statistics.median(ours), statistics.median(theirs)
    print(f"one fit: ours {one_fit:.3f} s (runs {', '.join(f'{t:.3f}' for t in ours)}), "
          f"choix ILSR {reference:.3f} s (runs {', '.join(f'{t:.3f}' for t in theirs)}): "
          f"ratio {one_fit / reference:.2f}x (target <= 2x); largest strength difference "
          f"{gap:.1e}")
    for ties in ("split", "davidson"):
        runs = [timed(lambda ties=ties: preference_tables(frame, n_boot=1000, ties=ties))[0]
                for _ in range(max(1, args.reps // 2))]
        whole = statistics.median(runs)
        print(f"whole analysis, 1,000 resamples, ties {ties}: {whole:.3f} s (runs "
              f"{', '.join(f'{t:.3f}' for t in runs)}): {whole / one_fit:.1f}x our one fit "
              f"(target <= 20x), {whole / reference:.1f}x the choix fit")


if __name__ == "__main__":
    main()
