"""Reads for the worker's pages: items in order with answers, progress, pages, tokens."""
from datetime import timedelta

import pytest
from django.utils import timezone

from campaigns.models import Assignment
from campaigns.work import (
    annotation_submit,
    assignment_by_token,
    assignment_claim,
    assignment_entries,
    assignment_progress,
    assignment_with_page,
    campaign_and_worker,
    worker_get_or_create,
    worker_open_assignment,
)
from tests.factories import make_campaign, make_items

pytestmark = pytest.mark.django_db

ANSWERS = {"coherence": 2, "sentiment": 5}


@pytest.fixture
def assignment(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=3)
    make_items(campaign, 3)
    worker = worker_get_or_create(campaign=campaign, platform="link", platform_id="w")
    assignment = assignment_claim(campaign=campaign, worker=worker)
    annotation_submit(assignment=assignment, position=2, answers=ANSWERS, seconds_spent=1)
    return assignment


def test_entries_list_the_items_in_order_with_their_answers(assignment, django_assert_num_queries):
    with django_assert_num_queries(2):
        entries = assignment_entries(assignment=assignment)
    assert [e.position for e in entries] == [1, 2, 3]
    assert [e.answered for e in entries] == [False, True, False]
    assert entries[1].annotation.answers == ANSWERS
    assert entries[0].item.data["prompt"].startswith("Prompt")


def test_progress_counts_answered_items_and_finds_the_next_one(assignment,
                                                               django_assert_num_queries):
    with django_assert_num_queries(1):
        progress = assignment_progress(assignment=assignment)
    assert str(progress) == "1 of 3"
    assert (progress.next_position, progress.percent, progress.complete) == (1, 33, False)
    assert progress.answered_positions == {2}
    for position in (1, 3):
        annotation_submit(assignment=assignment, position=position, answers=ANSWERS,
                          seconds_spent=1)
    progress = assignment_progress(assignment=assignment)
    assert (str(progress), progress.next_position, progress.complete) == ("3 of 3", None, True)


def test_a_page_has_the_item_its_answers_and_its_neighbours(assignment):
    _, page = assignment_with_page(token=assignment.token, position=2)
    assert page.entry.annotation.answers == ANSWERS
    assert page.entry.item == assignment.slots.get(position=2).item
    assert (page.previous_position, page.following_position) == (1, 3)
    assert (page.progress.answered, page.progress.total, page.progress.next_position) == (1, 3, 1)
    _, first = assignment_with_page(token=assignment.token, position=1)
    assert first.entry.annotation is None and first.previous_position is None
    assert first.entry.item == assignment.slots.get(position=1).item
    _, last = assignment_with_page(token=assignment.token, position=3)
    assert last.following_position is None
    for outside in (4, 0):
        assert assignment_with_page(token=assignment.token, position=outside) == (assignment,
                                                                                  None)


def test_the_item_page_reads_assignment_and_page_together(assignment,
                                                          django_assert_num_queries):
    reads = 1  # the assignment, its campaign and worker, the progress and the item
    with django_assert_num_queries(reads):
        found, page = assignment_with_page(token=assignment.token, position=1)
    assert found == assignment and found.campaign.pk == assignment.campaign_id
    assert found.worker.pk == assignment.worker_id and found.item_count == 3
    assert page.entry.item == assignment.slots.get(position=1).item
    assert page.entry.annotation is None
    assert page.progress == assignment_progress(assignment=assignment)
    with django_assert_num_queries(reads + 1):  # saved answers: one more read for them
        _, saved = assignment_with_page(token=assignment.token, position=2)
    assert saved.entry.annotation.answers == ANSWERS
    found, missing = assignment_with_page(token=assignment.token, position=4)
    assert found == assignment and missing is None
    assert assignment_with_page(token="nope", position=1) == (None, None)
    assert assignment_with_page(token="", position=1) == (None, None)


def test_a_token_opens_its_assignment_and_nothing_else(assignment):
    found = assignment_by_token(token=assignment.token)
    assert found == assignment and found.campaign.pk == assignment.campaign_id
    assert assignment_by_token(token="nope") is None
    assert assignment_by_token(token="") is None
    assert assignment_by_token(token="x" * 500) is None


def test_only_an_active_assignment_before_its_deadline_is_open(assignment):
    assert worker_open_assignment(worker=assignment.worker) == assignment
    Assignment.objects.filter(pk=assignment.pk).update(
        deadline=timezone.now() - timedelta(seconds=1))
    assert worker_open_assignment(worker=assignment.worker) is None


def test_the_study_link_reads_campaign_and_returning_worker_together(assignment,
                                                                     django_assert_num_queries):
    campaign = assignment.campaign
    with django_assert_num_queries(1):
        found, worker = campaign_and_worker(slug=campaign.slug, platform="link", platform_id="w")
    assert found == campaign and worker == assignment.worker and worker.campaign is found
    assert campaign_and_worker(slug=campaign.slug, platform="link", platform_id="new") == (
        campaign, None)
    assert campaign_and_worker(slug=campaign.slug, platform="prolific", platform_id="w") == (
        campaign, None)
    assert campaign_and_worker(slug="nope", platform="link", platform_id="w") == (None, None)
    assert campaign_and_worker(slug="", platform="link", platform_id="w") == (None, None)
