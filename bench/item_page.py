"""Benchmark: server CPU of the worker's item page with 4 outputs of 300 words (a best-worst
question) against a seed item page, in process, in the same run.

Usage (not part of the test suite; needs PostgreSQL):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/annotate_bench \\
        .venv/bin/python bench/item_page.py [--reps 400] [--blocks 8] [--profile]

Set up as bench/worker_cpu.py (one django.test.Client, DEBUG off, collected static files): the
seed page is bench/crowd.py's campaign (seed 000's design: a prompt of 80 words, a completion
of 50, two 5-point scales and a feedback box); the other shows one prompt and 4 outputs of
300 words each under a `bws` question (best and worst of 4, shuffled per assignment). One
worker claims an assignment in each; then the two item pages are fetched in alternating
blocks of `reps` GETs, and the CPU time of this process (time.process_time: Python and the
driver, not PostgreSQL's) per page is compared block by block. Target: <= 1.5x.

A third page, measured the same way, shows a 10-turn conversation (`chat` display: a system
prompt and 9 turns, the assistant's in Markdown with a list, a table and a fenced code block)
under two 5-point scales. Target: <= 1.5x the seed page too.
"""
from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import random
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))

import worker_cpu  # noqa: E402,I001  (sets the environment, collects static, sets up Django)
import crowd  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402

from campaigns.models import Campaign  # noqa: E402
from campaigns.services.items import items_import  # noqa: E402

OUTPUT_WORDS = 300
BWS_SCHEMA = {"display": [{"field": "prompt", "label": "Prompt"}],
              "questions": [{"id": "bestworst", "kind": "bws",
                             "text": "Which response is best, which worst?"}]}


def bws_campaign(owner, slug: str, n_items: int) -> Campaign:
    Campaign.objects.filter(slug=slug).delete()
    campaign = Campaign.objects.create(
        owner=owner, slug=slug, name=slug, schema=BWS_SCHEMA, status="live",
        annotations_per_item=3, items_per_assignment=1, assignment_timeout_minutes=30,
        max_assignments_per_worker=1_000_000)
    rng = random.Random(12)
    rows = (json.dumps({"id": f"q{i}", "prompt": crowd._text(rng, 80), "outputs": [
        {"system": f"sys-{s}", "text": crowd._text(rng, OUTPUT_WORDS)} for s in range(4)]})
        for i in range(n_items))
    items_import(campaign=campaign, content="\n".join(rows).encode(), filename="items.jsonl")
    return campaign


CHAT_SCHEMA = {"display": [{"field": "conversation", "label": "Conversation", "format": "chat"}],
               "questions": [{"id": q, "kind": "likert", "text": f"How {q} is the last reply?",
                              "points": [{"value": v, "label": str(v)} for v in range(1, 6)]}
                             for q in ("helpful", "harmless")]}


def _markdown_reply(rng: random.Random) -> str:
    return (f"{crowd._text(rng, 40)}\n\n- **{crowd._text(rng, 3)}**\n- `{crowd._text(rng, 2)}`\n\n"
            "| n | square |\n|---|---|\n| 2 | 4 |\n| 3 | 9 |\n\n"
            "```python\nfor n in range(3):\n    print(n * n)\n```\n")


def chat_campaign(owner, slug: str, n_items: int) -> Campaign:
    Campaign.objects.filter(slug=slug).delete()
    campaign = Campaign.objects.create(
        owner=owner, slug=slug, name=slug, schema=CHAT_SCHEMA, status="live",
        annotations_per_item=3, items_per_assignment=1, assignment_timeout_minutes=30,
        max_assignments_per_worker=1_000_000)
    rng = random.Random(13)
    rows = []
    for i in range(n_items):
        turns = [{"role": "system", "content": "You are a helpful assistant."}]
        turns += [{"role": "user" if t % 2 == 0 else "assistant",
                   "content": crowd._text(rng, 25) if t % 2 == 0 else _markdown_reply(rng)}
                  for t in range(9)]
        rows.append(json.dumps({"id": f"c{i}", "conversation": turns}))
    items_import(campaign=campaign, content="\n".join(rows).encode(), filename="items.jsonl")
    return campaign


def item_page(client: Client, slug: str) -> str:
    """Claims an assignment as a fresh worker and returns its item page's URL."""
    worker = worker_cpu.Worker(client, worker_cpu.Meter(), slug)
    response = client.post(f"/c/{slug}/", urlencode({**worker.ids,
                                                      "form_key": worker.form_key}),
                           content_type=worker_cpu.FORM)
    assert response.status_code == 302, (response.status_code, response.content[:300])
    return response["Location"]


def cpu_per_get(client: Client, url: str, reps: int) -> float:
    started = time.process_time()
    for _ in range(reps):
        response = client.get(url)
        assert response.status_code == 200, response.status_code
    return (time.process_time() - started) / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    owner, _ = get_user_model().objects.get_or_create(username="bench-owner")
    client = Client(enforce_csrf_checks=True)
    seed = item_page(client, crowd.make_campaign(owner, "bench-item-seed", 20).slug)
    outputs = item_page(client, bws_campaign(owner, "bench-item-bws", 20).slug)
    chat = item_page(client, chat_campaign(owner, "bench-item-chat", 20).slug)
    sizes = {name: len(client.get(url).content) for name, url in
             (("seed", seed), ("bws", outputs), ("chat", chat))}
    for url in (seed, outputs, chat):  # warm-up: templates compiled, caches filled
        cpu_per_get(client, url, 50)
    if args.profile:
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        cpu_per_get(client, outputs, args.reps)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)
    ratios, seeds, bws, chats, chat_ratios = [], [], [], [], []
    for _ in range(args.blocks):
        seeds.append(cpu_per_get(client, seed, args.reps))
        bws.append(cpu_per_get(client, outputs, args.reps))
        chats.append(cpu_per_get(client, chat, args.reps))
        ratios.append(bws[-1] / seeds[-1])
        chat_ratios.append(chats[-1] / seeds[-1])
    print(f"item_page: {args.blocks} alternating blocks of {args.reps} GETs, one test client, "
          f"DEBUG off; pages of {sizes['seed']:,} and {sizes['bws']:,} bytes")
    print(f"  seed item page  {1000 * statistics.median(seeds):.2f} ms CPU (median of blocks)")
    print(f"  4 x {OUTPUT_WORDS} words (bws)  {1000 * statistics.median(bws):.2f} ms CPU")
    print(f"  ratio {statistics.median(ratios):.2f}x (blocks: "
          f"{', '.join(f'{r:.2f}' for r in ratios)}); target <= 1.5x")
    print(f"  10-turn Markdown chat ({sizes['chat']:,} bytes)  "
          f"{1000 * statistics.median(chats):.2f} ms CPU")
    print(f"  ratio {statistics.median(chat_ratios):.2f}x (blocks: "
          f"{', '.join(f'{r:.2f}' for r in chat_ratios)}); target <= 1.5x")


if __name__ == "__main__":
    main()
