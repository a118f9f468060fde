"""Benchmark: adaptive allocation against uniform, by replaying real judgments through the
product's own claim and save functions on a real database.

Usage (not part of the test suite; needs a migrated PostgreSQL database):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/annotate_adaptive \\
        .venv/bin/python bench/adaptive.py [--seeds 20] [--jobs 2] \\
            [--data pplm,compqa,story,da,da-systems,chat]

Each replay is a live campaign whose items carry a pool of real judgments; simulated workers
arrive one after another, each claims one item with `assignment_claim` and saves the next
unused real judgment of that item with `annotation_submit` (so the pick, the locks and k are
the product's). Under an adaptive strategy the allocation job (`campaign_allocate`) runs
every --every judgments, as Celery beat would; uniform allocation never runs it. A replay goes
on until the data run out, and the judgments needed are the first count after which the
conclusion matches the full data's at every later check (every --check judgments; 1, a
check after every judgment, is the finer measurement: 10 rounds small counts up to the
next ten). bench/adaptive_copy.py is a copy of the replay outside the database, to try an
allocation rule quickly before replaying it here:

- compqa (pairwise, adaptive_ranking): the CompQA expert scores (comparative_rubric/,
  small_dataset_hum_evaluation.tsv), scenario 1 of the six LLMs and the human summaries
  (7 systems) on the 5 questions; one item per question and pair of systems (105 items), its
  pool the 15 rubric criteria, each a judgment: the system scoring higher on it wins, equal
  scores tie. Conclusion: Kendall tau >= 0.9 between the Bradley-Terry order of the
  judgments so far and that of all of them; and a second one, the same significant pairs
  (the pairs of systems whose Bradley-Terry strengths differ at the 5% level with all the
  judgments, and only those, differ in the same direction with the judgments so far).
- pplm-positive, pplm-negative (pairwise, adaptive_ranking at a minimum of 1 and of 0 per
  item, and dynamic_redundancy from 2 to 3): PPLM's human evaluation of sentiment control
  (continuation/, Dathathri et al. 2020), 4 generation methods compared pairwise on 270 pairs
  of passages, 3 annotators each answering "Which passage is more positive?" (negative, in the
  other file): A, B, or both/neither, a tie. One item per pair, its pool the 3 answers.
  Conclusions: Kendall tau >= 0.9 (with 4 systems: the same order) between Davidson's order
  (ties as their own outcome, the schema's tie model) so far and with all the judgments; and
  the same significant pairs, as for compqa.
- pplm-fluency (ratings, adaptive_precision): the fluency ratings (1-5) of the positive file,
  one item per passage (by its id) with the 3 ratings of the first pair that showed it, its
  system the method that wrote it (the product steers ratings by the item's system, so a
  rating of one output of a pair cannot be steered per output: a passage is its own item).
  Conclusion as for story.
- story (ratings, adaptive_precision): the ScratchPlot coherence ratings (story_rating/), 100
  stories of 2 systems, 3 ratings each. Conclusion: every system's 95% interval half-width of
  the mean no wider than 1.1 times the widest with all the data.
- da (ratings, dynamic_redundancy): MLQE-PE en-de direct assessments (translation_da/, 300
  segments, 6 scores each), one item per segment. Conclusion: Kendall
  tau >= 0.9 between the segments' mean scores so far and with all 6 scores.
- da-systems (ratings, adaptive_precision): both MLQE-PE files, each the output of its own
  NMT system (en-de: 300 segments x 6 scores; ru-en: 200 x 3), one item per segment, its
  system the file's. Conclusion as for story.
- chat (HH-RLHF chat preferences, chat_preference/): not replayable, and `--data chat` reads
  the file and prints why: each row holds only the chosen and the rejected transcript, with
  no system, model or rater named, and each pair was judged once, so there is neither a
  ranking nor a second judgment of anything for an allocation to steer.

A replay whose strategy runs out of work before its judgments reach the conclusion did not
reach it: it counts as needing every judgment of the data (the researcher would have to go
on to all of it) and is printed as "not reached". Prints, per data set and conclusion, the
judgments needed by uniform and by adaptive (medians) and the ratio adaptive / uniform per
seed (median and range). `--jobs` runs seeds in parallel processes, each its own
connection.
"""
from __future__ import annotations

import argparse
import ast
import csv
import json
import multiprocessing
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

from campaigns.analysis.allocation import PRIOR_WINS, bradley_terry_strengths  # noqa: E402
from campaigns.analysis.preference import fit_davidson  # noqa: E402
from campaigns.errors import NotLive, NoWorkAvailable  # noqa: E402
from campaigns.models import Campaign, Item  # noqa: E402
from campaigns.services.allocation import campaign_allocate  # noqa: E402
from campaigns.work import annotation_submit, assignment_claim, worker_get_or_create  # noqa: E402

# The shared data folder beside the checkout, as for the tests; SHARED_DATA_DIR points elsewhere.
DATA = Path(os.environ.get("SHARED_DATA_DIR")
            or Path(__file__).resolve().parent.parent.parent / "shared") / "realdata"
TAU = 0.9
PAIRWISE = {"display": [{"field": "prompt", "label": "Question"}], "questions": [
    {"id": "preference", "kind": "pairwise", "text": "Which answer is better?", "tie": True}]}
LIKERT = {"display": [{"field": "prompt", "label": "Story"}], "questions": [
    {"id": "rating", "kind": "likert", "text": "How coherent is it?",
     "points": [{"value": v, "label": str(v)} for v in range(1, 6)]}]}
PPLM_PAIRWISE = {sentiment: {"display": [{"field": "prompt", "label": "Passages"}], "questions": [
    {"id": "preference", "kind": "pairwise", "text": f"Which passage is more {sentiment}?",
     "tie": True, "tie_model": "davidson"}]} for sentiment in ("positive", "negative")}
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


def _da_segments(name: str, system: str):
    """(segment id, system, its raters' DA scores) per row of an MLQE-PE file; read with
    quoting off, as its unbalanced quotes inside sentences require."""
    frame = pd.read_csv(DATA / "translation_da" / name, sep="\t", quoting=csv.QUOTE_NONE)
    ids = frame["index"] if "index" in frame else frame["segid"]
    return [(f"{system}-{segment}", system,
             [{"rating": int(v)} for v in ast.literal_eval(scores)])
            for segment, scores in zip(ids, frame["scores"], strict=True)]


def da():
    return _da_segments("mlqe-pe_en-de_test20.ende.df.short_first300.tsv", "en-de")


def da_systems():
    """Both MLQE-PE files, each the output of its own system (the dataset authors' en-de and
    ru-en NMT models): 300 en-de segments with 6 DA scores each, 200 ru-en with 3."""
    return da() + _da_segments("mlqe-pe_ru-en_test20.ruen.df.short_first200.tsv", "ru-en")


def pplm_rows(sentiment: str):
    """(passage id of A, of B, row) per judged pair of PPLM's human evaluation, and the
    methods in index order: record 0 names the 4 methods' files in that order, record 1 is
    the header, the last column an id `prompt_a_b` whose a % 4 and b % 4 index the methods
    of A and B; the summary rows below have no passages."""
    name = {"positive": "pplm_labeled_positive.csv",
            "negative": "pplm_labeled_negative_first277records.csv"}[sentiment]
    with open(DATA / "continuation" / name, newline="", encoding="utf-8") as handle:
        records = list(csv.reader(handle))
    files = records[0][0].split(":", 1)[1]
    methods = [f.strip().rsplit("/", 1)[-1].removeprefix("sentiment_2_")
               for f in files.split(".p") if f.strip(" ,")]
    out = []
    for row in records[2:]:
        ids = [cell for cell in row[13:] if cell.strip()]
        if row[0] and row[1] and ids:
            _, a, b = (int(x) for x in ids[0].split("_"))
            out.append((a, b, row))
    return out, methods


def pplm(sentiment: str):
    """One item per judged pair of passages, its pool the 3 annotators' answers to "Which
    passage is more <sentiment>?": A, B, or both/neither as a tie."""
    choice = {"A": "A", "B": "B", "both": "tie", "neither": "tie"}
    rows, methods = pplm_rows(sentiment)
    return [(f"{sentiment}{n}|{a}|{b}", (methods[a % 4], methods[b % 4]),
             [{"preference": {"choice": choice[row[c].strip()],
                              "order": [methods[a % 4], methods[b % 4]]}}
              for c in (2, 6, 10)])
            for n, (a, b, row) in enumerate(rows)]


def pplm_fluency():
    """One item per passage of the positive file (by its id), its pool the 3 fluency ratings
    (1-5) of the first pair that showed it; its system the method that wrote it."""
    rows, methods = pplm_rows("positive")
    items, seen = [], set()
    for a, b, row in rows:
        for passage, columns in ((a, (3, 7, 11)), (b, (4, 8, 12))):
            if passage not in seen:
                seen.add(passage)
                items.append((f"p{passage}", methods[passage % 4],
                              [{"rating": int(row[c])} for c in columns]))
    return items


def davidson_order(log):
    """Davidson's (1970) log-strengths (ties as their own outcome, the product's tie model
    for this schema), with the allocation fit's prior of PRIOR_WINS each way between systems
    that met, so that the order exists from the first judgment."""
    systems = sorted({s for _, a in log for s in a["order"]})
    at = {s: i for i, s in enumerate(systems)}
    wins, ties = np.zeros((len(systems),) * 2), np.zeros((len(systems),) * 2)
    for i, j in {tuple(at[s] for s in a["order"]) for _, a in log}:
        wins[i, j] = wins[j, i] = PRIOR_WINS
    for _, a in log:
        i, j = (at[s] for s in a["order"])
        if a["choice"] == "tie":
            ties[i, j] += 1
            ties[j, i] += 1
        else:
            wins[(i, j) if a["choice"] == "A" else (j, i)] += 1
    fitted = fit_davidson(wins, ties) if len(systems) > 1 else None
    return {} if fitted is None else dict(zip(systems, fitted[0], strict=True))


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


def bt_fit(log):
    return bradley_terry_strengths(
        [(a["order"][0], a["order"][1], {"A": 1.0, "B": 0.0, "tie": 0.5}[a["choice"]])
         for _, a in log], {tuple(a["order"]) for _, a in log})


def significant_pairs(fit) -> set[tuple[str, str]]:
    """(better, worse) for every two systems whose strengths differ at the 5% level."""
    out = set()
    for i, a in enumerate(fit.systems):
        for b in fit.systems[i + 1:]:
            d, se = fit.difference(a, b)
            if se > 0 and abs(d) > stats.norm.ppf(0.975) * se:
                out.add((a, b) if d > 0 else (b, a))
    return out


def ranking_conclusions(full_log, order=bt_order):
    full = [(k, a["preference"]) for k, a in full_log]
    reference, significant = order(full), significant_pairs(bt_fit(full))
    return {"tau": lambda log: tau_reached(
                reference, order([(k, a["preference"]) for k, a in log])),
            "significant pairs": lambda log: significant_pairs(
                bt_fit([(k, a["preference"]) for k, a in log])) == significant}


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


def precision_conclusions(full_log, system_of):
    target = 1.1 * max(widths(full_log, system_of).values())
    return {"half-width": lambda log: (len(w := widths(log, system_of))
                                       == len(set(system_of.values()))
                                       and max(w.values()) <= target)}


def item_means(log):
    values = defaultdict(list)
    for key, answer in log:
        values[key].append(answer["rating"])
    return {k: float(np.mean(v)) for k, v in values.items()}


def item_ranking_conclusions(full_log):
    reference = item_means(full_log)
    return {"tau": lambda log: tau_reached(reference, item_means(log))}


def chat_not_replayable() -> str:
    """Why the chat preferences cannot be replayed, read from the file itself."""
    path = DATA / "chat_preference" / "harmless_base_test_first400.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    fields = sorted({key for row in rows for key in row})
    pairs = {(row["chosen"], row["rejected"]) for row in rows}
    return (f"chat: not replayable. {len(rows)} rows, fields {fields}: no system, model or "
            f"rater is named, and {len(pairs)} distinct pairs of transcripts were each judged "
            f"{len(rows) / len(pairs):.0f} time(s), so there is neither a ranking of systems "
            f"nor a second judgment of any pair for an allocation to steer.")


PPLM_STRATEGIES = (("adaptive_ranking", 1), ("adaptive_ranking", 0), ("dynamic_redundancy", 2))
DATASETS = {
    # name: (loader, schema, ((adaptive strategy, its min per item), ...), conclusion maker);
    # the max per item is the data's (each replay uses every judgment it wants)
    "compqa": (compqa, PAIRWISE, (("adaptive_ranking", 1), ("adaptive_ranking", 0)),
               "ranking"),
    "pplm-positive": (lambda: pplm("positive"), PPLM_PAIRWISE["positive"], PPLM_STRATEGIES,
                      "davidson"),
    "pplm-negative": (lambda: pplm("negative"), PPLM_PAIRWISE["negative"], PPLM_STRATEGIES,
                      "davidson"),
    "pplm-fluency": (pplm_fluency, LIKERT, (("adaptive_precision", 1),), "precision"),
    "story": (story, LIKERT, (("adaptive_precision", 1),), "precision"),
    "da": (da, SLIDER, (("dynamic_redundancy", 2),), "items"),
    "da-systems": (da_systems, SLIDER, (("adaptive_precision", 1),), "precision"),
}
ALIASES = {"pplm": ["pplm-positive", "pplm-negative", "pplm-fluency"]}


# --- one replay through the product -------------------------------------------------------

def allocate(campaign: Campaign, pools: dict) -> None:
    """The allocation job, as Celery beat runs it; then no item may want more judgments than
    its pool holds (the job wants the campaign's maximum of every open item, and data sets
    whose items carry pools of different sizes run out item by item, as the copy's replay
    does)."""
    campaign_allocate(campaign=campaign)
    ids = list(pools)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE campaigns_item i SET slots_wanted = GREATEST(i.slots_taken, v.n) "
            "FROM unnest(%s::bigint[], %s::integer[]) AS v(id, n) "
            "WHERE i.id = v.id AND i.slots_wanted > v.n",
            [ids, [len(pools[i]) for i in ids]])


def replay(name: str, items, allocation: str, minimum: int, seed: int, args
           ) -> tuple[dict, list]:
    """Per conclusion, (judgments needed, whether it was reached) under `allocation` with
    this seed (the order of each item's pool); and the judgments in the order they came."""
    _, schema, _, kind = DATASETS[name]
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
        allocate(campaign, pools)
    full_log = [(key[:200], answer) for key, _, pool in items for answer in pool]
    conclusions = {"ranking": lambda: ranking_conclusions(full_log),
                   "davidson": lambda: ranking_conclusions(full_log, davidson_order),
                   "precision": lambda: precision_conclusions(full_log, system_of),
                   "items": lambda: item_ranking_conclusions(full_log)}[kind]()
    log, needed, n = [], dict.fromkeys(conclusions), 0
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
            allocate(campaign, pools)
        if n % args.check == 0:
            for name, reached in conclusions.items():
                needed[name] = (needed[name] or n) if reached(log) else None
    for name, reached in conclusions.items():
        if needed[name] is None and reached(log):
            needed[name] = n
    campaign.delete()
    # Not reached when the work ran out: the researcher would need all the data (and more).
    return {name: (count, True) if count is not None else (len(full_log), False)
            for name, count in needed.items()}, log


def same_budget_taus(items, uniform_log, adaptive_log) -> tuple[int, float, float]:
    """(judgments the adaptive replay used in all, its segment-order tau to the full data, and
    uniform's tau after as many judgments): whether a strategy that stops short does better
    than uniform would with the same budget."""
    full_log = [(key[:200], answer) for key, _, pool in items for answer in pool]
    reference, keys = item_means(full_log), sorted(item_means(full_log))

    def tau(log):
        now = item_means(log)
        if any(k not in now for k in keys):
            return float("nan")
        return float(stats.kendalltau([reference[k] for k in keys], [now[k] for k in keys])[0])

    n = len(adaptive_log)
    return n, tau(adaptive_log), tau(uniform_log[:n])


def one_seed(job) -> tuple[int, dict, dict]:
    """The seed, uniform's result, and per adaptive strategy (its result, and for item
    orders its same-budget taus)."""
    name, seed, args = job
    connection.close()  # a forked process opens its own connection
    with connection.cursor() as cursor:  # a replay, not a durability test: no fsync per save
        cursor.execute("SET synchronous_commit TO off")
    loader, _, strategies, kind = DATASETS[name]
    items = loader()
    uniform, uniform_log = replay(name, items, "uniform", strategies[0][1], seed, args)
    adaptive = {}
    wanted = [s for s in args.strategies.split(",") if s]
    for strategy, minimum in strategies:
        if wanted and f"{strategy} (min {minimum})" not in wanted:
            continue
        result, log = replay(name, items, strategy, minimum, seed, args)
        adaptive[f"{strategy} (min {minimum})"] = (result, same_budget_taus(items, uniform_log, log)
                              if kind == "items" else None)
    return seed, uniform, adaptive


def shown(count: int, reached: bool) -> str:
    return str(count) if reached else f"not reached ({count})"


def report(name: str, strategy: str, rows, started: float) -> None:
    """rows: (seed, uniform's result, this strategy's result) per seed."""
    items = DATASETS[name][0]()
    total = sum(len(pool) for _, _, pool in items)
    for conclusion in rows[0][1]:
        ratios = [a[conclusion][0] / u[conclusion][0] for _, u, a in rows]
        missed = sum(not a[conclusion][1] for _, _, a in rows)
        print(f"{name} [{conclusion}]: {len(items)} items, {total} judgments in all; "
              f"{strategy} needs {statistics.median(ratios):.2f}x uniform's judgments (median "
              f"of {len(rows)} seeds; range {min(ratios):.2f}-{max(ratios):.2f}; above 1x on "
              f"{sum(r > 1 for r in ratios)}); uniform "
              f"{statistics.median([u[conclusion][0] for _, u, _ in rows]):.0f} "
              f"({min(u[conclusion][0] for _, u, _ in rows)}-"
              f"{max(u[conclusion][0] for _, u, _ in rows)}), adaptive "
              f"{statistics.median([a[conclusion][0] for _, _, a in rows]):.0f} "
              f"({min(a[conclusion][0] for _, _, a in rows)}-"
              f"{max(a[conclusion][0] for _, _, a in rows)}) (medians, ranges); "
              f"adaptive not reached on {missed}, uniform on "
              f"{sum(not u[conclusion][1] for _, u, _ in rows)}; "
              f"{time.perf_counter() - started:.0f}s", flush=True)


def report_budgets(name: str, strategy: str, budgets) -> None:
    print(f"{name} [same budget]: {strategy} ends at tau "
          f"{statistics.median(b[1] for b in budgets):.3f} (median; range "
          f"{min(b[1] for b in budgets):.3f}-{max(b[1] for b in budgets):.3f}) with a "
          f"median {statistics.median(b[0] for b in budgets):.0f} judgments; uniform "
          f"with as many: {statistics.median(b[2] for b in budgets):.3f} "
          f"({min(b[2] for b in budgets):.3f}-{max(b[2] for b in budgets):.3f})", flush=True)


def run(name: str, args) -> None:
    """Every seed of one data set (--jobs at once), each printed as it ends, then the
    summary per adaptive strategy and conclusion."""
    started = time.perf_counter()
    jobs = [(name, seed, args) for seed in range(args.first_seed, args.first_seed + args.seeds)]
    connection.close()
    rows = []
    with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
        for seed, uniform, adaptive in pool.imap(one_seed, jobs):
            rows.append((seed, uniform, adaptive))
            for strategy, (result, budget) in adaptive.items():
                print(f"  {name} seed {seed}: " + "; ".join(
                    f"[{c}] uniform {shown(*uniform[c])}, {strategy} {shown(*result[c])} "
                    f"({result[c][0] / uniform[c][0]:.2f}x)" for c in uniform), flush=True)
                if budget:
                    print(f"    {strategy} used {budget[0]} judgments in all: tau "
                          f"{budget[1]:.3f} to the full data; uniform after as many: "
                          f"{budget[2]:.3f}", flush=True)
    for strategy in rows[0][2]:
        report(name, strategy, [(seed, u, a[strategy][0]) for seed, u, a in rows], started)
        budgets = [a[strategy][1] for _, _, a in rows if a[strategy][1]]
        if budgets:
            report_budgets(name, strategy, budgets)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--data", default="pplm,compqa,story,da,da-systems,chat")
    parser.add_argument("--strategies", default="",
                        help="only these of a data set's strategies, e.g. "
                             "'adaptive_ranking (min 0)' (comma-separated; default all)")
    parser.add_argument("--jobs", type=int, default=1, help="seeds replayed at once")
    parser.add_argument("--every", type=int, default=10, help="judgments between job runs")
    parser.add_argument("--check", type=int, default=10, help="judgments between checks")
    parser.add_argument("--spread", type=float, default=10.0,
                        help="dynamic redundancy's agreement spread (DA points)")
    args = parser.parse_args()
    for given in args.data.split(","):
        for name in ALIASES.get(given, [given]):
            if name == "chat":
                print(chat_not_replayable(), flush=True)
            else:
                run(name, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
