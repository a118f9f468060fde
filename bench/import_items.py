"""Benchmark: import 100,000 generated items through the import service vs PostgreSQL COPY.

Usage:
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/annotate_bench \
        .venv/bin/python bench/import_items.py
Prints items/s for the service (parse + validate + bulk insert, one transaction) and for COPY of
the same rows into the same table, measured in the same run (median of --repeat runs).
"""

import argparse
import io
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotate.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from campaigns.models import Campaign, Item  # noqa: E402
from campaigns.services.items import items_import  # noqa: E402
from tests.factories import CONTINUATION_SCHEMA  # noqa: E402

WORDS = (
    "the film was a slow and quiet study of grief with moments of real beauty though its "
    "second half drags and the ending feels unearned despite strong acting by the lead"
).split()


def text(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n_words))


def make_rows(n: int) -> list[dict]:
    rng = random.Random(7)
    return [
        {
            "id": f"item-{i}",
            "system": f"sys-{i % 4}",
            "prompt": text(rng, 80),
            "completion": text(rng, 50),
        }
        for i in range(n)
    ]


def fresh_campaign(owner, slug: str) -> Campaign:
    Campaign.objects.filter(slug=slug).delete()
    return Campaign.objects.create(
        owner=owner,
        slug=slug,
        name=slug,
        schema=CONTINUATION_SCHEMA,
        status="live",
        annotations_per_item=3,
    )


def run_service(owner, content: bytes) -> float:
    campaign = fresh_campaign(owner, "bench-import-service")
    started = time.perf_counter()
    result = items_import(campaign=campaign, content=content, filename="items.jsonl")
    elapsed = time.perf_counter() - started
    assert result.created == Item.objects.filter(campaign=campaign).count()
    campaign.delete()
    return elapsed


def run_copy(owner, rows: list[dict]) -> float:
    campaign = fresh_campaign(owner, "bench-import-copy")
    buf = io.StringIO()
    for r in rows:
        data = json.dumps({"prompt": r["prompt"], "completion": r["completion"]})
        data = data.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
        buf.write(f"{campaign.id}\t{r['id']}\t{r['system']}\t{data}\t\t3\t0\t0\tnow\n")
    payload = buf.getvalue()
    with connection.cursor() as cursor:
        started = time.perf_counter()
        cursor.copy_expert(
            "COPY campaigns_item (campaign_id, external_id, system, data, control, slots_wanted, "
            "slots_taken, annotations_done, created_at) FROM STDIN",
            io.StringIO(payload),
        )
        connection.commit() if not connection.get_autocommit() else None
        elapsed = time.perf_counter() - started
    assert Item.objects.filter(campaign=campaign).count() == len(rows)
    campaign.delete()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    owner, _ = get_user_model().objects.get_or_create(username="bench")
    rows = make_rows(args.items)
    content = "\n".join(json.dumps(r) for r in rows).encode()
    print(f"{args.items} items, {len(content) / 1e6:.1f} MB of JSONL, {args.repeat} runs each")
    service, copy = [], []
    for _ in range(args.repeat):
        service.append(run_service(owner, content))
        copy.append(run_copy(owner, rows))
    s, c = statistics.median(service), statistics.median(copy)
    print(
        f"import service : median {s:6.2f} s  -> {args.items / s:9,.0f} items/s  "
        f"(runs: {', '.join(f'{x:.2f}' for x in service)})"
    )
    print(
        f"PostgreSQL COPY: median {c:6.2f} s  -> {args.items / c:9,.0f} items/s  "
        f"(runs: {', '.join(f'{x:.2f}' for x in copy)})"
    )
    ratio = (args.items / s) / (args.items / c)
    print(
        f"service rate / COPY rate = {ratio:.2f} (target >= 0.33): "
        f"{'PASS' if ratio >= 1 / 3 else 'FAIL'}"
    )


if __name__ == "__main__":
    main()
