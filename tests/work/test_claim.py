"""Handing out work: workers, claims, limits, control items, submit and expiry."""
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from campaigns.errors import Conflict, NotLive, NoWorkAvailable, ServiceError, WorkerLimitReached
from campaigns.models import Assignment, AssignmentItem, Campaign, Item, Worker
from campaigns.schema import AnswerInvalid
from campaigns.tasks import task_expire_assignments
from campaigns.work import (
    annotation_submit,
    assignment_answered,
    assignment_claim,
    assignment_submit,
    assignments_expire,
    worker_get_or_create,
    worker_record_consent,
    worker_record_intake,
)
from tests.factories import make_campaign, make_items

pytestmark = pytest.mark.django_db

ANSWERS = {"coherence": 4, "sentiment": 2}


def worker(campaign, name="w1"):
    return worker_get_or_create(campaign=campaign, platform="link", platform_id=name)


def claim(campaign, name="w1", **kwargs):
    return assignment_claim(campaign=campaign, worker=worker(campaign, name), **kwargs)


def item_ids(assignment):
    return list(assignment.slots.order_by("position").values_list("item_id", flat=True))


def answer_all(assignment):
    """Save every item; the last save hands the assignment in."""
    for position in assignment.slots.values_list("position", flat=True):
        annotation_submit(assignment=assignment, position=position, answers=ANSWERS,
                          seconds_spent=1.0)


def answered_not_handed_in(assignment):
    """Every item saved, the assignment still active (saved before the last save handed an
    assignment in, or a hand-in that failed)."""
    answer_all(assignment)
    Assignment.objects.filter(pk=assignment.pk).update(status="active", submitted_at=None,
                                                       completion_code="")
    assignment.refresh_from_db()


def returned(assignment):
    """The assignment in the returned status (given back by the platform)."""
    Assignment.objects.filter(pk=assignment.pk).update(status="returned")


def overdue(assignment):
    Assignment.objects.filter(pk=assignment.pk).update(
        deadline=timezone.now() - timedelta(seconds=1))


def slots(items):
    return {i.pk: i.slots_taken for i in Item.objects.filter(pk__in=[x.pk for x in items])}


# --- workers ---------------------------------------------------------------------------------

def test_a_worker_is_created_once_per_platform_and_id(campaign):
    first = worker_get_or_create(campaign=campaign, platform="prolific", platform_id=" p1 ")
    again = worker_get_or_create(campaign=campaign, platform="prolific", platform_id="p1")
    other = worker_get_or_create(campaign=campaign, platform="mturk", platform_id="p1")
    assert first == again != other
    assert Worker.objects.count() == 2


@pytest.mark.parametrize("platform, platform_id", [("facebook", "x"), ("link", "  "),
                                                   ("link", "x" * 201)])
def test_a_worker_needs_a_known_platform_and_a_usable_id(campaign, platform, platform_id):
    with pytest.raises(ServiceError):
        worker_get_or_create(campaign=campaign, platform=platform, platform_id=platform_id)
    assert not Worker.objects.exists()


def test_valid_intake_answers_are_stored_cleaned(owner):
    campaign = make_campaign(owner=owner, intake_questions=[
        {"id": "age", "kind": "choice", "text": "Age", "options": [
            {"value": "18-29", "label": "18-29"}, {"value": "30+", "label": "30+"}]}])
    w = worker_record_intake(worker=worker(campaign), answers={"age": "30+"})
    w.refresh_from_db()
    assert w.intake == {"age": "30+"}


def test_invalid_intake_answers_are_refused_and_nothing_is_stored(owner):
    campaign = make_campaign(owner=owner, intake_questions=[
        {"id": "age", "kind": "choice", "text": "Age", "options": [
            {"value": "18-29", "label": "18-29"}, {"value": "30+", "label": "30+"}]}])
    with pytest.raises(AnswerInvalid) as exc:
        worker_record_intake(worker=worker(campaign), answers={"age": "12"})
    assert "age" in exc.value.errors
    assert Worker.objects.get().intake is None


def test_consent_keeps_the_time_of_the_first_agreement(campaign):
    w = worker_record_consent(worker=worker(campaign))
    first = w.consented_at
    worker_record_consent(worker=Worker.objects.get(pk=w.pk))
    assert first is not None and Worker.objects.get(pk=w.pk).consented_at == first


# --- claiming --------------------------------------------------------------------------------

@pytest.mark.parametrize("status", ["draft", "paused", "closed"])
def test_a_campaign_that_is_not_live_hands_out_nothing(owner, status):
    campaign = make_campaign(owner=owner, status=status)
    make_items(campaign, 3)
    with pytest.raises(NotLive):
        claim(campaign)
    assert not Assignment.objects.exists()


def test_a_campaign_paused_after_the_caller_loaded_it_hands_out_nothing(campaign):
    make_items(campaign, 3)
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.PAUSED)
    with pytest.raises(NotLive):
        claim(campaign)  # the in-memory campaign still says live
    assert not Assignment.objects.exists()


def test_a_claim_takes_one_slot_on_each_of_n_least_filled_items(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=3, assignment_timeout_minutes=30)
    items = make_items(campaign, 5)
    Item.objects.filter(pk__in=[items[0].pk, items[2].pk]).update(slots_taken=1)
    before = timezone.now()
    a = claim(campaign)
    assert a.status == "active"
    assert sorted(item_ids(a)) == [items[1].pk, items[3].pk, items[4].pk]
    assert list(a.slots.values_list("position", flat=True)) == [1, 2, 3]
    assert slots(items) == {items[0].pk: 1, items[1].pk: 1, items[2].pk: 1, items[3].pk: 1,
                            items[4].pk: 1}
    # Held for the first-answer hold until the worker saves an answer, then the full timeout.
    assert before + timedelta(minutes=5) <= a.deadline <= timezone.now() + timedelta(minutes=5)
    assignment_answered(a)
    assert before + timedelta(minutes=30) <= a.deadline <= timezone.now() + timedelta(minutes=30)


def test_a_returning_worker_resumes_the_open_assignment(campaign):
    make_items(campaign, 5)
    first = claim(campaign)
    assert claim(campaign) == first
    assert Assignment.objects.count() == 1
    assert Item.objects.filter(slots_taken=1).count() == 1


def test_a_worker_never_gets_the_same_item_twice(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=2, annotations_per_item=5)
    make_items(campaign, 5)
    seen = []
    for _ in range(2):
        a = claim(campaign)
        seen += item_ids(a)
        answer_all(a)
        assignment_submit(assignment=a)
    a = claim(campaign)  # one item left that this worker has not seen: a short assignment
    seen += item_ids(a)
    assert len(seen) == len(set(seen)) == 5
    answer_all(a)
    assignment_submit(assignment=a)
    with pytest.raises(NoWorkAvailable):
        claim(campaign)


def test_an_item_is_handed_out_until_k_slots_are_taken(owner):
    campaign = make_campaign(owner=owner, annotations_per_item=2)
    make_items(campaign, 2)
    for n in range(4):
        claim(campaign, f"w{n}")
    assert list(Item.objects.values_list("slots_taken", flat=True)) == [2, 2]
    with pytest.raises(NoWorkAvailable):
        claim(campaign, "w-late")


def test_even_fill_hands_every_item_out_once_before_any_twice(owner):
    campaign = make_campaign(owner=owner, annotations_per_item=3)
    make_items(campaign, 4)
    firsts = [item_ids(claim(campaign, f"w{n}"))[0] for n in range(4)]
    assert len(set(firsts)) == 4


def test_a_worker_at_the_assignment_limit_is_refused(owner):
    campaign = make_campaign(owner=owner, max_assignments_per_worker=2, annotations_per_item=1)
    make_items(campaign, 5)
    for _ in range(2):
        a = claim(campaign)
        answer_all(a)
        assignment_submit(assignment=a)
    with pytest.raises(WorkerLimitReached):
        claim(campaign)
    assert claim(campaign, "someone-else")


def test_expired_and_returned_assignments_do_not_count_toward_the_limit(owner):
    campaign = make_campaign(owner=owner, max_assignments_per_worker=1, annotations_per_item=1)
    make_items(campaign, 3)
    returned(claim(campaign))
    overdue(claim(campaign))
    assert claim(campaign).status == "active"


def test_platform_ids_are_stored_on_the_new_assignment(campaign):
    make_items(campaign, 1)
    a = claim(campaign, platform_ids={"study_id": "S1", "session_id": "X9",
                                      "turk_submit_to": "https://workersandbox.mturk.com"})
    a.refresh_from_db()
    assert (a.study_id, a.session_id, a.turk_submit_to) == (
        "S1", "X9", "https://workersandbox.mturk.com")


def test_a_resumed_assignment_takes_the_platforms_new_ids(campaign):
    make_items(campaign, 1)
    first = claim(campaign, platform_ids={"mturk_assignment_id": "A1", "mturk_hit_id": "H1"})
    again = claim(campaign, platform_ids={"mturk_assignment_id": "A2", "mturk_hit_id": ""})
    assert again == first
    again.refresh_from_db()
    assert (again.mturk_assignment_id, again.mturk_hit_id) == ("A2", "H1")


def test_unknown_platform_ids_are_refused_and_take_no_slot(campaign):
    make_items(campaign, 1)
    with pytest.raises(ServiceError):
        claim(campaign, platform_ids={"favourite_colour": "blue"})
    assert not Assignment.objects.exists()
    assert Item.objects.get().slots_taken == 0


def test_a_worker_of_another_campaign_cannot_claim(owner, campaign):
    other = make_campaign(owner=owner)
    make_items(campaign, 1)
    with pytest.raises(ServiceError):
        assignment_claim(campaign=campaign, worker=worker(other))


def test_a_campaign_with_only_control_items_has_no_work(owner):
    campaign = make_campaign(owner=owner, attention_checks_per_assignment=1)
    make_items(campaign, 2, control="attention", gold={"coherence": 1})
    with pytest.raises(NoWorkAvailable):
        claim(campaign)


# --- control items ---------------------------------------------------------------------------

def test_control_items_are_mixed_in_and_hold_no_slot(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=4,
                             attention_checks_per_assignment=1, gold_items_per_assignment=2)
    make_items(campaign, 6)
    attention = make_items(campaign, 3, control="attention", gold={"coherence": 1})
    gold = make_items(campaign, 3, control="gold", gold={"coherence": 5})
    a = claim(campaign)
    kinds = list(a.slots.order_by("position").values_list("item__control", flat=True))
    assert sorted(kinds) == ["", "", "", "", "attention", "gold", "gold"]
    assert all(i.slots_taken == 0 for i in Item.objects.exclude(control=""))
    assert Item.objects.filter(control="").exclude(slots_taken=0).count() == 4
    answer_all(a)
    assignment_submit(assignment=a)
    assert all(i.annotations_done == 0 for i in Item.objects.filter(pk__in=[
        x.pk for x in attention + gold]))


def test_control_items_land_at_random_positions(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=5, annotations_per_item=20,
                             attention_checks_per_assignment=1)
    make_items(campaign, 5)
    make_items(campaign, 1, control="attention", gold={"coherence": 1})
    positions = set()
    for n in range(20):
        a = claim(campaign, f"w{n}")
        positions |= set(a.slots.filter(item__control="attention")
                         .values_list("position", flat=True))
    assert len(positions) > 1


def test_a_worker_sees_a_control_item_again_only_when_there_is_no_other(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=1, annotations_per_item=1,
                             gold_items_per_assignment=1)
    make_items(campaign, 4)
    gold = make_items(campaign, 2, control="gold", gold={"coherence": 5})
    seen = []
    for _ in range(3):
        a = claim(campaign)
        seen += list(a.slots.filter(item__control="gold").values_list("item_id", flat=True))
        answer_all(a)
        assignment_submit(assignment=a)
    assert sorted(seen[:2]) == sorted(g.pk for g in gold)
    assert seen[2] in {g.pk for g in gold}  # both seen: one repeats rather than none


def test_control_items_removed_since_they_were_cached_are_not_handed_out(owner):
    campaign = make_campaign(owner=owner, annotations_per_item=5, gold_items_per_assignment=1)
    make_items(campaign, 3)
    gold = make_items(campaign, 2, control="gold", gold={"coherence": 5})
    claim(campaign, "first")  # caches the campaign's control item ids
    Item.objects.filter(pk=gold[0].pk).delete()
    a = claim(campaign, "second")
    assert list(a.slots.filter(item__control="gold").values_list("item_id", flat=True)) == [
        gold[1].pk]


def test_a_large_control_pool_still_gives_each_worker_unseen_items(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=1, annotations_per_item=1,
                             gold_items_per_assignment=2)
    make_items(campaign, 20)
    make_items(campaign, 80, control="gold", gold={"coherence": 5})
    seen = []
    for _ in range(20):
        a = claim(campaign)
        seen += list(a.slots.filter(item__control="gold").values_list("item_id", flat=True))
        answer_all(a)
        assignment_submit(assignment=a)
    assert len(seen) == 40 and len(set(seen)) == 40


# --- submitting ------------------------------------------------------------------------------

def test_submitting_needs_every_item_answered(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=3)
    make_items(campaign, 3)
    a = claim(campaign)
    annotation_submit(assignment=a, position=2, answers=ANSWERS, seconds_spent=None)
    with pytest.raises(Conflict) as exc:
        assignment_submit(assignment=a)
    assert exc.value.extra == {"positions": [1, 3]}
    assert Assignment.objects.get().status == "active"


def test_submitting_sets_the_status_time_and_code_once(campaign):
    make_items(campaign, 1)
    a = claim(campaign)
    answer_all(a)
    done = assignment_submit(assignment=a)
    assert done.status == "submitted" and done.submitted_at and len(done.completion_code) == 12
    again = assignment_submit(assignment=Assignment.objects.get(pk=a.pk))
    assert (again.completion_code, again.submitted_at) == (done.completion_code,
                                                           done.submitted_at)


def test_a_fixed_campaign_code_is_given_to_everyone(owner):
    campaign = make_campaign(owner=owner, completion_mode="fixed", completion_code="C1ABCDEF")
    make_items(campaign, 2)
    codes = []
    for name in ("a", "b"):
        a = claim(campaign, name)
        answer_all(a)
        codes.append(assignment_submit(assignment=a).completion_code)
    assert codes == ["C1ABCDEF", "C1ABCDEF"]


def test_a_fully_answered_assignment_past_its_deadline_can_still_be_submitted(campaign):
    make_items(campaign, 1)
    a = claim(campaign)
    answered_not_handed_in(a)
    overdue(a)
    assert assignments_expire() == 1
    assert assignment_submit(assignment=a).status == "submitted"
    assert Item.objects.get().slots_taken == 1


def test_an_expired_assignment_with_unanswered_items_cannot_be_submitted(campaign):
    make_items(campaign, 1)
    a = claim(campaign)
    overdue(a)
    assignments_expire()
    with pytest.raises(Conflict):
        assignment_submit(assignment=a)


def test_a_returned_assignment_cannot_be_submitted(campaign):
    make_items(campaign, 1)
    a = claim(campaign)
    answered_not_handed_in(a)
    returned(a)
    with pytest.raises(Conflict):
        assignment_submit(assignment=a)


# --- expiring --------------------------------------------------------------------------------

def test_expiry_frees_unanswered_items_of_overdue_assignments_only(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=2, annotations_per_item=1)
    make_items(campaign, 4)
    late, on_time = claim(campaign, "late"), claim(campaign, "on-time")
    annotation_submit(assignment=late, position=2, answers=ANSWERS, seconds_spent=None)
    overdue(late)
    assert assignments_expire() == 1
    assert assignments_expire() == 0
    late.refresh_from_db()
    on_time.refresh_from_db()
    assert (late.status, on_time.status) == ("expired", "active")
    freed = late.slots.get(position=1).item
    kept = late.slots.get(position=2).item
    assert (freed.slots_taken, kept.slots_taken, kept.annotations_done) == (0, 1, 1)
    assert not late.slots.get(position=1).holds_slot


def test_expired_items_are_handed_out_again(owner):
    campaign = make_campaign(owner=owner, annotations_per_item=1)
    make_items(campaign, 1)
    first = claim(campaign, "slow")
    with pytest.raises(NoWorkAvailable):
        claim(campaign, "fast")
    overdue(first)
    again = claim(campaign, "fast")  # expires the overdue assignment lazily
    assert item_ids(again) == item_ids(first)
    assert Item.objects.get().slots_taken == 1
    first.refresh_from_db()
    assert first.status == "expired"


def test_a_worker_whose_assignment_expired_gets_new_items_not_the_old_ones(owner):
    campaign = make_campaign(owner=owner, annotations_per_item=2)
    make_items(campaign, 2)
    first = claim(campaign)
    overdue(first)
    second = claim(campaign)
    assert second != first and item_ids(second) != item_ids(first)


def test_expiry_can_be_limited_to_one_campaign(owner):
    one, two = make_campaign(owner=owner), make_campaign(owner=owner)
    make_items(one, 1)
    make_items(two, 1)
    overdue(claim(one))
    overdue(claim(two))
    assert assignments_expire(campaign=one) == 1
    assert Assignment.objects.get(campaign=two).status == "active"


def test_the_periodic_task_expires_overdue_assignments(campaign, celery_eager):
    make_items(campaign, 1)
    overdue(claim(campaign))
    task_expire_assignments.delay()
    assert Assignment.objects.get().status == "expired"
    assert Item.objects.get().slots_taken == 0


# --- query budget ----------------------------------------------------------------------------

def test_a_claim_runs_a_small_fixed_number_of_queries(owner, django_assert_max_num_queries):
    campaign = make_campaign(owner=owner, items_per_assignment=3,
                             attention_checks_per_assignment=1, gold_items_per_assignment=1,
                             max_assignments_per_worker=10)
    make_items(campaign, 200)
    make_items(campaign, 5, control="attention", gold={"coherence": 1})
    make_items(campaign, 5, control="gold", gold={"coherence": 5})
    w = worker(campaign)
    # expiry check, the claim function (worker lock and campaign status, open assignment?,
    # limit, candidates, take slots, insert the assignment and its items), control items
    # (+ savepoint and release in the test's transaction), and once a minute per process
    # the ids of the campaign's control items
    with django_assert_max_num_queries(13):
        a = assignment_claim(campaign=campaign, worker=w)
    # resuming: lock, status, open assignment (+ savepoint and release)
    with django_assert_max_num_queries(5):
        assert assignment_claim(campaign=campaign, worker=w) == a


def test_on_postgresql_a_claim_is_one_statement(owner, django_assert_num_queries):
    """The whole claim (lock, open assignment, limit, pick, slots, insert) is one call of
    campaigns_claim; a resume adds the read of the open assignment."""
    campaign = make_campaign(owner=owner, items_per_assignment=2, max_assignments_per_worker=5)
    make_items(campaign, 10)
    claim(campaign, "first")  # the lazy expiry check runs at most every few seconds
    w = worker(campaign, "second")
    # the call, plus the savepoint and its release around it in the test's transaction
    with django_assert_num_queries(3):
        a = assignment_claim(campaign=campaign, worker=w)
    assert len(item_ids(a)) == 2 and a.just_created
    with django_assert_num_queries(4):
        assert assignment_claim(campaign=campaign, worker=w) == a


def test_a_new_assignment_comes_with_its_first_items_page(owner):
    """The claim's call reads the first item (whatever its kind) and the assignment's size:
    the start shows that page without reading it again."""
    campaign = make_campaign(owner=owner, items_per_assignment=3,
                             attention_checks_per_assignment=1)
    make_items(campaign, 10)
    make_items(campaign, 3, control="attention", gold={"coherence": 1})
    for name in ("a", "b", "c", "d"):
        a = claim(campaign, name)
        first = AssignmentItem.objects.select_related("item").get(assignment=a, position=1)
        page = a.first_page
        assert a.item_count == page.progress.total == 4
        assert page.entry.position == 1 and page.entry.annotation is None
        assert (page.progress.answered, page.progress.next_position) == (0, 1)
        assert page.entry.item.pk == first.item_id
        assert page.entry.item.data == first.item.data
        assert page.entry.item.control == first.item.control
        assert page.entry.item.slots_taken == first.item.slots_taken  # read after the take


def test_a_resumed_assignment_brings_no_first_page(owner):
    campaign = make_campaign(owner=owner)
    make_items(campaign, 5)
    a = claim(campaign)
    resumed = claim(campaign)
    assert resumed == a and getattr(resumed, "first_page", None) is None


def test_a_claim_costs_the_same_whatever_the_history(owner, django_assert_max_num_queries):
    campaign = make_campaign(owner=owner, annotations_per_item=1)
    make_items(campaign, 30)
    for n in range(20):
        a = claim(campaign, f"w{n}")
        answer_all(a)
        assignment_submit(assignment=a)
    w = worker(campaign, "new")
    with django_assert_max_num_queries(11):
        assignment_claim(campaign=campaign, worker=w)


def test_items_per_assignment_larger_than_the_campaign_gives_a_short_assignment(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=12)
    make_items(campaign, 3)
    assert AssignmentItem.objects.filter(assignment=claim(campaign)).count() == 3


def test_a_claim_that_cannot_take_every_slot_hands_out_nothing(owner):
    """The database refuses to go past k even if a slot could not be taken after the pick:
    the claim is rolled back whole (no assignment, no slot taken on the other items), and the
    caller's transaction stays usable."""
    campaign = make_campaign(owner=owner, annotations_per_item=1, items_per_assignment=2)
    refused, free = make_items(campaign, 2)
    with connection.cursor() as cursor:  # the slot update skips this item, as if it were full
        cursor.execute(
            "CREATE FUNCTION pg_temp.refuse_slot() RETURNS trigger LANGUAGE plpgsql AS $$ "
            f"BEGIN IF NEW.id = {int(refused.pk)} THEN RETURN NULL; END IF; RETURN NEW; END $$")
        cursor.execute("CREATE TRIGGER refuse_slot BEFORE UPDATE ON campaigns_item "
                       "FOR EACH ROW EXECUTE FUNCTION pg_temp.refuse_slot()")
    with pytest.raises(Conflict):
        claim(campaign)
    assert not Assignment.objects.exists() and not AssignmentItem.objects.exists()
    assert Item.objects.get(pk=free.pk).slots_taken == 0
