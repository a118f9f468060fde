"""Sets up fault-test data in the throwaway database (run as a script with the stack's env).

    scenario.py study <slug> <assignments> <items-per-assignment>   -> JSON {slug, tokens}
    scenario.py bulk <slug> <annotations>                          -> JSON {slug}
    scenario.py researcher                                          -> JSON {api_token}
"""
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotate.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from rest_framework.authtoken.models import Token  # noqa: E402

from campaigns.models import Assignment, Campaign, Item, Worker  # noqa: E402
from campaigns.work import assignment_claim, worker_get_or_create  # noqa: E402

SCHEMA = {
    "display": [{"field": "text", "label": "Text"}],
    "questions": [{"id": "score", "kind": "likert", "text": "How good is it?",
                   "points": [{"value": v, "label": str(v)} for v in range(1, 6)]}],
}


def researcher():
    user, created = get_user_model().objects.get_or_create(
        username="faults-researcher", defaults={"is_staff": True, "email": "r@example.org"})
    if created:
        user.set_password("faults-pw-123")
        user.save()
    return user


def campaign(slug: str, per_assignment: int) -> Campaign:
    return Campaign.objects.create(
        owner=researcher(), name=f"Faults {slug}", slug=slug, status=Campaign.Status.LIVE,
        schema=SCHEMA, items_per_assignment=per_assignment, annotations_per_item=1,
        assignment_timeout_minutes=120)


def study(slug: str, assignments: int, per_assignment: int) -> dict:
    c = campaign(slug, per_assignment)
    Item.objects.bulk_create(
        Item(campaign=c, external_id=f"i{n}", system=f"s{n % 3}", data={"text": f"Text {n}"},
             slots_wanted=1) for n in range(assignments * per_assignment))
    tokens = []
    for n in range(assignments):
        worker = worker_get_or_create(campaign=c, platform="prolific", platform_id=f"P{n:05d}")
        tokens.append(assignment_claim(campaign=c, worker=worker).token)
    return {"slug": slug, "tokens": tokens, "per_assignment": per_assignment}


def bulk(slug: str, annotations: int) -> dict:
    """A campaign with many answered items, inserted in SQL (an export that takes a while)."""
    c = campaign(slug, 1)
    worker = Worker.objects.create(campaign=c, platform="prolific", platform_id="BULK")
    from django.utils import timezone

    assignment = Assignment.objects.create(campaign=c, worker=worker, deadline=timezone.now(),
                                           status=Assignment.Status.SUBMITTED)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO campaigns_item (campaign_id, external_id, system, data, control, "
            "slots_wanted, slots_taken, annotations_done, created_at) "
            "SELECT %s, 'b' || g, 's' || (g %% 3), jsonb_build_object('text', 'Text ' || g), '', "
            "1, 1, 1, now() FROM generate_series(1, %s) g", [c.pk, annotations])
        cursor.execute(
            "INSERT INTO campaigns_annotation (campaign_id, assignment_id, item_id, worker_id, "
            "answers, seconds_spent, created_at, updated_at) "
            "SELECT %s, %s, id, %s, jsonb_build_object('score', 1 + id %% 5), 4.5, now(), now() "
            "FROM campaigns_item WHERE campaign_id = %s", [c.pk, assignment.pk, worker.pk, c.pk])
    return {"slug": slug}


def main(argv: list[str]) -> None:
    kind, *args = argv
    if kind == "study":
        out = study(args[0], int(args[1]), int(args[2]))
    elif kind == "bulk":
        out = bulk(args[0], int(args[1]))
    elif kind == "researcher":
        out = {"api_token": Token.objects.get_or_create(user=researcher())[0].key}
    else:
        raise SystemExit(f"unknown scenario {kind!r}")
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
