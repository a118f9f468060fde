"""Benchmark: adaptive allocation against uniform, by replaying real judgments through the
product's own claim and save functions on a real database.

Usage (not part of the test suite; needs a migrated PostgreSQL database):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/annotate_adaptive \\
        .venv/bin/python bench/adaptive.py [--seeds 5] [--data compqa,story,da]

Each replay is a live campaign whose items carry a pool of real judgments; simulated workers
arrive one after another, each claims one item with `assignment_claim` and saves the next
unused real judgment of that item with `annotation_submit` (so the pick, the locks and k are
the product's). Under an adaptive strategy the allocation job (`campaign_allocate`) runs
every --every judgments, as Celery beat would; uniform allocation never runs it. A replay goes
on until the data run out, and the judgments needed are the first count after which the
conclusion matches the full data's at every later check (every --check judgments):

- compqa (pairwise, adaptive_ranking): the CompQA expert scores (comparative_rubric/,
  small_dataset_hum_evaluation.tsv), scenario 1 of the six LLMs and the human summaries
  (7 systems) on the 5 questions; one item per question and pair of systems (105 items), its
  pool the 15 rubric criteria, each a judgment: the system scoring higher on it wins, equal
  scores tie. Conclusion: Kendall tau >= 0.9 between the Bradley-Terry order of the
  judgments so far and that of all of them.
- story (ratings, adaptive_precision): the ScratchPlot coherence ratings (story_rating/), 100
  stories of 2 systems, 3 ratings each. Conclusion: every system's 95% interval half-width of
  the mean no wider than 1.1 times the widest with all the data.
- da (ratings, dynamic_redundancy): MLQE-PE en-de direct assessments (translation_da/, 300
  segments, 6 scores each) as one system per segment's quality band. Conclusion: Kendall
  tau >= 0.9 between the segments' mean scores so far and with all 6 scores.
- chat_preference (HH-RLHF) is not replayed: its rows name no systems (each is one judgment
  between two unnamed transcripts), so there is no ranking for allocation to steer.

Prints, per data set, the judgments needed by uniform and by adaptive (median and range over
the seeds) and the ratio adaptive / uniform per seed (median, min, max).
"""
from __future__ import annotations

import argparse
import ast
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotate.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402

from campaigns.analysis.allocation import bradley_terry_strengths  # noqa: E402
from campaigns.errors import NotLive, NoWorkAvailable  # noqa: E402
from campaigns.models import Campaign, Item  # noqa: E402
from campaigns.services.allocation import campaign_allocate  # noqa: E402
from campaigns.work import annotation_submit, assignment_claim, worker_get_or_create  # noqa: E402

DATA = Path(os.environ.get("SHARED_DATA_DIR", "/work/shared")) / "realdata"
TAU = 0.9
PAIRWISE = {"display": [{"field": "prompt", "label": "Question"}], "questions": [
    {"id": "preference", "kind": "pairwise", "text": "Which answer is better?", "tie": True}]}
LIKERT = {"display": [{"field": "prompt", "label": "Story"}], "questions": [
    {"id": "rating", "kind": "likert", "text": "How coherent is it?",
     "points": [{"value": v, "label": str(v)} for v in range(1, 6)]}]}
SLIDER = {"display": [{"field": "prompt", "label": "Segment"}], "questions": [
    {"id": "rating", "kind": "slider", "text": "Quality (0-100)", "min": 0, "max": 100,
     "step": 1, "start": 50}]}


# --- the data sets: items (id, system or systems, pool of answers) and the conclusion -----

def compqa():
    frame = pd.read_csv(DATA / "comparative_rubric" / "small_dataset_hum_evaluation.tsv",
                        sep="\t")
    systems = [f"scored_{m}_scenario_1_comparison" for m in
               ("gpt4", "gpt3-5", "llama3-8b", "llama3-70b", "mixtral", "perplexity")]
    frame = frame[frame["filename"].isin([*systems, "scored_human_summaries"])]
    frame = frame.assign(question=frame["object1"] + " vs " + frame["object2"] + " "
                         + frame["aspect"].fillna(""),
                         system=frame["filename"].str.replace("scored_", "").str.replace(
                             "_scenario_1_comparison", ""))
    criteria = [f"score_dict.{i}" for i in range(1, 16)]
    items = []
    for question, rows in frame.groupby("question"):
        rows = rows.set_index("system")
        names = sorted(rows.index)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                pool = []
                for c in criteria:
                    x, y = float(rows.at[a, c]), float(rows.at[b, c])
                    choice = "A" if x > y else "B" if y > x else "tie"
                    pool.append({"preference": {"choice": choice, "order": [a, b]}})
                items.append((f"{question}|{a}|{b}", (a, b), pool))
    return items


def story():
    frame = pd.read_csv(DATA / "story_rating" /
                        "scratchplot_coherence_full-annotation-result-new.tsv", sep="\t")
    return [(f"s{n}", rows["INPUT:system"].iloc[0],
             [{"rating": int(v)} for v in rows["OUTPUT:category"]])
            for n, (_, rows) in enumerate(frame.groupby("INPUT:story"))]


def da():
    frame = pd.read_csv(DATA / "translation_da" /
                        "mlqe-pe_en-de_test20.ende.df.short_first300.tsv", sep="\t")
    return [(f"seg{row['index']}", "en-de", [{"rating": int(v)} for v in
                                             ast.literal_eval(row["scores"])])
            for _, row in frame.iterrows()]


def bt_order(log):
    judgments = [(a["order"][0], a["order"][1], {"A": 1.0, "B": 0.0, "tie": 0.5}[a["choice"]])
                 for _, a in log]
    pairs = {tuple(a["order"]) for _, a in log}
    fit = bradley_terry_strengths(judgments, pairs)
    return dict(zip(fit.systems, fit.theta, strict=True))


def tau_reached(reference: dict, now: dict) -> bool:
    keys = sorted(reference)
    if any(k not in now for k in keys):
        return False
    return stats.kendalltau([reference[k] for k in keys], [now[k] for k in keys])[0] >= TAU


def ranking_conclusion(full_log):
    reference = bt_order([(k, a["preference"]) for k, a in full_log])
    return lambda log: tau_reached(reference, bt_order([(k, a["preference"]) for k, a in log]))


def widths(log, system_of):
    ratings = defaultdict(list)
    for key, answer in log:
        ratings[system_of[key]].append(answer["rating"])
    out = {}
    for system, values in ratings.items():
        values = np.array(values, dtype=float)
        out[system] = (np.inf if len(values) < 2 else
                       stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1)
                       / np.sqrt(len(values)))
    return out


def precision_conclusion(full_log, system_of):
    target = 1.1 * max(widths(full_log, system_of).values())
    return lambda log: (len(w := widths(log, system_of)) == len(set(system_of.values()))
                        and max(w.values()) <= target)


def item_means(log):
    values = defaultdict(list)
    for key, answer in log:
        values[key].append(answer["rating"])
    return {k: float(np.mean(v)) for k, v in values.items()}


def item_ranking_conclusion(full_log):
    reference = item_means(full_log)
    return lambda log: tau_reached(reference, item_means(log))


DATASETS = {
    # name: (loader, schema, adaptive strategy, its min per item, conclusion maker)
    "compqa": (compqa, PAIRWISE, "adaptive_ranking", 1, "ranking"),
    "story": (story, LIKERT, "adaptive_precision", 1, "precision"),
    "da": (da, SLIDER, "dynamic_redundancy", 2, "items"),
}


# --- one replay through the product -------------------------------------------------------

def replay(name: str, items, allocation: str, seed: int, args) -> int:
    """Judgments needed under `allocation` with this seed (the order of each item's pool)."""
    _, schema, _, minimum, kind = DATASETS[name]
    owner = get_user_model().objects.get_or_create(username="bench-adaptive")[0]
    slug = f"replay-{name}-{allocation}-{seed}"
    Campaign.objects.filter(slug=slug).delete()
    size = max(len(pool) for _, _, pool in items)
    campaign = Campaign.objects.create(
        owner=owner, slug=slug, name=slug, schema=schema, status="live", allocation=allocation,
        annotations_per_item=size, min_annotations_per_item=minimum,
        max_annotations_per_item=size, agreement_spread=args.spread,
        items_per_assignment=1, max_assignments_per_worker=1)
    rng = np.random.default_rng(seed)
    pools, system_of = {}, {}
    for key, system, pool in items:
        data = {"prompt": key}
        if isinstance(system, tuple):
            data["outputs"] = [{"system": s, "text": s} for s in system]
        item = Item.objects.create(campaign=campaign, external_id=key[:200],
                                   system="" if isinstance(system, tuple) else system,
                                   data=data, slots_wanted=len(pool))
        pools[item.pk] = [pool[i] for i in rng.permutation(len(pool))]
        system_of[key[:200]] = system
    if allocation != "uniform":
        campaign_allocate(campaign=campaign)
    full_log = [(key[:200], answer) for key, _, pool in items for answer in pool]
    reached = {"ranking": lambda: ranking_conclusion(full_log),
               "precision": lambda: precision_conclusion(full_log, system_of),
               "items": lambda: item_ranking_conclusion(full_log)}[kind]()
    log, needed, n = [], None, 0
    while True:
        worker = worker_get_or_create(campaign=campaign, platform="link", platform_id=f"r{n}")
        try:
            assignment = assignment_claim(campaign=campaign, worker=worker)
        except (NoWorkAvailable, NotLive):  # the data are used up (a full campaign closes)
            break
        slot = assignment.slots.select_related("item").get()
        answer = pools[slot.item_id][slot.item.annotations_done]
        annotation_submit(assignment=assignment, position=slot.position, answers=answer,
                          seconds_spent=1)
        log.append((slot.item.external_id, answer))
        n += 1
        if allocation != "uniform" and n % args.every == 0:
            campaign_allocate(campaign=campaign)
        if n % args.check == 0:
            ok = reached(log)
            needed = (needed or n) if ok else None
    if needed is None and reached(log):
        needed = n
    campaign.delete()
    return needed if needed is not None else n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--data", default="compqa,story,da")
    parser.add_argument("--every", type=int, default=10, help="judgments between job runs")
    parser.add_argument("--check", type=int, default=10, help="judgments between checks")
    parser.add_argument("--spread", type=float, default=10.0,
                        help="dynamic redundancy's agreement spread (DA points)")
    args = parser.parse_args()
    with connection.cursor() as cursor:  # a replay, not a durability test: no fsync per save
        cursor.execute("SET synchronous_commit TO off")
    for name in args.data.split(","):
        loader, _, strategy, _, _ = DATASETS[name]
        items = loader()
        total = sum(len(pool) for _, _, pool in items)
        started = time.perf_counter()
        rows = []
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            uniform = replay(name, items, "uniform", seed, args)
            adaptive = replay(name, items, strategy, seed, args)
            rows.append((uniform, adaptive, adaptive / uniform))
            print(f"  {name} seed {seed}: uniform {uniform}, {strategy} {adaptive} "
                  f"({adaptive / uniform:.2f}x)", flush=True)
        ratios = [r for _, _, r in rows]
        print(f"{name}: {len(items)} items, {total} judgments in all; {strategy} needs "
              f"{statistics.median(ratios):.2f}x uniform's judgments (median of {args.seeds} "
              f"seeds; range {min(ratios):.2f}-{max(ratios):.2f}); uniform "
              f"{statistics.median([u for u, _, _ in rows]):.0f}, adaptive "
              f"{statistics.median([a for _, a, _ in rows]):.0f} (medians); "
              f"{time.perf_counter() - started:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
