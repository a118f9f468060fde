"""The first-answer hold: work claimed and never answered comes back in minutes.

A new assignment holds its items for ASSIGNMENT_RESERVATION_MINUTES; the first answer saved
extends the hold to the campaign's full timeout, counted from the claim. Opening item pages
does not: a script can open every page it claims.
"""
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from campaigns.errors import NoWorkAvailable
from campaigns.models import Assignment, Item
from campaigns.work import (
    assignment_answered,
    assignment_claim,
    assignments_expire,
    worker_get_or_create,
)
from tests.factories import make_campaign, make_items

pytestmark = pytest.mark.django_db


@pytest.fixture
def scarce(owner):
    """Two items, one annotation each, one assignment takes both; a 60-minute timeout."""
    campaign = make_campaign(owner=owner, items_per_assignment=2, annotations_per_item=1,
                             assignment_timeout_minutes=60)
    make_items(campaign, 2)
    return campaign


def claim(campaign, name):
    worker = worker_get_or_create(campaign=campaign, platform="link", platform_id=name)
    return assignment_claim(campaign=campaign, worker=worker)


def test_a_new_assignment_is_held_for_the_reservation_window_only(scarce, settings):
    settings.ASSIGNMENT_RESERVATION_MINUTES = 4
    before = timezone.now()
    held = claim(scarce, "hoarder")
    assert before + timedelta(minutes=4) <= held.deadline <= timezone.now() + timedelta(minutes=4)
    with pytest.raises(NoWorkAvailable):
        claim(scarce, "worker")  # within the window the items are taken
    # Five minutes later nobody answered: the expiry gives both slots back.
    assert assignments_expire(now=timezone.now() + timedelta(minutes=5)) == 1
    assert Assignment.objects.get(pk=held.pk).status == "expired"
    assert set(Item.objects.filter(campaign=scarce).values_list("slots_taken", flat=True)) == {0}
    assert claim(scarce, "worker").slots.count() == 2


def test_opening_item_pages_does_not_extend_the_hold(client, scarce, settings):
    settings.RATELIMIT_ENABLED = False
    settings.ASSIGNMENT_RESERVATION_MINUTES = 5
    held = claim(scarce, "opener")
    first = held.deadline
    for position in (1, 2, 1):
        assert client.get(reverse("campaigns:item", args=[held.token, position])).status_code == 200
    held.refresh_from_db()
    assert held.deadline == first
    assert assignments_expire(now=timezone.now() + timedelta(minutes=6)) == 1


def test_the_first_answer_saved_extends_the_hold_to_the_full_timeout(client, scarce, settings):
    from tests.views.conftest import VALID_CONTINUATION

    settings.RATELIMIT_ENABLED = False
    held = claim(scarce, "reader")
    assert client.get(reverse("campaigns:item", args=[held.token, 1])).status_code == 200
    response = client.post(reverse("campaigns:item", args=[held.token, 1]), VALID_CONTINUATION)
    assert response.status_code == 200
    held.refresh_from_db()
    assert held.deadline == held.started_at + timedelta(minutes=60)
    assert assignments_expire(now=timezone.now() + timedelta(minutes=30)) == 0
    assert assignments_expire(now=held.deadline) == 1


def test_later_answers_write_nothing(scarce, django_assert_num_queries):
    held = claim(scarce, "reader")
    assignment_answered(held)
    full = held.deadline
    with django_assert_num_queries(0):
        assignment_answered(held)
    assert Assignment.objects.get(pk=held.pk).deadline == full


def test_an_assignment_expired_in_its_hold_is_not_revived(scarce):
    held = claim(scarce, "late")
    Assignment.objects.filter(pk=held.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    assert assignments_expire() == 1
    held.refresh_from_db()
    assignment_answered(held)
    held.refresh_from_db()
    assert held.status == "expired" and held.deadline < timezone.now()


def test_a_window_of_zero_or_longer_than_the_timeout_holds_for_the_full_timeout(scarce, settings):
    for minutes in (0, 60, 90):
        settings.ASSIGNMENT_RESERVATION_MINUTES = minutes
        before = timezone.now()
        held = claim(scarce, f"w{minutes}")
        assert held.deadline >= before + timedelta(minutes=60)
        Assignment.objects.filter(pk=held.pk).update(status="returned")
        Item.objects.filter(campaign=scarce).update(slots_taken=0)


def test_the_wait_shown_to_a_latecomer_follows_the_reservation(client, scarce, settings):
    """The no-work page's "come back in about N minutes" reads the nearest deadline."""
    settings.RATELIMIT_ENABLED = False
    settings.ASSIGNMENT_RESERVATION_MINUTES = 3
    claim(scarce, "hoarder")
    response = client.post(reverse("campaigns:entry", args=[scarce.slug]))
    assert response.status_code == 409
    assert "come back in about 3 minutes" in response.content.decode()


def test_an_answer_given_without_the_page_shown_first_extends_the_hold_too(client, scarce,
                                                                             settings):
    """(The item page's form posted directly: the save, not the page, extends the hold.)"""
    from tests.views.conftest import VALID_CONTINUATION

    settings.RATELIMIT_ENABLED = False
    held = claim(scarce, "quick")
    response = client.post(reverse("campaigns:item", args=[held.token, 1]), VALID_CONTINUATION)
    assert response.status_code == 200
    held.refresh_from_db()
    assert held.deadline == held.started_at + timedelta(minutes=60)
