"""The platform round trip: the same participant, Prolific's links and codes, honest ends."""
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from campaigns.models import Assignment, Campaign, Item, Worker
from campaigns.work import assignment_claim, worker_get_or_create
from tests.factories import make_campaign, make_items, mturk_worker_id, prolific_pid
from tests.views.conftest import PROLIFIC, VALID_CONTINUATION, item_url, start

pytestmark = pytest.mark.django_db

PROLIFIC_URL = "https://app.prolific.com/submissions/complete?cc={code}"


def entry(campaign):
    return reverse("campaigns:entry", args=[campaign.slug])


def done(assignment):
    return reverse("campaigns:done", args=[assignment.token])


@pytest.fixture
def study(owner):
    """A Prolific study: fixed completion code, a no-work code, Prolific's completion URL."""
    campaign = make_campaign(owner=owner, slug="study", recruitment="prolific",
                             completion_mode="fixed", completion_code="DONE123",
                             completion_code_no_work="NOWORK9",
                             completion_redirect_url=PROLIFIC_URL)
    make_items(campaign, 2)
    return campaign


@pytest.mark.parametrize("params", [
    {}, {"PROLIFIC_PID": ""}, {"PROLIFIC_PID": "{{%PROLIFIC_PID%}}"},
    {"PROLIFIC_PID": "%PROLIFIC_PID%", "STUDY_ID": "s1"}, {"STUDY_ID": "s1"},
    {"SESSION_ID": "x", "STUDY_ID": "s1"},
])
def test_a_prolific_study_without_a_usable_participant_id_asks_to_open_it_from_prolific(
        client, study, params):
    for response in (client.get(entry(study), params), client.post(entry(study), params)):
        assert response.status_code == 400
        assert b"Please open this study from Prolific" in response.content
    assert not Worker.objects.exists() and not Assignment.objects.exists()
    assert "annotate_wid" not in client.cookies  # no anonymous worker either


@pytest.mark.parametrize("params", [{"PROLIFIC_PID": "{{%PROLIFIC_PID%}}"}, {"STUDY_ID": "s1"}])
def test_a_broken_prolific_link_to_a_plain_campaign_is_refused_too(client, continuation, params):
    response = client.get(entry(continuation), params)
    assert response.status_code == 400 and b"from Prolific" in response.content


def test_a_plain_link_campaign_keeps_working_without_parameters(client, continuation):
    assert client.get(entry(continuation)).status_code == 200
    assignment = start(client, continuation, params={})
    assert assignment.worker.platform == "link"


def test_mturk_workers_may_open_a_prolific_study(client, study):
    params = {"workerId": mturk_worker_id("A1"), "assignmentId": "3X", "hitId": "H",
              "turkSubmitTo": "https://workersandbox.mturk.com"}
    assignment = start(client, study, params=params)
    for position in (1, 2):
        client.post(item_url(assignment, position), VALID_CONTINUATION)
    html = client.get(done(assignment)).content.decode()
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in html
    assert 'http-equiv="refresh"' not in html


def test_the_done_page_sends_a_prolific_participant_back_by_itself(client, study):
    assignment = start(client, study)
    for position in (1, 2):
        client.post(item_url(assignment, position), VALID_CONTINUATION)
    html = client.get(done(assignment)).content.decode()
    url = "https://app.prolific.com/submissions/complete?cc=DONE123"
    # campaigns/done.js follows the button after the pause, which "Stay on this page" stops
    # (a meta refresh could not be stopped); the link works without any script.
    assert f'href="{url}" id="completion-link" rel="noreferrer" data-return-after="4"' in html
    assert 'src="/static/campaigns/done.js"' in html
    assert 'http-equiv="refresh"' not in html
    assert "<script>" not in html


def test_a_prolific_participant_of_a_campaign_without_a_redirect_url_goes_to_prolific(
        client, owner):
    campaign = make_campaign(owner=owner, completion_mode="fixed", completion_code="ABC")
    make_items(campaign, 1)
    assignment = start(client, campaign)
    client.post(item_url(assignment), VALID_CONTINUATION)
    html = client.get(done(assignment)).content.decode()
    url = "https://app.prolific.com/submissions/complete?cc=ABC"
    assert f'href="{url}" id="completion-link"' in html
    assert "data-return-after=" in html


def test_two_failed_attention_checks_give_the_studys_failed_checks_code(client, owner):
    campaign = make_campaign(owner=owner, completion_mode="fixed", completion_code="OK1",
                             completion_code_failed_checks="FAIL1", items_per_assignment=1,
                             attention_checks_per_assignment=2, max_assignments_per_worker=2,
                             completion_redirect_url=PROLIFIC_URL)
    make_items(campaign, 2)
    make_items(campaign, 2, control="attention", gold={"coherence": 3})
    codes = []
    for pid, coherence in (("careless", "1"), ("careful", "3")):
        assignment = start(client, campaign, params={**PROLIFIC, "PROLIFIC_PID": prolific_pid(pid)})
        for position in (1, 2, 3):
            client.post(item_url(assignment, position), {**VALID_CONTINUATION,
                                                         "q-coherence": coherence})
        assignment.refresh_from_db()
        assert assignment.status == "submitted"
        codes.append(assignment.completion_code)
        assert f"cc={assignment.completion_code}" in client.get(done(assignment)).content.decode()
    assert codes == ["FAIL1", "OK1"]


def test_one_failed_attention_check_is_not_enough_for_the_failed_code(client, owner):
    campaign = make_campaign(owner=owner, completion_mode="fixed", completion_code="OK1",
                             completion_code_failed_checks="FAIL1",
                             attention_checks_per_assignment=2)
    make_items(campaign, 1)
    checks = make_items(campaign, 2, control="attention", gold={"coherence": 3})
    assignment = start(client, campaign)
    for slot in assignment.slots.order_by("position"):
        coherence = "1" if slot.item_id == checks[0].pk else "3"
        client.post(item_url(assignment, slot.position), {**VALID_CONTINUATION,
                                                          "q-coherence": coherence})
    assignment.refresh_from_db()
    assert assignment.completion_code == "OK1"


def test_no_work_says_how_long_to_wait_and_gives_the_no_work_code(client, study):
    Campaign.objects.filter(pk=study.pk).update(items_per_assignment=2, annotations_per_item=1)
    Item.objects.filter(campaign=study).update(slots_wanted=1)
    study.refresh_from_db()
    holder = start(client, study, params={**PROLIFIC, "PROLIFIC_PID": prolific_pid("holder")})
    Assignment.objects.filter(pk=holder.pk).update(
        deadline=timezone.now() + timedelta(minutes=12, seconds=30))
    response = client.post(entry(study), {**PROLIFIC, "PROLIFIC_PID": prolific_pid("latecomer")})
    html = response.content.decode()
    assert response.status_code == 409
    assert "come back in about 13 minutes" in html
    assert "NOWORK9" in html
    assert 'href="https://app.prolific.com/submissions/complete?cc=NOWORK9"' in html


def test_no_work_without_a_no_work_code_asks_to_return_the_study(client, owner):
    campaign = make_campaign(owner=owner)
    response = client.post(entry(campaign), PROLIFIC)
    html = response.content.decode()
    assert response.status_code == 409
    assert "no more work" in html.lower() and "come back" not in html
    assert "return the study on Prolific" in html


def test_no_work_on_mturk_asks_to_return_the_hit(client, owner):
    campaign = make_campaign(owner=owner)
    response = client.post(entry(campaign), {"workerId": mturk_worker_id("A1"),
                                             "assignmentId": "3X"})
    assert b"return the HIT" in response.content


def test_a_full_campaign_closes_itself_and_its_done_pages_still_work(client, owner):
    campaign = make_campaign(owner=owner, annotations_per_item=1, items_per_assignment=1,
                             completion_mode="fixed", completion_code="C1")
    make_items(campaign, 2)
    first = start(client, campaign, params={**PROLIFIC, "PROLIFIC_PID": prolific_pid("p1")})
    client.post(item_url(first), VALID_CONTINUATION)
    campaign.refresh_from_db()
    assert campaign.status == "live"  # one item still needs its annotation
    second = start(client, campaign, params={**PROLIFIC, "PROLIFIC_PID": prolific_pid("p2")})
    client.post(item_url(second), VALID_CONTINUATION)
    campaign.refresh_from_db()
    assert campaign.status == "closed"
    for assignment in (first, second):
        assert b"C1" in client.get(done(assignment)).content
    # The same participant coming back still gets their code; a newcomer is told it is closed.
    p1, p3 = ({**PROLIFIC, "PROLIFIC_PID": prolific_pid(name)} for name in ("p1", "p3"))
    assert client.get(entry(campaign), p1)["Location"] == done(first)
    assert b"closed" in client.get(entry(campaign), p3).content


def test_a_campaign_whose_slots_are_all_taken_but_not_answered_stays_live(owner):
    campaign = make_campaign(owner=owner, annotations_per_item=1)
    make_items(campaign, 1)
    worker = worker_get_or_create(campaign=campaign, platform="link", platform_id="w")
    assignment_claim(campaign=campaign, worker=worker)
    from campaigns.work import campaign_close_if_full

    assert campaign_close_if_full(campaign_id=campaign.pk) is False
    campaign.refresh_from_db()
    assert campaign.status == "live"


def test_a_paused_full_campaign_is_not_closed_by_a_late_hand_in(client, owner):
    campaign = make_campaign(owner=owner, annotations_per_item=1)
    make_items(campaign, 1)
    assignment = start(client, campaign)
    Campaign.objects.filter(pk=campaign.pk).update(status="paused")
    client.post(item_url(assignment), VALID_CONTINUATION)
    campaign.refresh_from_db()
    assert campaign.status == "paused"


def test_an_mturk_worker_gets_the_same_done_page_for_the_same_hit_and_new_work_for_a_new_one(
        client, continuation):
    hit = {"workerId": mturk_worker_id("A1"), "assignmentId": "3FIRST", "hitId": "H",
           "turkSubmitTo": "https://www.mturk.com"}
    first = start(client, continuation, params=hit)
    for position in (1, 2, 3):
        client.post(item_url(first, position), VALID_CONTINUATION)
    assert client.get(entry(continuation), hit)["Location"] == done(first)
    html = client.get(done(first)).content.decode()
    assert 'name="assignmentId" value="3FIRST"' in html and "more=1" not in html
    second_hit = {**hit, "assignmentId": "3SECOND"}
    assert client.get(entry(continuation), second_hit).status_code == 200
    second = start(client, continuation, params=second_hit)
    assert second != first and second.mturk_assignment_id == "3SECOND"


def test_a_closed_prolific_study_offers_the_no_work_code_to_a_newcomer(client, study):
    Campaign.objects.filter(pk=study.pk).update(status="closed")
    html = client.get(entry(study), PROLIFIC).content.decode()
    assert "closed" in html
    assert 'href="https://app.prolific.com/submissions/complete?cc=NOWORK9"' in html


def test_the_api_sets_the_prolific_fields(owner):
    from rest_framework.test import APIClient

    from tests.factories import CONTINUATION_SCHEMA

    api = APIClient()
    api.force_authenticate(owner)
    response = api.post("/api/campaigns/", {
        "slug": "api-study", "name": "API study", "schema": CONTINUATION_SCHEMA,
        "recruitment": "prolific", "completion_mode": "fixed", "completion_code": "C1",
        "completion_code_no_work": "N1", "completion_code_failed_checks": "F1"}, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["recruitment"], body["completion_code_no_work"],
            body["completion_code_failed_checks"]) == ("prolific", "N1", "F1")
    assert api.post("/api/campaigns/", {"slug": "bad", "name": "x", "schema": CONTINUATION_SCHEMA,
                                        "recruitment": "facebook"},
                    format="json").status_code == 400
