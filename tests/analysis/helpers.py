"""Test helpers: items and human annotations created straight through the ORM."""
from django.utils import timezone

from campaigns.models import Annotation, Assignment, Item, Worker


def add_item(campaign, external_id, *, system="", data=None, control="", gold=None,
             tolerance=None) -> Item:
    return Item.objects.create(
        campaign=campaign, external_id=external_id, system=system,
        data=data or {"prompt": "p", "completion": "c", "answer": "a", "story": "s",
                      "summary": ["One.", "Two."], "source": "s", "translation": "t"},
        control=control, gold=gold, gold_tolerance=tolerance,
        slots_wanted=0 if control else campaign.annotations_per_item)


def annotate(campaign, worker, item, answers, *, seconds=10.0, passed=None, platform="link"):
    w, _ = Worker.objects.get_or_create(campaign=campaign, platform=platform, platform_id=worker)
    assignment = Assignment.objects.filter(worker=w).first() or Assignment.objects.create(
        campaign=campaign, worker=w, status="submitted", deadline=timezone.now(),
        submitted_at=timezone.now())
    return Annotation.objects.create(campaign=campaign, assignment=assignment, item=item,
                                     worker=w, answers=answers, seconds_spent=seconds,
                                     control_passed=passed)
