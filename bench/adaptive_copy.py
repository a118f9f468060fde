"""A copy of bench/adaptive.py's replay outside the database, to try allocation rules quickly.

Usage (not part of the test suite; imports bench/adaptive.py, so Django is set up, but no
query is made):

    .venv/bin/python bench/adaptive_copy.py --data pplm-negative --seeds 6 \\
        --strategies 'adaptive_ranking (min 0)' [--check 10] [--control]

It does what the database replay does, in memory: the same items in the same order (the
item id), the same seeded order of each item's pool, the claim's pick (open items, highest
priority first, then fewest taken, then the lowest id), the allocation job's plan every
--every judgments (the product's own functions of campaigns/analysis/allocation.py, through
`plan`), and the same conclusions checked every --check judgments. It is a copy: the figures
that count are the database replay's (bench/README.md says which is which).
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import adaptive as bench  # noqa: E402  (sets Django up)

from campaigns.analysis import allocation as stats  # noqa: E402

SCORE = {"A": 1.0, "B": 0.0, "tie": 0.5}


def plan(strategy, items, done, log, low, high, spread):
    """(priority, wanted) per item index, as campaign_allocate's _plan computes them."""
    if strategy == "dynamic_redundancy":
        answers = {}
        for i, answer in log:
            answers.setdefault(i + 1, []).append(_parts(answer))  # ids from 1, as in a table
        priority, wanted, _ = stats.redundancy_plan(answers, range(1, len(items) + 1),
                                                    minimum=low, maximum=high, spread=spread)
        return list(priority.values()), list(wanted.values())
    if strategy == "adaptive_ranking":
        pairs = {i: system for i, (_, system, _) in enumerate(items)}
        prefs = [(a["preference"]["order"][0], a["preference"]["order"][1],
                  SCORE[a["preference"]["choice"]]) for _, a in log]
        strengths = stats.bradley_terry_strengths(prefs, pairs.values())
        priority = stats.ranking_priorities(pairs, dict(enumerate(done)), strengths,
                                            minimum=low)
    else:
        tallies = {}
        for i, answer in log:
            counts = tallies.setdefault(i, {}).setdefault("rating", {})
            counts[str(answer["rating"])] = counts.get(str(answer["rating"]), 0) + 1
        widths = stats.system_half_widths((items[i][1], c) for i, c in tallies.items())
        priority = stats.precision_priorities(
            {i: s for i, (_, s, _) in enumerate(items)}, dict(enumerate(done)), widths,
            target=1.0, minimum=low)
    return [priority.get(i, 0.0) for i in range(len(items))], [high] * len(items)


def _parts(answer):
    if "preference" in answer:
        p = answer["preference"]
        winner = ("tie" if p["choice"] == "tie" else
                  p["order"][0] if p["choice"] == "A" else p["order"][1])
        return {"preference/winner": winner}
    return {"rating/rating": answer["rating"]}


def replay(name, items, strategy, minimum, seed, args):
    """As bench.replay: per conclusion (judgments needed, reached)."""
    _, _, _, kind = bench.DATASETS[name]
    rng = np.random.default_rng(seed)
    pools = [[pool[i] for i in rng.permutation(len(pool))] for _, _, pool in items]
    size = max(len(p) for p in pools)
    keys = [key[:200] for key, _, _ in items]
    system_of = {key[:200]: system for key, system, _ in items}
    full_log = [(key[:200], answer) for key, _, pool in items for answer in pool]
    conclusions = {"ranking": lambda: bench.ranking_conclusions(full_log),
                   "davidson": lambda: bench.ranking_conclusions(full_log, bench.davidson_order),
                   "precision": lambda: bench.precision_conclusions(full_log, system_of),
                   "items": lambda: bench.item_ranking_conclusions(full_log)}[kind]()
    done = [0] * len(items)
    log, keyed = [], []
    if strategy == "uniform":
        priority, wanted = [0.0] * len(items), [len(p) for p in pools]
    else:
        priority, wanted = plan(strategy, items, done, log, minimum, size, args.spread)
    needed, n = dict.fromkeys(conclusions), 0
    while True:
        open_ = [i for i in range(len(items))
                 if done[i] < max(done[i], wanted[i]) and done[i] < len(pools[i])]
        if not open_:
            break
        i = min(open_, key=lambda j: (-priority[j], done[j], j))
        answer = pools[i][done[i]]
        done[i] += 1
        log.append((i, answer))
        keyed.append((keys[i], answer))
        n += 1
        if strategy != "uniform" and n % args.every == 0:
            priority, wanted = plan(strategy, items, done, log, minimum, size, args.spread)
        if n % args.check == 0:
            for c, reached in conclusions.items():
                needed[c] = (needed[c] or n) if reached(keyed) else None
    for c, reached in conclusions.items():
        if needed[c] is None and reached(keyed):
            needed[c] = n
    return {c: (count, True) if count is not None else (len(full_log), False)
            for c, count in needed.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="pplm-negative")
    parser.add_argument("--seeds", type=int, default=6)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--strategies", default="adaptive_ranking (min 0)")
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--check", type=int, default=10)
    parser.add_argument("--spread", type=float, default=10.0)
    parser.add_argument("--control", action="store_true",
                        help="uniform against uniform on other seeds, instead of a strategy")
    args = parser.parse_args()
    for name in args.data.split(","):
        items = bench.DATASETS[name][0]()
        for label in args.strategies.split(","):
            strategy, minimum = label.split(" (min ")
            minimum = int(minimum.rstrip(")"))
            rows = []
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                u = replay(name, items, "uniform", minimum, seed, args)
                # --control: uniform against itself on another order of the judgments (the
                # seed args.seeds further on), the spread that luck alone gives a ratio
                a = (replay(name, items, "uniform", minimum, seed + args.seeds, args)
                     if args.control else replay(name, items, strategy, minimum, seed, args))
                rows.append((u, a))
                print(f"  {name} seed {seed}: " + "; ".join(
                    f"[{c}] {u[c][0]} vs {a[c][0]}{'' if a[c][1] else ' (not reached)'}"
                    for c in u), flush=True)
            for c in rows[0][0]:
                r = [a[c][0] / u[c][0] for u, a in rows]
                print(f"{name} {label} [{c}]: {statistics.median(r):.2f}x "
                      f"({min(r):.2f}-{max(r):.2f}), above 1x on {sum(x > 1 for x in r)} of "
                      f"{len(r)}; uniform {statistics.median(u[c][0] for u, _ in rows):.0f}, "
                      f"adaptive {statistics.median(a[c][0] for _, a in rows):.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
