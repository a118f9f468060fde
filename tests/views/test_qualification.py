"""The qualification test's pages: from the study link to the test (nothing claimed), each answer
saved and answered with what comes next, the feedback, the screened-out page with the
failed-checks code, and the way into the main items after a pass."""
import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from campaigns.models import Assignment, Item, Qualification, QualificationAnswer, Worker
from tests.factories import make_campaign, make_items
from tests.views.conftest import PROLIFIC, page_url

pytestmark = pytest.mark.django_db

GOLD = {"coherence": 4, "sentiment": 2}
RIGHT = {"q-coherence": "4", "q-sentiment": "2"}
WRONG = {"q-coherence": "1", "q-sentiment": "2"}


def qualified(owner, *, feedback=False, **fields):
    campaign = make_campaign(owner=owner, recruitment="prolific", completion_mode="fixed",
                             completion_code="DONE1", **fields)
    make_items(campaign, 3)
    make_items(campaign, 2, control=Item.Control.GOLD, gold=GOLD, prefix="q")
    campaign.qualification = {"items": ["q-0", "q-1"], "pass_mark": 1, "feedback": feedback}
    campaign.save()
    return campaign


def entry(campaign):
    return reverse("campaigns:entry", args=[campaign.slug])


def test_the_study_link_starts_the_test_with_nothing_claimed(client, owner):
    campaign = qualified(owner)
    response = client.post(entry(campaign), PROLIFIC)
    test = Qualification.objects.get()
    assert response.status_code == 200
    assert page_url(response) == f"/q/{test.token}/1/"
    html = response.content.decode()
    assert 'id="qualification-intro"' in html and "Qualification test: 0 of 2 answered" in html
    assert not Assignment.objects.exists()
    assert not Item.objects.filter(slots_taken__gt=0).exists()


def test_a_failed_test_returns_the_participant_with_the_failed_checks_code(client, owner):
    campaign = qualified(owner, completion_code_failed_checks="FAIL9",
                         completion_code_screened_out="SCR42")
    url = page_url(client.post(entry(campaign), PROLIFIC))
    url = page_url(client.post(url, WRONG))
    response = client.post(url, RIGHT)
    html = response.content.decode()
    assert page_url(response) == f"/q/{Qualification.objects.get().token}/"
    assert 'id="screened-out-code">FAIL9<' in html and "SCR42" not in html
    assert 'href="https://app.prolific.com/submissions/complete?cc=FAIL9"' in html
    assert "did not reach the test" in html
    assert Worker.objects.get().screened_out_reason == "qualification"
    assert not Assignment.objects.exists()
    again = client.get(entry(campaign), PROLIFIC).content.decode()  # the same outcome
    assert 'id="screened-out-code">FAIL9<' in again


def test_without_a_failed_checks_code_the_screened_out_code_is_given(client, owner):
    campaign = qualified(owner, completion_code_screened_out="SCR42")
    url = page_url(client.post(entry(campaign), PROLIFIC))
    url = page_url(client.post(url, WRONG))
    assert 'id="screened-out-code">SCR42<' in client.post(url, WRONG).content.decode()


def test_feedback_shows_the_expected_answer_then_a_pass_begins_the_main_items(client, owner):
    campaign = qualified(owner, feedback=True)
    first = page_url(client.post(entry(campaign), PROLIFIC))
    response = client.post(first, WRONG | {"q-coherence": "3"})
    html = response.content.decode()
    assert page_url(response) == first  # the feedback lives at the item's own address
    assert 'id="feedback-heading">Not correct<' in html
    assert re.search(r"<th scope=\"row\" dir=\"auto\">Coherent\?</th><td dir=\"auto\">4</td>"
                     r"<td dir=\"auto\">3</td>", html)
    assert "Not correct" in client.get(first).content.decode()  # reloading shows it again
    second = re.search(r'href="([^"]+)" id="continue-link"', html).group(1)
    assert second.endswith("/2/")
    assert client.post(first, RIGHT).status_code == 200  # the answer stays as first given
    assert not QualificationAnswer.objects.get(position=1).correct
    campaign.qualification["pass_mark"] = 0.5
    campaign.save()
    Qualification.objects.update(pass_mark=0.5)
    last = client.post(second, RIGHT).content.decode()
    assert 'id="feedback-heading">Correct<' in last and "See the result" in last
    outcome = client.get(f"/q/{Qualification.objects.get().token}/").content.decode()
    assert "You passed the test" in outcome and "You answered 1 of 2 test questions" in outcome
    begin = re.search(r'<form method="post" action="([^"]+)"', outcome).group(1)
    response = client.post(begin)
    assignment = Assignment.objects.get()
    assert page_url(response) == f"/a/{assignment.token}/1/"
    assert assignment.session_id == PROLIFIC["SESSION_ID"]  # the start's platform ids


def test_a_passed_participant_is_not_tested_again(client, owner):
    campaign = qualified(owner)
    url = page_url(client.post(entry(campaign), PROLIFIC))
    url = page_url(client.post(url, RIGHT))
    assert "You passed the test" in client.post(url, RIGHT).content.decode()
    response = client.post(entry(campaign), PROLIFIC)  # back at the study link
    assert page_url(response).startswith("/a/")
    assert Qualification.objects.count() == 1 and Assignment.objects.count() == 1


def test_an_invalid_answer_is_shown_again_with_nothing_saved(client, owner):
    campaign = qualified(owner)
    url = page_url(client.post(entry(campaign), PROLIFIC))
    response = client.post(url, {"q-coherence": "9"})
    assert response.status_code == 400
    assert "Your answers were not saved yet" in response.content.decode()
    assert not QualificationAnswer.objects.exists()


def test_the_test_continues_only_in_the_browser_or_session_that_started_it(client, owner):
    campaign = qualified(owner)
    client.post(entry(campaign), PROLIFIC)
    stranger = Client()
    response = stranger.post(entry(campaign), {**PROLIFIC, "SESSION_ID": "another"})
    assert response.status_code == 403
    assert client.post(entry(campaign), PROLIFIC).status_code == 200  # the owner's browser


def test_a_test_page_of_no_test_is_not_found(client, owner):
    assert client.get("/q/no-such-token/1/").status_code == 404
    campaign = qualified(owner)
    url = page_url(client.post(entry(campaign), PROLIFIC))
    assert client.get(url.replace("/1/", "/3/")).status_code == 404


def test_a_start_prolific_does_not_vouch_for_still_gets_one_item_after_the_test(
        client, owner, monkeypatch):
    monkeypatch.setattr("campaigns.views.entry.prolific_participant_verified",
                        lambda **_: False)
    campaign = qualified(owner, items_per_assignment=3)
    url = page_url(client.post(entry(campaign), PROLIFIC))
    url = page_url(client.post(url, RIGHT))
    outcome = client.post(url, RIGHT).content.decode()
    begin = re.search(r'<form method="post" action="([^"]+)"', outcome).group(1)
    client.post(begin)
    assert Assignment.objects.get().items.filter(control="").count() == 1


def test_the_test_speaks_the_campaigns_language(client, owner):
    campaign = qualified(owner, language="ar")
    response = client.post(entry(campaign), PROLIFIC)
    html = response.content.decode()
    assert '<html lang="ar" dir="rtl">' in html
    assert "اختبار التأهيل: تمت الإجابة عن 0 من 2" in html and "حفظ ومتابعة" in html
    url = page_url(client.post(page_url(response), WRONG))
    assert "شكرًا لإجرائك الاختبار" in client.post(url, WRONG).content.decode()


TYPED = {"typed": 30, "pasted": 12, "pastes": 1, "ms": 7000}


def test_a_free_text_answer_of_the_test_keeps_its_provenance_as_an_item_answer_does(
        client, owner):
    campaign = qualified(owner)
    first = client.post(entry(campaign), PROLIFIC)
    html = first.content.decode()
    assert 'name="provenance" value=""' in html and "campaigns/provenance.js" in html
    assert 'name="q-feedback"' in html  # a free-text question is asked in the test too
    text = "Reads well, one odd word."
    client.post(page_url(first), RIGHT | {"q-feedback": text,
                                          "provenance": json.dumps({"q-feedback": TYPED})})
    answer = QualificationAnswer.objects.get()
    assert answer.provenance == {"feedback": {**TYPED, "chars": len(text)}}
    assert answer.answers["feedback"] == text and answer.correct


def test_a_malformed_record_saves_nothing_and_says_why_in_the_campaigns_language(
        client, owner):
    campaign = qualified(owner, language="de")
    url = page_url(client.post(entry(campaign), PROLIFIC))
    response = client.post(url, RIGHT | {"q-feedback": "gut",
                                         "provenance": json.dumps({"q-coherence": TYPED})})
    assert response.status_code == 400
    html = response.content.decode()
    assert "Aufzeichnung Ihrer Eingabe" in html and ">gut</textarea>" in html
    assert not QualificationAnswer.objects.exists()


@pytest.mark.parametrize(("fields", "marks"), [
    ({}, set()), ({"block_paste": True}, {"data-block-paste"}),
    ({"block_copy": True}, {"data-block-copy"}),
    ({"block_paste": True, "block_copy": True}, {"data-block-paste", "data-block-copy"})])
def test_the_test_page_blocks_paste_and_copy_as_the_campaigns_item_pages_do(
        client, owner, fields, marks):
    campaign = qualified(owner, **fields)
    html = client.post(entry(campaign), PROLIFIC).content.decode()
    form = re.search(r'<form method="post" class="answers"[^>]*>', html).group(0)
    assert {m for m in ("data-block-paste", "data-block-copy") if m in form} == marks
