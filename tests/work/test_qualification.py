"""The qualification step: a test of gold items before the main items, scored against the gold
answers; a pass admits (and is remembered here and in the owner's group), a failure screens
out with nothing claimed; the answers are kept apart from the annotations."""
import pytest
from django.contrib.auth import get_user_model
from django.db.models import Sum

from campaigns.errors import QualificationRequired, ScreenedOut, ServiceError
from campaigns.models import Annotation, Assignment, Item, Qualification, QualificationAnswer
from campaigns.schema import AnswerInvalid
from campaigns.work import assignment_claim, worker_get_or_create, worker_record_intake
from campaigns.work.qualification import qualification_answer
from tests.factories import make_campaign, make_items

GOOD = {"coherence": 4, "sentiment": 2}


def qualified_campaign(owner, *, pass_mark=1.0, group="", tolerance=None, **fields):
    campaign = make_campaign(owner=owner, gold_items_per_assignment=fields.pop("gold", 0),
                             **fields)
    make_items(campaign, 3)
    make_items(campaign, 3, control=Item.Control.GOLD, gold=GOOD, gold_tolerance=tolerance,
               prefix="q")
    campaign.qualification = {"items": ["q-0", "q-1", "q-2"], "pass_mark": pass_mark,
                              **({"group": group} if group else {})}
    campaign.save()
    return campaign


def start(campaign, name="w1"):
    """The claim for a new worker: their test (QualificationRequired carries it)."""
    worker = worker_get_or_create(campaign=campaign, platform="prolific", platform_id=name)
    with pytest.raises(QualificationRequired) as caught:
        assignment_claim(campaign=campaign, worker=worker,
                         platform_ids={"session_id": f"s-{name}"})
    return worker, caught.value.qualification


def take(test, answers):
    for position, given in enumerate(answers, start=1):
        saved = qualification_answer(token=test.token, position=position, answers=given,
                                     seconds_spent=3.0)
    test.refresh_from_db()
    return saved


def slots_taken(campaign):
    return Item.objects.filter(campaign=campaign).aggregate(n=Sum("slots_taken"))["n"]


@pytest.mark.django_db
def test_a_new_worker_gets_the_test_with_nothing_claimed(owner):
    campaign = qualified_campaign(owner)
    worker, test = start(campaign)
    assert test.status == "active" and test.total == 3
    assert [Item.objects.get(pk=pk).external_id for pk in test.items] == ["q-0", "q-1", "q-2"]
    assert test.session_id == "s-w1"  # the proof of the same session, as an assignment's
    assert not Assignment.objects.exists() and slots_taken(campaign) == 0
    _, again = start(campaign)  # coming back: the same test, not a second one
    assert again.pk == test.pk


@pytest.mark.django_db
def test_a_pass_is_recorded_and_the_main_items_follow_without_the_test_items(owner):
    campaign = qualified_campaign(owner, gold=1)
    make_items(campaign, 2, control=Item.Control.GOLD, gold=GOOD, prefix="mixed")
    worker, test = start(campaign)
    saved = take(test, [GOOD] * 3)
    assert saved.finished and test.status == "passed"
    assert (test.correct, test.total, test.score) == (3, 3, 1.0) and test.finished_at
    assignment = assignment_claim(campaign=campaign, worker=worker)
    ids = set(assignment.items.values_list("external_id", flat=True))
    assert not ids & {"q-0", "q-1", "q-2"}  # the test's items are not mixed in as gold
    assert any(i.startswith("mixed") for i in ids)
    # Stored apart: no annotation, so nothing reaches the statistics or the exports.
    assert QualificationAnswer.objects.count() == 3 and not Annotation.objects.exists()


@pytest.mark.django_db
def test_below_the_pass_mark_screens_out_for_good_with_nothing_claimed(owner):
    campaign = qualified_campaign(owner, pass_mark=0.67)
    worker, test = start(campaign)
    take(test, [GOOD, GOOD, {"coherence": 1, "sentiment": 2}])  # 2 of 3 < 0.67 x 3
    assert test.status == "failed" and test.correct == 2
    worker.refresh_from_db()
    assert worker.screened_out_reason == "qualification"
    with pytest.raises(ScreenedOut) as caught:
        assignment_claim(campaign=campaign, worker=worker)
    assert caught.value.extra == {"reason": "qualification"}
    assert not Assignment.objects.exists() and slots_taken(campaign) == 0


@pytest.mark.django_db
def test_the_pass_mark_is_a_share_of_the_items(owner):
    campaign = qualified_campaign(owner, pass_mark=0.66)
    _, test = start(campaign)
    take(test, [GOOD, GOOD, {"coherence": 1, "sentiment": 2}])  # 2 >= 0.66 x 3
    assert test.status == "passed" and test.score == pytest.approx(2 / 3)


@pytest.mark.django_db
def test_numbers_count_within_the_items_gold_tolerance(owner):
    campaign = qualified_campaign(owner, pass_mark=0.1, tolerance=1)
    _, test = start(campaign)
    take(test, [{"coherence": 5, "sentiment": 1}, {"coherence": 3, "sentiment": 3},
                {"coherence": 2, "sentiment": 2}])
    assert list(QualificationAnswer.objects.order_by("position")
                .values_list("correct", flat=True)) == [True, True, False]


@pytest.mark.django_db
def test_an_answer_is_final_once_saved(owner):
    campaign = qualified_campaign(owner)
    _, test = start(campaign)
    qualification_answer(token=test.token, position=1, answers={"coherence": 1, "sentiment": 1},
                         seconds_spent=None)
    again = qualification_answer(token=test.token, position=1, answers=GOOD, seconds_spent=None)
    assert again.answer.correct is False and not again.finished
    assert QualificationAnswer.objects.get().answers["coherence"] == 1
    with pytest.raises(ServiceError) as caught:
        qualification_answer(token=test.token, position=4, answers=GOOD, seconds_spent=None)
    assert caught.value.status == 404


@pytest.mark.django_db
def test_a_group_shares_outcomes_between_campaigns_of_one_owner_only(owner):
    first = qualified_campaign(owner, group="summaries")
    _, test = start(first, "pass")
    take(test, [GOOD] * 3)
    _, failed = start(first, "fail")
    take(failed, [{"coherence": 1, "sentiment": 1}] * 3)

    second = qualified_campaign(owner, group="summaries")
    passer = worker_get_or_create(campaign=second, platform="prolific", platform_id="pass")
    assert assignment_claim(campaign=second, worker=passer)  # no test again
    carried = Qualification.objects.get(campaign=second, worker=passer)
    assert carried.status == "passed" and carried.carried_from_id == test.pk
    failer = worker_get_or_create(campaign=second, platform="prolific", platform_id="fail")
    with pytest.raises(ScreenedOut):
        assignment_claim(campaign=second, worker=failer)

    other = get_user_model().objects.create_user("bob", "bob@example.org", "pw-bob-123")
    strangers = qualified_campaign(other, group="summaries")
    start(strangers, "pass")  # another researcher's group of the same name: the test again
    ungrouped = qualified_campaign(owner)
    start(ungrouped, "pass")  # a campaign outside the group: the test again


@pytest.mark.django_db
def test_a_worker_who_started_before_the_test_was_added_is_not_stopped(owner):
    campaign = qualified_campaign(owner)
    qualification, campaign.qualification = campaign.qualification, {}
    campaign.save()
    worker = worker_get_or_create(campaign=campaign, platform="link", platform_id="early")
    first = assignment_claim(campaign=campaign, worker=worker)
    campaign.qualification = qualification
    campaign.save()
    assert assignment_claim(campaign=campaign, worker=worker).pk == first.pk


@pytest.mark.django_db
def test_a_campaign_without_a_test_claims_at_once(owner):
    campaign = make_campaign(owner=owner)
    make_items(campaign, 2)
    worker = worker_get_or_create(campaign=campaign, platform="link", platform_id="w")
    assert assignment_claim(campaign=campaign, worker=worker)
    assert not Qualification.objects.exists()



@pytest.mark.django_db
def test_a_full_quota_screens_out_before_the_test(owner):
    l1 = {"id": "l1", "kind": "choice", "text": "Your first language", "quota": {"de": 1},
          "options": [{"value": "de", "label": "German"}, {"value": "fr", "label": "French"}]}
    campaign = qualified_campaign(owner, intake_questions=[l1])
    first = worker_record_intake(worker=start(campaign, "de1")[0], answers={"l1": "de"})
    Qualification.objects.filter(worker=first).update(status="passed")
    assignment_claim(campaign=campaign, worker=first)  # holds the only German place
    late = worker_get_or_create(campaign=campaign, platform="prolific", platform_id="de2")
    late = worker_record_intake(worker=late, answers={"l1": "de"})
    with pytest.raises(ScreenedOut) as caught:
        assignment_claim(campaign=campaign, worker=late)
    assert caught.value.extra == {"reason": "quota:l1"}
    assert not Qualification.objects.filter(worker=late).exists()  # no test taken for nothing


@pytest.mark.django_db
def test_the_free_text_record_is_stored_with_the_answer_and_a_refused_one_saves_nothing(
        owner):
    campaign = qualified_campaign(owner)
    _, test = start(campaign)
    record = {"feedback": {"typed": 5, "pasted": 0, "pastes": 0, "ms": 900, "chars": 5}}
    saved = qualification_answer(token=test.token, position=1,
                                 answers=GOOD | {"feedback": "Fine."}, seconds_spent=2.0,
                                 provenance=lambda schema: record)
    assert QualificationAnswer.objects.get(pk=saved.answer.pk).provenance == record

    def refused(schema):
        raise AnswerInvalid({"provenance": "unreadable"})

    with pytest.raises(AnswerInvalid):
        qualification_answer(token=test.token, position=2, answers=GOOD, seconds_spent=2.0,
                             provenance=refused)
    assert list(QualificationAnswer.objects.values_list("position", flat=True)) == [1]
    plain = qualification_answer(token=test.token, position=2, answers=GOOD, seconds_spent=2.0)
    assert plain.answer.provenance == {}
