"""The screened-out page: what each platform's participant is told and given, first time and
on every return, with nothing claimed."""
import pytest
from django.urls import reverse

from campaigns.models import Assignment, Campaign, Item, Worker
from tests.factories import make_campaign, make_items, mturk_worker_id
from tests.views.conftest import PROLIFIC

pytestmark = pytest.mark.django_db

ADULT = {"id": "adult", "kind": "choice", "text": "Are you 18 or older?", "eligible": ["yes"],
         "options": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]}
MTURK = {"workerId": mturk_worker_id("w1"), "assignmentId": "A1", "hitId": "H1",
         "turkSubmitTo": "https://www.mturk.com"}


def screened_campaign(owner, **fields):
    campaign = make_campaign(owner=owner, intake_questions=[ADULT], **fields)
    make_items(campaign, 3)
    return campaign


def entry(campaign):
    return reverse("campaigns:entry", args=[campaign.slug])


def test_a_prolific_participant_goes_back_with_the_screened_out_code(client, owner):
    campaign = screened_campaign(owner, recruitment="prolific", completion_mode="fixed",
                                 completion_code="DONE1", completion_code_screened_out="SCR42")
    response = client.post(entry(campaign), {**PROLIFIC, "q-adult": "no"})
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="screened-out-code">SCR42<' in html
    assert 'href="https://app.prolific.com/submissions/complete?cc=SCR42"' in html
    assert "DONE1" not in html
    assert not Assignment.objects.exists()
    assert not Item.objects.filter(slots_taken__gt=0).exists()
    worker = Worker.objects.get()
    assert worker.intake == {"adult": "no"} and worker.screened_out_reason == "ineligible:adult"


def test_a_returning_screened_out_participant_gets_the_same_page(client, owner):
    campaign = screened_campaign(owner, completion_code_screened_out="SCR42")
    client.post(entry(campaign), {**PROLIFIC, "q-adult": "no"})
    for response in (client.get(entry(campaign), PROLIFIC),
                     client.post(entry(campaign), {**PROLIFIC, "q-adult": "yes"})):
        assert response.status_code == 200
        assert 'id="screened-out-code">SCR42<' in response.content.decode()
    assert not Assignment.objects.exists()
    assert Worker.objects.get().intake == {"adult": "no"}


def test_without_a_screened_out_code_a_prolific_participant_is_asked_to_return(client, owner):
    campaign = screened_campaign(owner)
    html = client.post(entry(campaign), {**PROLIFIC, "q-adult": "no"}).content.decode()
    assert "return the study on Prolific" in html and "completion-link" not in html


def test_an_mturk_worker_is_asked_to_return_the_hit(client, owner):
    campaign = screened_campaign(owner, completion_code_screened_out="SCR42")
    html = client.post(entry(campaign), {**MTURK, "q-adult": "no"}).content.decode()
    assert "return the HIT on Mechanical Turk" in html and "SCR42" not in html


def test_a_plain_link_visitor_is_told_there_is_nothing_for_them(client, owner):
    campaign = screened_campaign(owner, completion_code_screened_out="SCR42")
    response = client.post(entry(campaign), {"q-adult": "no"})
    html = response.content.decode()
    assert "no work for you in it" in html and "SCR42" not in html
    assert client.get(entry(campaign)).content.decode().count("screened-out-message") == 1


def test_an_eligible_participant_starts_as_before(client, owner):
    campaign = screened_campaign(owner, completion_code_screened_out="SCR42")
    response = client.post(entry(campaign), {**PROLIFIC, "q-adult": "yes"})
    assert response.status_code == 302
    assert Assignment.objects.get().worker.screened_out_at is None
    assert Campaign.objects.get().completion_code_screened_out == "SCR42"
