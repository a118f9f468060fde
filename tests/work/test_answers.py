"""Saving answers: validation, idempotent upserts, closed assignments, control outcomes."""
from datetime import timedelta

import pytest
from django.utils import timezone

from campaigns.errors import Conflict, ServiceError
from campaigns.models import Annotation, Assignment, Item
from campaigns.schema import AnswerInvalid
from campaigns.work import (
    annotation_submit,
    assignment_by_token,
    assignment_claim,
    assignment_submit,
    assignments_expire,
    worker_get_or_create,
)
from campaigns.work.completion import completion_code_for
from tests.factories import (
    CONTINUATION_SCHEMA,
    RUBRIC_SCHEMA,
    TRANSLATION_SCHEMA,
    make_campaign,
    make_items,
)

pytestmark = pytest.mark.django_db

ANSWERS = {"coherence": 4, "sentiment": 2}


def save(assignment, position=1, answers=ANSWERS, seconds=2.5):
    return annotation_submit(assignment=assignment, position=position, answers=answers,
                             seconds_spent=seconds)


def submit(assignment, position=1, answers=ANSWERS, seconds=2.5):
    return save(assignment, position, answers, seconds).annotation


def read_campaign_once(assignment):
    """A worker read, after which this process has the campaign's row (campaign_rows.py):
    the counts below are those of every later request, not of a process's first."""
    assert assignment_by_token(token=assignment.token).campaign.pk == assignment.campaign_id


def test_valid_answers_are_stored_cleaned_with_the_time_spent(assignment):
    annotation = submit(assignment, answers={"coherence": "4", "sentiment": 2, "feedback": ""})
    annotation.refresh_from_db()
    assert annotation.answers == {"coherence": 4, "sentiment": 2}
    assert annotation.seconds_spent == 2.5
    assert annotation.worker_id == assignment.worker_id
    assert annotation.campaign_id == assignment.campaign_id
    assert annotation.control_passed is None
    assert annotation.item.annotations_done == 1


def test_invalid_answers_are_refused_and_nothing_is_stored(assignment):
    with pytest.raises(AnswerInvalid) as exc:
        submit(assignment, answers={"coherence": 9})
    assert set(exc.value.errors) == {"coherence", "sentiment"}
    assert not Annotation.objects.exists()
    assert not Item.objects.filter(annotations_done__gt=0).exists()


def test_a_repeated_submit_updates_the_one_annotation(assignment):
    first = submit(assignment)
    second = submit(assignment, answers={"coherence": 1, "sentiment": 1}, seconds=9)
    assert first.pk == second.pk
    stored = Annotation.objects.get()
    assert stored.answers == {"coherence": 1, "sentiment": 1}
    assert stored.seconds_spent == 2.5 + 9 and stored.seconds_first == 2.5
    assert stored.item.annotations_done == 1


def test_a_resave_adds_its_time_and_keeps_the_first_time_on_task(assignment):
    submit(assignment, seconds=3.4)
    submit(assignment, answers={"coherence": 2, "sentiment": 5}, seconds=0.23)
    stored = Annotation.objects.get()
    assert stored.seconds_first == 3.4
    assert stored.seconds_spent == pytest.approx(3.63)


def test_a_resave_without_a_timer_keeps_the_time_on_task(assignment):
    submit(assignment, seconds=3.4)
    submit(assignment, seconds=None)
    stored = Annotation.objects.get()
    assert stored.seconds_spent == 3.4 and stored.seconds_first == 3.4


def test_a_double_click_stores_one_annotation(assignment):
    submit(assignment)
    submit(assignment)
    assert Annotation.objects.count() == 1
    assert sorted(Item.objects.values_list("annotations_done", flat=True)) == [0, 1]


def test_a_position_outside_the_assignment_is_not_found(assignment):
    with pytest.raises(ServiceError) as exc:
        submit(assignment, position=3)
    assert exc.value.status == 404


@pytest.mark.parametrize("seconds", [-1, float("nan"), float("inf"), "soon"])
def test_a_nonsense_timer_value_is_dropped_not_fatal(assignment, seconds):
    assert submit(assignment, seconds=seconds).seconds_spent is None


def test_the_save_of_the_last_unanswered_item_hands_the_assignment_in(assignment):
    assert not save(assignment, 2).handed_in
    assert Assignment.objects.get().status == "active"
    assert not save(assignment, 2, answers={"coherence": 1, "sentiment": 1}).handed_in
    result = save(assignment, 1)
    assert result.handed_in and result.annotation.item == assignment.slots.get(position=1).item
    stored = Assignment.objects.get()
    assert stored.status == "submitted" and stored.submitted_at is not None
    assert stored.completion_code == completion_code_for(stored)
    assert (assignment.status, assignment.completion_code) == ("submitted", stored.completion_code)
    # assignment_submit stays idempotent: the same code, the same time
    again = assignment_submit(assignment=Assignment.objects.get())
    assert (again.completion_code, again.submitted_at) == (stored.completion_code,
                                                           stored.submitted_at)


def test_a_one_item_assignment_is_handed_in_by_its_only_save(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=1, completion_mode="fixed",
                             completion_code="FIXED-CODE")
    make_items(campaign, 1)
    worker = worker_get_or_create(campaign=campaign, platform="link", platform_id="w1")
    assignment = assignment_claim(campaign=campaign, worker=worker)
    assert save(assignment).handed_in
    stored = Assignment.objects.get()
    assert (stored.status, stored.completion_code) == ("submitted", "FIXED-CODE")
    assert Item.objects.get().annotations_done == 1


def test_answers_cannot_change_after_the_assignment_is_submitted(assignment):
    submit(assignment, 1)
    submit(assignment, 2)
    assignment_submit(assignment=assignment)
    with pytest.raises(Conflict) as exc:
        submit(assignment, 1, answers={"coherence": 1, "sentiment": 1})
    assert exc.value.status == 409 and "submitted" in exc.value.message
    assert Annotation.objects.filter(answers=ANSWERS).count() == 2


def test_answers_cannot_be_saved_after_the_deadline(assignment):
    Assignment.objects.filter(pk=assignment.pk).update(
        deadline=timezone.now() - timedelta(seconds=1))
    with pytest.raises(Conflict) as exc:
        submit(assignment)
    assert exc.value.code == "expired"
    assignments_expire()
    with pytest.raises(Conflict):
        submit(assignment)
    assert not Annotation.objects.exists()


def test_answers_cannot_be_saved_in_a_returned_assignment(assignment):
    Assignment.objects.filter(pk=assignment.pk).update(status="returned")
    with pytest.raises(Conflict):
        submit(assignment)
    assert not Annotation.objects.exists()


def test_saving_an_answer_runs_a_few_queries(assignment, django_assert_max_num_queries):
    assignment = Assignment.objects.select_related("campaign").get(pk=assignment.pk)
    read_campaign_once(assignment)
    # the read of the assignment and the item, then one call of campaigns_save_answer,
    # whether the save inserts, repeats or hands the assignment in; an assignment's first
    # answer also turns its first-answer hold into the full timeout (one UPDATE, once)
    with django_assert_max_num_queries(3):
        submit(assignment)
    with django_assert_max_num_queries(2):
        submit(assignment)
    with django_assert_max_num_queries(2):
        assert save(assignment, 2).handed_in


def test_a_save_is_a_read_and_one_statement(owner, django_assert_num_queries):
    campaign = make_campaign(owner=owner, items_per_assignment=1)
    make_items(campaign, 1)
    worker = worker_get_or_create(campaign=campaign, platform="link", platform_id="w1")
    assignment = assignment_claim(campaign=campaign, worker=worker)
    read_campaign_once(assignment)
    # the read (assignment and item), then lock + insert + counter + hand-in in one call of
    # campaigns_save_answer; no transaction of its own
    with django_assert_num_queries(2):
        result = save(assignment)
    assert result.handed_in and result.annotation.pk == Annotation.objects.get().pk
    assert Item.objects.get().annotations_done == 1
    assert Assignment.objects.get().status == "submitted"


@pytest.mark.parametrize("status", ["returned", "submitted", "expired"])
def test_an_assignment_closed_after_it_was_read_takes_no_answer(
        assignment, monkeypatch, status):
    """The save re-checks the assignment under its lock: a return, hand-in or expiry that
    commits between the read and the save wins, and nothing is stored or counted."""
    from campaigns.work import answers

    read = answers._assignment_at(assignment.token, 1)  # still active here
    Assignment.objects.filter(pk=assignment.pk).update(status=status)
    monkeypatch.setattr(answers, "_assignment_at", lambda token, position: read)
    with pytest.raises(Conflict):
        annotation_submit(token=assignment.token, position=1, answers=lambda schema: ANSWERS)
    assert not Annotation.objects.exists()
    assert not Item.objects.filter(annotations_done__gt=0).exists()
    assert Assignment.objects.get(pk=assignment.pk).status == status


# --- control items ---------------------------------------------------------------------------

def control_assignment(owner, schema, gold, tolerance=None, control="attention"):
    campaign = make_campaign(owner=owner, schema=schema, items_per_assignment=1,
                             attention_checks_per_assignment=int(control == "attention"),
                             gold_items_per_assignment=int(control == "gold"))
    make_items(campaign, 1)
    item = Item.objects.create(campaign=campaign, external_id="check", control=control,
                               gold=gold, gold_tolerance=tolerance, slots_wanted=0, data={
                                   "prompt": "p", "completion": "c", "source": "s",
                                   "translation": "t", "answer": "a"})
    worker = worker_get_or_create(campaign=campaign, platform="link", platform_id="w")
    assignment = assignment_claim(campaign=campaign, worker=worker)
    return assignment, assignment.slots.get(item=item).position


def test_an_attention_check_answered_as_instructed_passes(owner):
    assignment, position = control_assignment(owner, CONTINUATION_SCHEMA, {"coherence": 1})
    annotation = submit(assignment, position, answers={"coherence": 1, "sentiment": 5})
    assert annotation.control_passed is True
    assert Item.objects.get(control="attention").annotations_done == 0


def test_a_failed_attention_check_is_recorded_and_still_stored(owner):
    assignment, position = control_assignment(owner, CONTINUATION_SCHEMA, {"coherence": 1})
    annotation = submit(assignment, position, answers={"coherence": 2, "sentiment": 5})
    assert annotation.control_passed is False
    assert Annotation.objects.get().answers["coherence"] == 2


def test_changing_a_control_answer_changes_its_outcome(owner):
    assignment, position = control_assignment(owner, CONTINUATION_SCHEMA, {"coherence": 1})
    submit(assignment, position, answers={"coherence": 2, "sentiment": 5})
    assert submit(assignment, position, answers={"coherence": 1, "sentiment": 5}).control_passed


@pytest.mark.parametrize("given, passed", [(70, True), (80, True), (81, False), (55, False)])
def test_a_gold_slider_answer_passes_within_the_tolerance(owner, given, passed):
    assignment, position = control_assignment(owner, TRANSLATION_SCHEMA,
                                              {"acceptability": 70}, 10, control="gold")
    annotation = submit(assignment, position, answers={"acceptability": given})
    assert annotation.control_passed is passed


# --- by token, as the item pages save -------------------------------------------------------

def _reader(answers, calls):
    def read(schema):
        calls.append(schema)
        return answers
    return read


def test_saving_by_token_reads_the_answers_with_the_campaigns_schema(assignment,
                                                                     django_assert_num_queries):
    calls = []
    read_campaign_once(assignment)
    # one read (assignment, campaign, worker, item), then one call that locks, saves and
    # hands in if nothing is left (campaigns_save_answer); the first answer then turns the
    # first-answer hold into the full timeout.
    with django_assert_num_queries(3):
        saved = annotation_submit(token=assignment.token, position=1,
                                  answers=_reader(ANSWERS, calls), seconds_spent=3)
    found = saved.assignment
    assert found == assignment and found.campaign.pk == assignment.campaign_id
    assert found.item_count == 2 and [q.id for q in calls[0].questions][:2] == [
        "coherence", "sentiment"]
    assert saved.annotation.answers == ANSWERS and not saved.handed_in
    last = annotation_submit(token=assignment.token, position=2,
                             answers=_reader(ANSWERS, calls))
    assert last.handed_in
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.SUBMITTED


def test_saving_by_token_refuses_what_annotation_submit_refuses(assignment):
    calls = []
    with pytest.raises(ServiceError) as missing:
        annotation_submit(token="no-such-token", position=1, answers=_reader(ANSWERS, calls))
    assert missing.value.status == 404
    with pytest.raises(ServiceError) as outside:
        annotation_submit(token=assignment.token, position=3,
                          answers=_reader(ANSWERS, calls))
    assert outside.value.status == 404
    with pytest.raises(AnswerInvalid):
        annotation_submit(token=assignment.token, position=1,
                          answers=_reader({"coherence": 9}, calls))
    assert not Annotation.objects.exists()
    Assignment.objects.filter(pk=assignment.pk).update(status="returned")
    calls.clear()
    with pytest.raises(Conflict):
        annotation_submit(token=assignment.token, position=1,
                          answers=_reader(ANSWERS, calls))
    assert not Annotation.objects.exists()


def test_a_judge_import_scores_control_items_as_a_workers_save_does(owner):
    from campaigns.services.judgments import JudgmentRow, judgments_import

    campaign = make_campaign(owner=owner, schema=RUBRIC_SCHEMA)
    ones = "{" + ", ".join(f'"{n}": 1' for n in range(1, 16)) + "}"
    for name, expected in (("pass", 1), ("fail", 2)):
        Item.objects.create(campaign=campaign, external_id=name, control="gold",
                            gold={"rubric": {"C1": expected}}, slots_wanted=0,
                            data={"prompt": "p", "response": "r"})
    judgments_import(campaign=campaign, rows=[JudgmentRow(1, "pass", "judge", ones),
                                              JudgmentRow(2, "fail", "judge", ones)])
    outcomes = dict(Annotation.objects.values_list("item__external_id", "control_passed"))
    assert outcomes == {"pass": True, "fail": False}


def test_a_campaign_closes_at_the_hand_in_of_its_last_annotation_whatever_the_order(owner):
    """k=2, two items, one-item assignments: a hand-in whose item still has a free slot, and
    hand-ins whose item is full while the other item still lacks an answer, leave the
    campaign live; the hand-in of the last annotation closes it."""
    campaign = make_campaign(owner=owner, annotations_per_item=2, items_per_assignment=1)
    make_items(campaign, 2)

    def claim(name):
        worker = worker_get_or_create(campaign=campaign, platform="link", platform_id=name)
        return assignment_claim(campaign=campaign, worker=worker)

    def item_of(assignment):
        return assignment.slots.get().item_id

    def live_after(assignment):
        assert save(assignment).handed_in
        campaign.refresh_from_db()
        return campaign.status == "live"

    first_a = claim("w0")
    assert live_after(first_a)  # its item has a free slot
    first_b, second_a, second_b = claim("w1"), claim("w2"), claim("w3")  # least-filled first
    assert item_of(second_a) == item_of(first_a) != item_of(first_b) == item_of(second_b)
    assert live_after(second_a)  # every slot taken, the other item not yet answered
    assert live_after(first_b)
    assert not live_after(second_b)
    assert campaign.status == "closed"
