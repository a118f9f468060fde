"""The study link /c/<slug>/: platforms, consent, intake, resuming, closed campaigns; claims kept
scarce; the platform round trip (Prolific's links and codes, honest ends)."""
import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from campaigns.models import Assignment, Campaign, Item, Worker
from campaigns.work import assignment_claim, assignment_release, worker_get_or_create
from tests.factories import make_campaign, make_items, mturk_worker_id, prolific_pid
from tests.views.conftest import PROLIFIC, VALID_CONTINUATION, item_url, page_url, start

pytestmark = pytest.mark.django_db


# The study link /c/<slug>/: platforms, consent, intake, resuming, closed campaigns.


INTAKE = [
    {"id": "age", "kind": "choice", "text": "Your age",
     "options": [{"value": "18-24", "label": "18-24"}, {"value": "25-34", "label": "25-34"}]},
    {"id": "language_region", "kind": "text", "text": "Language Region", "multiline": False},
]


def entry(campaign_or_slug):
    """The study link of a campaign (or of its slug)."""
    slug = getattr(campaign_or_slug, "slug", campaign_or_slug)
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
    assert page_url(response) == item_url(assignment, 1)
    assert assignment.worker.platform == "prolific"
    assert assignment.worker.platform_id == PROLIFIC["PROLIFIC_PID"]
    assert (assignment.study_id, assignment.session_id) == ("study-1", "session-1")


def test_the_start_answers_with_the_first_item_itself(client, continuation):
    """No redirect and GET between the claim and the first item: the start POST's answer is
    the item page, which names its address for the address bar and posts to it."""
    response = client.post(entry(continuation.slug), PROLIFIC)
    assignment = Assignment.objects.get()
    html = response.content.decode()
    assert response.status_code == 200 and "Item 1 of 3" in html
    assert f'action="{item_url(assignment, 1)}"' in html
    assert f'data-page-url="{item_url(assignment, 1)}"' in html


def test_the_start_shows_the_first_item_the_claim_read(client, continuation):
    """The claim's call brings the first item: no read of the assignment's page after it,
    and the page is the one a GET of the first item shows."""
    with CaptureQueriesContext(connection) as queries:
        response = client.post(entry(continuation.slug), PROLIFIC)
    assignment = Assignment.objects.get()
    assert not [q for q in queries.captured_queries if "a.token" in q["sql"]]
    first = assignment.slots.get(position=1).item
    html = response.content.decode()
    assert first.data["completion"] in html and "Item 1 of 3" in html
    again = client.get(item_url(assignment, 1)).content.decode()
    assert _stable(html) == _stable(again)


def _stable(html: str) -> str:
    """A page without its per-request values (the form key, the page timer) and without what
    only a POST's answer has (its own address for the address bar)."""
    html = re.sub(r'name="(form_key|started)" value="[^"]*"', "", html)
    html = re.sub(r' data-page-url="[^"]*"', "", html)
    return html.replace('<script src="/static/campaigns/address.js"></script>', "")


def test_get_never_claims_work(client, continuation):
    client.get(entry(continuation.slug), PROLIFIC)
    assert not Assignment.objects.exists()


def test_the_same_prolific_id_resumes_the_open_assignment(client, continuation):
    assignment = start(client, continuation)
    client.post(item_url(assignment), {"q-coherence": "3", "q-sentiment": "3"})
    other_browser = client.__class__()
    response = other_browser.get(entry(continuation.slug), PROLIFIC)
    assert response.status_code == 302
    assert page_url(response) == item_url(assignment, 2)
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
    assert response.status_code == 302 and page_url(response) == item_url(assignment, 1)
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
    assert page_url(response) == reverse("campaigns:done", args=[assignment.token])
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
    assert page_url(response) == reverse("campaigns:done", args=[assignment.token])
    # The same participant starting again gets their done page (the same code) ...
    response = client.post(entry(continuation.slug), PROLIFIC)
    assert page_url(response) == reverse("campaigns:done", args=[assignment.token])
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
    assert response.status_code == 200
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


# Claims are scarce at the study link: made-up ids, start limits, resuming by platform id.


TOKEN = re.compile(r"/a/([-\w]+)/")


def participant(name, session=None):
    return {"PROLIFIC_PID": prolific_pid(name), "STUDY_ID": "study-1",
            "SESSION_ID": session or f"session-{name}"}


@pytest.fixture
def limits_on(settings):
    settings.RATELIMIT_ENABLED = True
    settings.CLAIM_LIMIT_PER_ADDRESS = 3
    settings.CLAIM_LIMIT_PER_WORKER = 2
    settings.CLAIM_LIMIT_PER_STUDY = 100
    # The fixed limits above, whatever the study's size (tests/http/test_ratelimit.py has the
    # limits that scale with it).
    settings.CLAIM_SHARE_PER_ADDRESS = settings.CLAIM_SHARE_REPEAT = 1000.0
    return settings


# --- platform id shapes ---------------------------------------------------------------------

@pytest.mark.parametrize("pid", ["hoarder-1", "5f1a2b3c4d5e6f7a8b9c0d1",
                                 "5f1a2b3c4d5e6f7a8b9c0d1e0", "zz1a2b3c4d5e6f7a8b9c0d1e", "P2"])
def test_a_made_up_prolific_id_is_refused_and_starts_nothing(client, continuation, pid):
    params = {**PROLIFIC, "PROLIFIC_PID": pid}
    for response in (client.get(entry(continuation), params),
                     client.post(entry(continuation), params)):
        assert response.status_code == 400
        html = response.content.decode()
        assert "Prolific ID is not valid" in html and "PROLIFIC_PID" in html
    assert not Worker.objects.exists() and not Assignment.objects.exists()


@pytest.mark.parametrize("worker_id", ["A1", "B1234567890123", "A12345678901", "a1234567890123",
                                       "A1234567890123456789012", "A123456789012-"])
def test_a_made_up_mturk_worker_id_is_refused_and_starts_nothing(client, continuation,
                                                                 worker_id):
    params = {"workerId": worker_id, "assignmentId": "3X", "hitId": "H",
              "turkSubmitTo": "https://www.mturk.com"}
    response = client.post(entry(continuation), params)
    assert response.status_code == 400
    assert "Mechanical Turk ID is not valid" in response.content.decode()
    assert not Worker.objects.exists() and not Assignment.objects.exists()


@pytest.mark.parametrize("platform_id", ["A1234567890123", "A12345678901234567890",
                                         "A3KL5EXAMPLE01"])
def test_ids_in_the_platforms_form_start(client, continuation, platform_id):
    response = client.post(entry(continuation), {"workerId": platform_id, "assignmentId": "3X",
                                                 "hitId": "H"})
    assert response.status_code == 200
    upper = {**PROLIFIC, "PROLIFIC_PID": PROLIFIC["PROLIFIC_PID"].upper()}
    assert client.post(entry(continuation), upper).status_code == 200
    # Prolific's hex in capitals is the same participant.
    assert Worker.objects.get(platform="prolific").platform_id == PROLIFIC["PROLIFIC_PID"]


# --- start limits ---------------------------------------------------------------------------

def test_one_address_starts_a_few_times_then_gets_a_clear_429_and_nothing_is_created(
        client, continuation, limits_on):
    statuses = [client.post(entry(continuation), participant(f"p{n}")).status_code
                for n in range(5)]
    assert statuses == [200, 200, 200, 429, 429]
    response = client.post(entry(continuation), participant("p9"))
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 60  # the start window is minutes, not the page's
    html = response.content.decode()
    assert "Too many new starts of this study" in html and "no work was handed out" in html
    assert Worker.objects.count() == 3 and Assignment.objects.count() == 3
    # Another address is not affected; nor is the first address on another study.
    assert client.post(entry(continuation), participant("p9"),
                       REMOTE_ADDR="198.51.100.7").status_code == 200
    other = make_campaign(owner=continuation.owner, slug="other-study")
    make_items(other, 2)
    assert client.post(entry(other), participant("p9")).status_code == 200


def test_a_plain_link_cookie_is_limited_too(client, owner, limits_on):
    """One browser (one cookie) that gets its work given back and starts again and again."""
    campaign = make_campaign(owner=owner, items_per_assignment=1)
    make_items(campaign, 5)
    for _ in range(2):
        response = client.post(entry(campaign))
        assert response.status_code == 200
        assert assignment_release(assignment_id=Assignment.objects.latest("id").pk)
    response = client.post(entry(campaign))
    assert response.status_code == 429
    assert Assignment.objects.count() == 2
    # Dropping the cookie makes a newcomer each time, and newcomers count per address.
    assert Client().post(entry(campaign)).status_code == 200
    assert Client().post(entry(campaign)).status_code == 200
    assert Client().post(entry(campaign)).status_code == 429
    assert Assignment.objects.count() == 4


def test_a_returning_worker_doing_many_assignments_is_not_held_to_the_newcomer_limit(
        client, owner, limits_on):
    limits_on.CLAIM_LIMIT_PER_ADDRESS = 1
    limits_on.CLAIM_LIMIT_PER_WORKER = 10
    campaign = make_campaign(owner=owner, items_per_assignment=1, annotations_per_item=1)
    make_items(campaign, 6)
    for _ in range(6):  # one-item assignments, one after another
        response = client.post(entry(campaign))
        assert response.status_code == 200
        assert client.post(page_url(response), VALID_CONTINUATION).status_code == 200
    assert Assignment.objects.filter(status="submitted").count() == 6


def test_a_study_is_limited_from_everywhere(client, continuation, limits_on):
    limits_on.CLAIM_LIMIT_PER_STUDY = 2
    statuses = [client.post(entry(continuation), participant(f"p{n}"),
                            REMOTE_ADDR=f"203.0.113.{n}").status_code for n in range(3)]
    assert statuses == [200, 200, 429]


def test_coming_back_by_the_link_is_not_a_start(client, continuation, limits_on):
    limits_on.CLAIM_LIMIT_PER_ADDRESS = 2
    first = page_url(client.post(entry(continuation), PROLIFIC))
    assert page_url(client.post(entry(continuation), PROLIFIC)) == first  # a double click
    for _ in range(5):
        assert page_url(client.get(entry(continuation), PROLIFIC)) == first


# --- resuming by platform id ----------------------------------------------------------------

@pytest.fixture
def victim(client, continuation):
    """A Prolific participant who started in their own browser (`client`)."""
    response = client.post(entry(continuation), participant("victim"))
    assert response.status_code == 200
    return Assignment.objects.get(token=TOKEN.search(page_url(response))[1])


def test_a_platform_id_alone_does_not_open_someone_elses_assignment(continuation, victim):
    attacker = Client()
    for params in ({"PROLIFIC_PID": prolific_pid("victim")},
                   participant("victim", session="guessed-session")):
        for response in (attacker.get(entry(continuation), params),
                         attacker.post(entry(continuation), params)):
            assert response.status_code == 403
            html = response.content.decode()
            assert victim.token not in html and "Location" not in response
            assert "Please continue where you started" in html
    victim.refresh_from_db()
    assert victim.session_id == "session-victim"  # nothing was overwritten
    assert Assignment.objects.count() == 1


def test_the_original_browser_resumes_without_any_proof(client, continuation, victim):
    response = client.get(entry(continuation), {"PROLIFIC_PID": prolific_pid("victim")})
    assert page_url(response) == item_url(victim, 1)


def test_the_platforms_session_id_resumes_from_a_new_browser(continuation, victim):
    new_browser = Client()
    response = new_browser.get(entry(continuation), participant("victim"))
    assert page_url(response) == item_url(victim, 1)
    # ... and that browser is the owner from then on.
    assert page_url(new_browser.get(entry(continuation), {"PROLIFIC_PID": prolific_pid("victim")}
                                    )) == item_url(victim, 1)


def test_a_submitted_assignments_code_needs_the_same_proof(client, continuation, victim):
    for position in (1, 2, 3):
        client.post(item_url(victim, position), VALID_CONTINUATION)
    victim.refresh_from_db()
    assert victim.status == "submitted"
    done = reverse("campaigns:done", args=[victim.token])
    assert page_url(client.get(entry(continuation), participant("victim"))) == done
    attacker = Client()
    for response in (attacker.get(entry(continuation), {"PROLIFIC_PID": prolific_pid("victim")}),
                     attacker.post(entry(continuation), {"PROLIFIC_PID": prolific_pid("victim")})):
        assert response.status_code == 403
        assert victim.token not in response.content.decode()
        assert victim.completion_code not in response.content.decode()


def test_mturk_resumes_with_the_same_assignment_id_only(continuation):
    hit = {"workerId": mturk_worker_id("w"), "assignmentId": "3FIRST", "hitId": "H",
           "turkSubmitTo": "https://www.mturk.com"}
    # Inside MTurk's cross-site frame no cookie is kept: every request is a new browser.
    location = page_url(Client().post(entry(continuation), hit))
    assert page_url(Client().get(entry(continuation), hit)) == location
    stranger = Client().get(entry(continuation), {**hit, "assignmentId": "3GUESS"})
    assert stranger.status_code == 403


# The platform round trip: the same participant, Prolific's links and codes, honest ends.


PROLIFIC_URL = "https://app.prolific.com/submissions/complete?cc={code}"


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
    assert page_url(client.get(entry(campaign), p1)) == done(first)
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
    assert page_url(client.get(entry(continuation), hit)) == done(first)
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
