"""A campaign big enough that its statistics take seconds: items, raters, one submitted
assignment per rater and their likert annotations, written in SQL (generate_series)."""
from __future__ import annotations

from django.db import connection

from campaigns.models import Campaign

SCHEMA = {
    "display": [{"field": "text", "label": "Text"}],
    "questions": [{"id": "quality", "kind": "likert", "text": "Quality?",
                   "points": [{"value": v, "label": str(v)} for v in range(1, 6)]}],
}


def heavy_campaign(owner, *, items: int, raters: int = 5, slug: str = "heavy") -> Campaign:
    campaign = Campaign.objects.create(owner=owner, slug=slug, name=slug, schema=SCHEMA,
                                       status="live", annotations_per_item=raters)
    with connection.cursor() as cur:
        cur.execute("""
            INSERT INTO campaigns_item (campaign_id, external_id, system, data, control,
                slots_wanted, slots_taken, annotations_done, created_at)
            SELECT %s, 'item-' || i, 'sys-' || (i %% 4), '{"text": "t"}'::jsonb, '',
                   %s, 0, 0, now()
            FROM generate_series(1, %s) AS i""", [campaign.pk, raters, items])
        cur.execute("""
            INSERT INTO campaigns_worker (campaign_id, platform, platform_id, created_at,
                                          screened_out_reason)
            SELECT %s, 'link', 'rater-' || r, now(), '' FROM generate_series(1, %s) AS r""",
                    [campaign.pk, raters])
        cur.execute("""
            INSERT INTO campaigns_assignment (campaign_id, worker_id, token, status, started_at,
                deadline, submitted_at, completion_code, study_id, session_id,
                mturk_assignment_id, mturk_hit_id, turk_submit_to)
            SELECT %s, w.id, md5(random()::text || w.id), 'submitted', now(), now(), now(),
                   '', '', '', '', '', ''
            FROM campaigns_worker w WHERE w.campaign_id = %s""", [campaign.pk, campaign.pk])
        cur.execute("""
            INSERT INTO campaigns_annotation (campaign_id, assignment_id, item_id, worker_id,
                answers, seconds_spent, created_at, updated_at)
            SELECT %s, a.id, i.id, a.worker_id,
                   jsonb_build_object('quality', 1 + (i.id + a.worker_id) %% 5),
                   5 + random() * 30, now(), now()
            FROM campaigns_item i CROSS JOIN campaigns_assignment a
            WHERE i.campaign_id = %s AND a.campaign_id = %s""",
                    [campaign.pk, campaign.pk, campaign.pk])
    return campaign
