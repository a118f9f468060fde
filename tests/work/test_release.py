"""Releasing an abandoned assignment: unanswered items go back, answered items stay answered."""
import pytest

from campaigns.models import Annotation, Assignment, Item
from campaigns.selectors.platforms import campaign_places_to_open
from campaigns.work import (
    annotation_submit,
    assignment_claim,
    assignment_release,
    worker_get_or_create,
)
from tests.factories import make_campaign, make_items

pytestmark = pytest.mark.django_db

ANSWERS = {"coherence": 4, "sentiment": 2}


def claim(campaign, name):
    worker = worker_get_or_create(campaign=campaign, platform="link", platform_id=name)
    return assignment_claim(campaign=campaign, worker=worker)


def test_a_released_assignment_gives_back_its_unanswered_items_only(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=3, annotations_per_item=1)
    make_items(campaign, 3)
    abandoned = claim(campaign, "gone")
    annotation_submit(assignment=abandoned, position=1, answers=ANSWERS, seconds_spent=2)
    assert assignment_release(assignment_id=abandoned.pk) is True
    abandoned.refresh_from_db()
    assert abandoned.status == "returned"
    assert sorted(Item.objects.values_list("slots_taken", "annotations_done")) == [
        (0, 0), (0, 0), (1, 1)]
    assert Annotation.objects.filter(assignment=abandoned).count() == 1
    # The freed items go to the next worker at once, not after the deadline.
    assert claim(campaign, "next").slots.count() == 2


def test_releasing_a_submitted_assignment_changes_nothing(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=1, annotations_per_item=2)
    make_items(campaign, 1)
    assignment = claim(campaign, "w")
    annotation_submit(assignment=assignment, position=1, answers=ANSWERS)
    assert assignment_release(assignment_id=assignment.pk) is False
    assert Assignment.objects.get().status == "submitted"
    assert Item.objects.get().slots_taken == 1


def test_places_to_open_counts_participants_at_the_current_assignment_size(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=4, annotations_per_item=3)
    make_items(campaign, 10)
    make_items(campaign, 2, control="attention")
    places = campaign_places_to_open(campaign=campaign)
    assert (places.places, places.free_slots, places.in_progress) == (8, 30, 0)  # ceil(30 / 4)
    claim(campaign, "w1")
    places = campaign_places_to_open(campaign=campaign)
    assert (places.places, places.free_slots, places.in_progress) == (7, 26, 1)


def test_places_to_open_is_never_fewer_than_one_items_missing_annotations(owner):
    # A worker sees an item once: 5 annotations of one item need 5 participants.
    campaign = make_campaign(owner=owner, items_per_assignment=10, annotations_per_item=5)
    make_items(campaign, 2)
    assert campaign_places_to_open(campaign=campaign).places == 5
