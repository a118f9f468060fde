"""The study link /c/<slug>/: platforms, consent, intake, resuming, closed campaigns."""
import re

import pytest
from django.urls import reverse

from campaigns.models import Assignment, Campaign, Worker
from tests.factories import make_campaign, make_items, mturk_worker_id, prolific_pid
from tests.views.conftest import PROLIFIC, item_url, start

pytestmark = pytest.mark.django_db

INTAKE = [
    {"id": "age", "kind": "choice", "text": "Your age",
     "options": [{"value": "18-24", "label": "18-24"}, {"value": "25-34", "label": "25-34"}]},
    {"id": "language_region", "kind": "text", "text": "Language Region", "multiline": False},
]


def entry(slug):
    return reverse("campaigns:entry", args=[slug])


def test_it_shows_instructions_examples_and_consent(client, owner):
    campaign = make_campaign(owner=owner, instructions="Rate **carefully**.",
                             examples="Example <b>one</b>", consent_text="You must be 18.")
    response = client.get(entry(campaign.slug), PROLIFIC)
    html = response.content.decode()
    assert response.status_code == 200
    assert "<strong>carefully</strong>" in html
    assert "Example" in html
    assert "You must be 18." in html
    assert 'name="consent"' in html and 'id="consent"' in html
    assert f'value="{PROLIFIC["PROLIFIC_PID"]}"' in html


@pytest.mark.parametrize("status", ["paused", "closed", "draft"])
def test_a_campaign_that_is_not_live_says_so_and_hands_out_nothing(client, owner, status):
    campaign = make_campaign(owner=owner, status=status)
    make_items(campaign, 2)
    response = client.get(entry(campaign.slug), PROLIFIC)
    assert response.status_code == 200
    assert b"<form" not in response.content
    assert {"paused": b"paused", "closed": b"closed", "draft": b"not started"}[status] in \
        response.content
    response = client.post(entry(campaign.slug), PROLIFIC)
    assert response.status_code == 409
    assert not Assignment.objects.exists()


SECRET_TEXTS = {"name": "Unreleased Study Xq7", "description": "About Xq7 and its hypothesis",
                "instructions": "Rate Xq7 secretly", "examples": "Example Xq7",
                "consent_text": "Consent Xq7"}
MTURK_PREVIEW = {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "H1"}


@pytest.mark.parametrize("status", ["draft", "paused"])
@pytest.mark.parametrize("recruitment", ["link", "prolific"])
def test_a_draft_or_paused_study_shows_a_neutral_page_and_nothing_of_itself(
    client, owner, status, recruitment
):
    campaign = make_campaign(owner=owner, status=status, recruitment=recruitment, **SECRET_TEXTS)
    make_items(campaign, 2)
    pages = [client.get(entry(campaign.slug)), client.get(entry(campaign.slug), PROLIFIC),
             client.get(entry(campaign.slug), MTURK_PREVIEW),
             client.post(entry(campaign.slug), PROLIFIC), client.post(entry(campaign.slug)),
             client.get(entry(campaign.slug), {**PROLIFIC, "PROLIFIC_PID": "not-a-prolific-id"})]
    for response in pages:
        html = response.content.decode()
        assert "Xq7" not in html, (response.status_code, html)
        assert "Instructions" not in html
    assert pages[1].status_code == 200
    assert "This study is not open" in pages[1].content.decode()
    assert not Assignment.objects.exists()


def test_a_closed_or_live_study_still_shows_its_name_and_instructions(client, owner):
    for status in ("live", "closed"):
        campaign = make_campaign(owner=owner, status=status, **SECRET_TEXTS)
        html = client.get(entry(campaign.slug), PROLIFIC).content.decode()
        assert "Unreleased Study Xq7" in html and "Rate Xq7 secretly" in html


def test_an_unknown_campaign_is_404(client):
    assert client.get(entry("nope")).status_code == 404


def test_a_prolific_worker_starts_and_lands_on_the_first_item(client, continuation):
    response = client.post(entry(continuation.slug), PROLIFIC)
    assignment = Assignment.objects.get()
    assert response["Location"] == item_url(assignment, 1)
    assert assignment.worker.platform == "prolific"
    assert assignment.worker.platform_id == PROLIFIC["PROLIFIC_PID"]
    assert (assignment.study_id, assignment.session_id) == ("study-1", "session-1")


def test_get_never_claims_work(client, continuation):
    client.get(entry(continuation.slug), PROLIFIC)
    assert not Assignment.objects.exists()


def test_the_same_prolific_id_resumes_the_open_assignment(client, continuation):
    assignment = start(client, continuation)
    client.post(item_url(assignment), {"q-coherence": "3", "q-sentiment": "3"})
    other_browser = client.__class__()
    response = other_browser.get(entry(continuation.slug), PROLIFIC)
    assert response.status_code == 302
    assert response["Location"] == item_url(assignment, 2)
    again = start(other_browser, continuation)
    assert again == assignment
    assert Assignment.objects.count() == 1


def test_a_plain_link_worker_is_known_by_a_long_random_cookie(client, continuation):
    response = client.get(entry(continuation.slug))
    cookie = response.cookies["annotate_wid"]
    assert cookie["httponly"]
    assignment = start(client, continuation, params={})
    assert assignment.worker.platform == "link"
    assert len(assignment.worker.platform_id) >= 40
    response = client.get(entry(continuation.slug))
    assert response.status_code == 302 and response["Location"] == item_url(assignment, 1)
    stranger = client.__class__()
    assert stranger.get(entry(continuation.slug)).status_code == 200


def test_mturk_preview_shows_a_sample_item_and_claims_nothing(client, continuation):
    response = client.get(entry(continuation.slug), {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE",
                                                     "hitId": "H1"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "preview" in html.lower() and "Prompt 0" in html
    assert 'method="post"' not in html
    assert not Worker.objects.exists() and not Assignment.objects.exists()


def test_mturk_parameters_are_kept_on_the_assignment(client, continuation):
    params = {"workerId": mturk_worker_id("A1B2C3"), "assignmentId": "3XYZ", "hitId": "H1",
              "turkSubmitTo": "https://workersandbox.mturk.com"}
    assignment = start(client, continuation, params=params)
    assert assignment.worker.platform == "mturk"
    assert assignment.mturk_assignment_id == "3XYZ"
    assert assignment.turk_submit_to == "https://workersandbox.mturk.com"


@pytest.mark.parametrize("submit_to", ["https://evil.example.org", "http://www.mturk.com",
                                       "https://www.mturk.com.evil.example.org"])
def test_a_foreign_turk_submit_to_is_refused_and_starts_nothing(client, continuation, submit_to):
    params = {"workerId": mturk_worker_id("A1"), "assignmentId": "3X", "hitId": "H",
              "turkSubmitTo": submit_to}
    for response in (client.get(entry(continuation.slug), params),
                     client.post(entry(continuation.slug), params)):
        assert response.status_code == 400
        assert b"not from Mechanical Turk" in response.content
    assert not Assignment.objects.exists() and not Worker.objects.exists()


def test_consent_is_required_and_recorded(client, owner):
    campaign = make_campaign(owner=owner, consent_text="Agree?")
    make_items(campaign, 2)
    response = client.post(entry(campaign.slug), PROLIFIC)
    assert response.status_code == 400
    assert b'aria-describedby="consent-error"' in response.content
    assert not Assignment.objects.exists()
    assignment = start(client, campaign, consent="yes")
    assert assignment.worker.consented_at is not None


def test_intake_is_asked_once_and_stored(client, owner):
    campaign = make_campaign(owner=owner, intake_questions=INTAKE, items_per_assignment=1,
                             max_assignments_per_worker=2)
    make_items(campaign, 3)
    page = client.get(entry(campaign.slug), PROLIFIC).content.decode()
    assert "Language Region" in page and 'name="q-age"' in page
    response = client.post(entry(campaign.slug), {**PROLIFIC, "q-language_region": "Leeds"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "Please answer this question." in html
    assert 'value="Leeds"' in html  # the other answers stay filled in
    assignment = start(client, campaign, **{"q-age": "25-34", "q-language_region": "Leeds"})
    assert assignment.worker.intake == {"age": "25-34", "language_region": "Leeds"}
    response = client.post(item_url(assignment), {"q-coherence": "1", "q-sentiment": "1"})
    assert response["Location"] == reverse("campaigns:done", args=[assignment.token])
    page = client.get(entry(campaign.slug), {**PROLIFIC, "more": "1"}).content.decode()
    assert 'name="q-age"' not in page  # asked once per worker
    second = start(client, campaign)
    assert second != assignment


def test_no_work_left_is_a_polite_page(client, owner):
    campaign = make_campaign(owner=owner)
    response = client.post(entry(campaign.slug), PROLIFIC)
    assert response.status_code == 409
    assert b"no more work" in response.content.lower()


def test_the_worker_limit_is_a_polite_page(client, continuation):
    Campaign.objects.filter(pk=continuation.pk).update(max_assignments_per_worker=1,
                                                       items_per_assignment=1)
    continuation.refresh_from_db()
    assignment = start(client, continuation)
    response = client.post(item_url(assignment), {"q-coherence": "1", "q-sentiment": "1"})
    assert response["Location"] == reverse("campaigns:done", args=[assignment.token])
    # The same participant starting again gets their done page (the same code) ...
    response = client.post(entry(continuation.slug), PROLIFIC)
    assert response["Location"] == reverse("campaigns:done", args=[assignment.token])
    # ... and one asking for more is told the limit politely.
    response = client.post(entry(continuation.slug), {**PROLIFIC, "more": "1"})
    assert response.status_code == 409
    assert b"Thank you" in response.content


def _form_key(html: str) -> str:
    return re.search(r'name="form_key" value="([^"]+)"', html).group(1)


def test_the_start_form_needs_its_key_and_no_cookie(continuation):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    response = strict.post(entry(continuation.slug), PROLIFIC)
    assert response.status_code == 403 and b"expired" in response.content
    assert not Assignment.objects.exists()
    key = _form_key(strict.get(entry(continuation.slug), PROLIFIC).content.decode())
    # A key made for another participant does not start this one.
    someone_else = {**PROLIFIC, "PROLIFIC_PID": prolific_pid("someone-else")}
    other = _form_key(strict.get(entry(continuation.slug), someone_else).content.decode())
    assert strict.post(entry(continuation.slug), {**PROLIFIC, "form_key": other}).status_code == 403
    # A browser that stores no cookie at all (a cross-site frame) still starts.
    cookieless = Client(enforce_csrf_checks=True)
    response = cookieless.post(entry(continuation.slug), {**PROLIFIC, "form_key": key})
    assert response.status_code == 302
    assert "csrftoken" not in cookieless.cookies


MTURK_ANCESTORS = "frame-ancestors 'self' https://www.mturk.com https://workersandbox.mturk.com"


def test_only_mturk_may_frame_the_worker_pages(client, continuation):
    params = {"workerId": mturk_worker_id("A1"), "assignmentId": "3X", "hitId": "H",
              "turkSubmitTo": "https://www.mturk.com"}
    response = client.get(entry(continuation.slug), params)
    assert "X-Frame-Options" not in response.headers
    assert MTURK_ANCESTORS in response.headers["Content-Security-Policy"]
    assignment = start(client, continuation, params=params)
    assert MTURK_ANCESTORS in client.get(item_url(assignment)).headers["Content-Security-Policy"]


@pytest.mark.parametrize("path", ["/c/no-such-study/", "/a/no-such-token/1/",
                                  "/a/no-such-token/done/"])
def test_worker_error_pages_may_be_framed_by_mturk_too(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert "X-Frame-Options" not in response.headers
    assert MTURK_ANCESTORS in response.headers["Content-Security-Policy"]


def test_worker_pages_refuse_a_form_without_its_key_inside_the_frame_too(continuation):
    from django.test import Client

    response = Client(enforce_csrf_checks=True).post(entry(continuation.slug), PROLIFIC)
    assert response.status_code == 403
    assert "X-Frame-Options" not in response.headers
    assert MTURK_ANCESTORS in response.headers["Content-Security-Policy"]


def test_no_other_page_may_be_framed(client):
    response = client.get("/admin/login/")
    assert response.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
