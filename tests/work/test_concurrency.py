"""The assignment rules under many concurrent connections on PostgreSQL (threads, real locks)."""
import threading
import time
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Count
from django.utils import timezone

from campaigns.errors import Conflict, NotLive, NoWorkAvailable, WorkerLimitReached
from campaigns.models import Annotation, Assignment, AssignmentItem, Campaign, Item
from campaigns.tasks import task_expire_assignments
from campaigns.work import (
    annotation_submit,
    assignment_claim,
    assignment_submit,
    worker_get_or_create,
)
from tests.factories import make_campaign, make_items

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 20
ANSWERS = {"coherence": 3, "sentiment": 4}


@pytest.fixture
def owner(django_user_model):
    return django_user_model.objects.create(username="alice")


def run_threads(targets):
    """Start every callable at once (a barrier), each on its own connection; re-raise errors."""
    barrier = threading.Barrier(len(targets))
    errors = []

    def run(target):
        try:
            barrier.wait()
            target()
        except BaseException as exc:  # noqa: BLE001 - reported to the test below
            errors.append(exc)
        finally:
            connection.close()  # each thread has its own connection; close it before exit

    threads = [threading.Thread(target=run, args=(t,)) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a thread hung (deadlock?)"
    if errors:
        raise errors[0]


def work_until_done(campaign, name):
    """A worker loop: claim, answer every item (the last save hands in), until there is no
    work left."""
    def loop():
        worker = worker_get_or_create(campaign=campaign, platform="link", platform_id=name)
        while True:
            try:
                assignment = assignment_claim(campaign=campaign, worker=worker)
                for position in assignment.slots.values_list("position", flat=True):
                    saved = annotation_submit(assignment=assignment, position=position,
                                              answers=ANSWERS, seconds_spent=1)
                assert saved.handed_in
            except (NoWorkAvailable, NotLive):  # nothing left, or the full campaign closed
                return
            except Conflict:
                continue  # the twin tab submitted this assignment first: claim again
    return loop


def test_many_workers_at_once_fill_every_item_exactly_k_times(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=2, annotations_per_item=3,
                             attention_checks_per_assignment=1)
    make_items(campaign, 30)
    make_items(campaign, 3, control="attention", gold={"coherence": 3})
    # 16 workers, 4 of them in two tabs at once (same platform id in two threads)
    names = [f"w{n}" for n in range(16)] + [f"w{n}" for n in range(THREADS - 16)]
    run_threads([work_until_done(campaign, name) for name in names])

    regular = Item.objects.filter(campaign=campaign, control="")
    assert set(regular.values_list("slots_taken", "annotations_done")) == {(3, 3)}
    per_item = Counter(Annotation.objects.filter(item__control="")
                       .values_list("item_id", flat=True))
    assert set(per_item.values()) == {3} and len(per_item) == 30
    repeated = (AssignmentItem.objects.filter(item__control="")
                .values("assignment__worker", "item").annotate(n=Count("id")).filter(n__gt=1))
    assert not repeated.exists()
    assert not Assignment.objects.filter(status="active").exists()
    assert not Item.objects.filter(control="attention").exclude(slots_taken=0).exists()
    campaign.refresh_from_db()
    assert campaign.status == "closed"  # the last hand-in closed the full campaign


def test_one_worker_in_many_tabs_never_passes_the_assignment_limit(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=1, annotations_per_item=3,
                             max_assignments_per_worker=2)
    make_items(campaign, 40)
    limited = Counter()

    def tab():
        try:
            work_until_done(campaign, "eager")()
        except WorkerLimitReached:
            limited["tabs"] += 1

    run_threads([tab] * 16)
    assert limited["tabs"] == 16
    assert Assignment.objects.count() == 2
    assert Assignment.objects.filter(status="submitted").count() == 2
    assert Annotation.objects.count() == 2


def test_concurrent_double_submits_store_each_answer_exactly_once(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=4, annotations_per_item=1)
    make_items(campaign, 16)
    assignments = [
        assignment_claim(campaign=campaign, worker=worker_get_or_create(
            campaign=campaign, platform="mturk", platform_id=f"w{n}"))
        for n in range(4)
    ]

    handed_in = Counter()

    def double_click(assignment, position, value):
        def go():
            for _ in range(3):
                try:
                    saved = annotation_submit(assignment=assignment, position=position,
                                              answers={"coherence": value, "sentiment": 1},
                                              seconds_spent=1)
                except Conflict as exc:  # a concurrent save of its last item handed it in
                    assert "submitted" in exc.message
                    return
                handed_in[assignment.pk] += saved.handed_in
        return go

    run_threads([double_click(a, p, v) for a in assignments for p in range(1, 5) for v in (2, 5)])
    assert Annotation.objects.count() == 16
    assert set(Item.objects.values_list("annotations_done", flat=True)) == {1}
    assert set(Annotation.objects.values_list("answers__coherence", flat=True)) <= {2, 5}
    assert handed_in == {a.pk: 1 for a in assignments}  # each handed in by exactly one save
    assert Assignment.objects.filter(status="submitted").count() == 4

    codes = []
    run_threads([lambda: codes.append(assignment_submit(assignment=assignments[0])
                                      .completion_code)] * 16)
    assert len(set(codes)) == 1 and len(codes) == 16
    assert codes[0] == Assignment.objects.get(pk=assignments[0].pk).completion_code


def test_concurrent_double_submits_of_the_final_item_store_once_and_hand_in_once(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=2, annotations_per_item=1)
    make_items(campaign, 2)
    assignment = assignment_claim(campaign=campaign, worker=worker_get_or_create(
        campaign=campaign, platform="prolific", platform_id="clicker"))
    annotation_submit(assignment=assignment, position=1, answers=ANSWERS)
    outcomes = Counter()

    def click(value):
        def go():
            try:
                saved = annotation_submit(assignment=assignment, position=2, seconds_spent=1,
                                          answers={"coherence": value, "sentiment": 1})
            except Conflict as exc:
                outcomes["closed" if "submitted" in exc.message else exc.message] += 1
            else:
                outcomes["handed in" if saved.handed_in else "saved"] += 1
        return go

    run_threads([click(1 + n % 5) for n in range(THREADS)])
    assert outcomes == {"handed in": 1, "closed": THREADS - 1}
    assert Annotation.objects.count() == 2
    assert set(Item.objects.values_list("annotations_done", flat=True)) == {1}
    stored = Assignment.objects.get()
    assert stored.status == "submitted" and stored.completion_code


def test_concurrent_posts_of_the_final_item_all_land_on_the_code(owner, settings):
    from django.test import Client
    from django.urls import reverse

    from tests.views.conftest import page_url

    settings.RATELIMIT_ENABLED = False
    campaign = make_campaign(owner=owner, items_per_assignment=1, annotations_per_item=1)
    make_items(campaign, 1)
    assignment = assignment_claim(campaign=campaign, worker=worker_get_or_create(
        campaign=campaign, platform="prolific", platform_id="clicker"))
    item = reverse("campaigns:item", args=[assignment.token, 1])
    done = reverse("campaigns:done", args=[assignment.token])
    locations = []

    def post():
        response = Client().post(item, {"q-coherence": "4", "q-sentiment": "2"})
        locations.append((response.status_code, page_url(response)))

    run_threads([post] * THREADS)
    assert locations == [(200, done)] * THREADS
    assert Annotation.objects.count() == 1 and Item.objects.get().annotations_done == 1
    assert Assignment.objects.get().status == "submitted"


def test_no_claim_started_after_a_pause_is_committed_hands_out_work(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=1, annotations_per_item=3)
    make_items(campaign, 300)
    paused = threading.Event()
    late_claims = []  # claims that began after the pause was committed and still succeeded
    refused = Counter()

    def keep_claiming(n):
        def go():
            for i in range(200):  # a new worker each time, all using the campaign as loaded
                worker = worker_get_or_create(campaign=campaign, platform="link",
                                              platform_id=f"t{n}-{i}")
                began_after_pause = paused.is_set()
                try:
                    assignment = assignment_claim(campaign=campaign, worker=worker)
                except NotLive:
                    refused[n] += 1
                    return
                if began_after_pause:
                    late_claims.append(assignment.pk)
            raise AssertionError("the pause was never seen")
        return go

    def pause():
        while Assignment.objects.count() < 20:
            time.sleep(0.005)
        Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.PAUSED)
        paused.set()  # the UPDATE has committed (autocommit)

    run_threads([keep_claiming(n) for n in range(16)] + [pause])
    assert late_claims == []
    assert sum(refused.values()) == 16
    assert not Item.objects.filter(slots_taken__gt=3).exists()


def test_expired_work_is_reclaimed_and_handed_out_again(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=1, annotations_per_item=1)
    make_items(campaign, 16)
    first = []

    def take(name, answer):
        def go():
            worker = worker_get_or_create(campaign=campaign, platform="link", platform_id=name)
            assignment = assignment_claim(campaign=campaign, worker=worker)
            if answer:
                annotation_submit(assignment=assignment, position=1, answers=ANSWERS,
                                  seconds_spent=1)
            first.append(assignment.pk)
        return go

    run_threads([take(f"slow{n}", answer=n % 2 == 0) for n in range(16)])
    assert set(Item.objects.values_list("slots_taken", flat=True)) == {1}
    Assignment.objects.update(deadline=timezone.now() - timedelta(seconds=1))
    answered = set(Annotation.objects.values_list("item_id", flat=True))

    second = []

    def retake(name):
        def go():
            worker = worker_get_or_create(campaign=campaign, platform="link", platform_id=name)
            while (Item.objects.filter(slots_taken=0).exists()
                   or Assignment.objects.filter(status="active", deadline__lt=timezone.now())
                   .exists()):
                try:  # an expiry running in another thread may not have committed yet
                    second.append(assignment_claim(campaign=campaign, worker=worker).pk)
                    return
                except NoWorkAvailable:
                    continue
        return go

    run_threads([retake(f"fast{n}") for n in range(16)] + [task_expire_assignments.delay] * 2)
    # The answered ones were handed in by their save; the others expired.
    assert Assignment.objects.filter(pk__in=first, status="expired").count() == 8
    assert Assignment.objects.filter(pk__in=first, status="submitted").count() == 8
    assert len(second) == 8
    assert set(Item.objects.values_list("slots_taken", flat=True)) == {1}
    rehanded = set(AssignmentItem.objects.filter(assignment__in=second)
                   .values_list("item_id", flat=True))
    assert len(rehanded) == 8 and not rehanded & answered
    holders = Counter(AssignmentItem.objects.filter(holds_slot=True)
                      .values_list("item_id", flat=True))
    assert set(holders.values()) == {1}
