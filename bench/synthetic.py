"""Synthetic rating campaigns written in SQL (generate_series, no Python rows per annotation).

One builder for the benchmarks (bench/stats_scale.py, bench/agreement.py and others measuring
a large campaign) and the tests that need statistics taking seconds (tests/security): items
spread over `systems` systems, a pool of `workers` raters with one submitted assignment each,
and `raters_per_item` likert annotations per item from different workers, about `missing` of
them left out.

A rating is one 1-5 likert answer to the question "quality": each item has a true score
(1 + 7919k mod 5 for the k-th item), each system adds 0.3 per step, each worker a personal
offset of -0.5, 0 or +0.5, and noise uniform in -1..+1; the sum is rounded and clamped to 1-5.
Item k's raters are workers (k * raters_per_item + r) mod workers, r < raters_per_item, so with
as many workers as raters per item every worker rates every item. The random draws are seeded
(PostgreSQL's setseed), so a rebuild gives the same campaign.
"""
from __future__ import annotations

import time

from django.db import connection

SCHEMA = {
    "display": [{"field": "text", "label": "Text"}],
    "questions": [{"id": "quality", "kind": "likert", "text": "Quality?",
                   "points": [{"value": v, "label": str(v)} for v in range(1, 6)]}],
}
SEED = 0.29


def rating_campaign(owner, *, slug: str, items: int, raters_per_item: int = 5,
                    workers: int | None = None, systems: int = 4, missing: float = 0.0,
                    analyze: bool = False):
    """Create the campaign `slug` (replacing one of that slug) and its ratings; return it.

    `workers` defaults to `raters_per_item` (every worker rates every item). `analyze` runs
    ANALYZE on the tables written, for benchmarks that query them right after.
    """
    from campaigns.models import Campaign

    workers = workers or raters_per_item
    if workers < raters_per_item:
        raise ValueError(f"{workers} workers cannot give {raters_per_item} ratings per item")
    Campaign.objects.filter(slug=slug).delete()
    campaign = Campaign.objects.create(owner=owner, slug=slug, name=slug, schema=SCHEMA,
                                       status="live", annotations_per_item=raters_per_item)
    with connection.cursor() as cur:
        cur.execute("SELECT setseed(%s)", [SEED])
        _items(cur, campaign.pk, items, raters_per_item, systems)
        _workers(cur, campaign.pk, workers)
        _ratings(cur, campaign.pk, raters_per_item, workers, missing)
        if analyze:
            for table in ("annotation", "item", "itemtally", "assignment", "worker"):
                cur.execute(f"ANALYZE campaigns_{table}")
    return campaign


def _items(cur, campaign_id: int, items: int, raters: int, systems: int) -> None:
    cur.execute("""
        INSERT INTO campaigns_item (campaign_id, external_id, system, data, control,
            slots_wanted, slots_taken, annotations_done, created_at)
        SELECT %s, 'item-' || i, 'sys-' || (i %% %s), '{"text": "t"}'::jsonb, '', %s, %s, 0,
               now()
        FROM generate_series(1, %s) AS i""", [campaign_id, systems, raters, raters, items])


def _workers(cur, campaign_id: int, workers: int) -> None:
    """The pool of workers, each with one submitted assignment."""
    cur.execute("""
        INSERT INTO campaigns_worker (campaign_id, platform, platform_id, created_at,
                                      screened_out_reason)
        SELECT %s, 'link', 'rater-' || r, now(), '' FROM generate_series(1, %s) AS r""",
                [campaign_id, workers])
    cur.execute("""
        INSERT INTO campaigns_assignment (campaign_id, worker_id, token, status, started_at,
            deadline, submitted_at, completion_code, study_id, session_id,
            mturk_assignment_id, mturk_hit_id, turk_submit_to)
        SELECT %s, w.id, md5(random()::text || w.id), 'submitted', now(), now(), now(),
               '', '', '', '', '', ''
        FROM campaigns_worker w WHERE w.campaign_id = %s""", [campaign_id, campaign_id])


def _ratings(cur, campaign_id: int, raters: int, workers: int, missing: float) -> None:
    cur.execute("""
        WITH i AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k,
                          substr(system, 5)::int AS s
                   FROM campaigns_item WHERE campaign_id = %(c)s),
             a AS (SELECT array_agg(id ORDER BY id) AS ids,
                          array_agg(worker_id ORDER BY id) AS workers
                   FROM campaigns_assignment WHERE campaign_id = %(c)s)
        INSERT INTO campaigns_annotation (campaign_id, assignment_id, item_id, worker_id,
            answers, seconds_spent, created_at, updated_at)
        SELECT %(c)s, a.ids[n + 1], i.id, a.workers[n + 1],
               jsonb_build_object('quality', greatest(1, least(5, round(
                   1 + (i.k * 7919) %% 5 + 0.3 * i.s - 0.45 + (n %% 3 - 1) * 0.5
                   + random() * 2 - 1)))::int),
               5 + random() * 30, now(), now()
        FROM i CROSS JOIN generate_series(0, %(r)s - 1) AS r CROSS JOIN a
        CROSS JOIN LATERAL (SELECT ((i.k * %(r)s + r) %% %(w)s)::int AS n) AS pick
        WHERE random() >= %(missing)s""",
                {"c": campaign_id, "r": raters, "w": workers, "missing": missing})
    cur.execute("""
        UPDATE campaigns_item i SET annotations_done = n.done
        FROM (SELECT item_id, count(*) AS done FROM campaigns_annotation
              WHERE campaign_id = %s GROUP BY item_id) AS n
        WHERE i.id = n.item_id""", [campaign_id])


def kept_or_built(owner, *, slug: str, items: int, rebuild: bool = False, log=print,
                  **options):
    """The campaign `slug` if it already holds its ratings (benchmarks reuse it between runs),
    else a new one built by rating_campaign; logs the build time."""
    from campaigns.models import Annotation, Campaign

    existing = Campaign.objects.filter(slug=slug).first()
    expected = items * options.get("raters_per_item", 5)
    missing = options.get("missing", 0.0)
    if existing and not rebuild:
        count = Annotation.objects.filter(campaign=existing).count()
        if expected * (1 - 2 * missing) - 1 <= count <= expected:
            return existing
    started = time.perf_counter()
    campaign = rating_campaign(owner, slug=slug, items=items, analyze=True, **options)
    count = Annotation.objects.filter(campaign=campaign).count()
    log(f"  built {slug}: {count:,} annotations, {items:,} items in "
        f"{time.perf_counter() - started:.0f}s")
    return campaign
