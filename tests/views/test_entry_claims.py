"""Claims are scarce at the study link: made-up ids, start limits, resuming by platform id.

A platform id is not secret (anyone can type one into the link), so it neither starts work
unless it has the platform's form, nor opens work held by another browser without proof.
"""
import re

import pytest
from django.test import Client
from django.urls import reverse

from campaigns.models import Assignment, Worker
from campaigns.work import assignment_release
from tests.factories import make_campaign, make_items, mturk_worker_id, prolific_pid
from tests.views.conftest import PROLIFIC, VALID_CONTINUATION, item_url

pytestmark = pytest.mark.django_db

TOKEN = re.compile(r"/a/([-\w]+)/")


def entry(campaign):
    return reverse("campaigns:entry", args=[campaign.slug])


def participant(name, session=None):
    return {"PROLIFIC_PID": prolific_pid(name), "STUDY_ID": "study-1",
            "SESSION_ID": session or f"session-{name}"}


@pytest.fixture
def limits_on(settings):
    settings.RATELIMIT_ENABLED = True
    settings.CLAIM_LIMIT_PER_ADDRESS = 3
    settings.CLAIM_LIMIT_PER_WORKER = 2
    settings.CLAIM_LIMIT_PER_STUDY = 100
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
    assert response.status_code == 302
    upper = {**PROLIFIC, "PROLIFIC_PID": PROLIFIC["PROLIFIC_PID"].upper()}
    assert client.post(entry(continuation), upper).status_code == 302
    # Prolific's hex in capitals is the same participant.
    assert Worker.objects.get(platform="prolific").platform_id == PROLIFIC["PROLIFIC_PID"]


# --- start limits ---------------------------------------------------------------------------

def test_one_address_starts_a_few_times_then_gets_a_clear_429_and_nothing_is_created(
        client, continuation, limits_on):
    statuses = [client.post(entry(continuation), participant(f"p{n}")).status_code
                for n in range(5)]
    assert statuses == [302, 302, 302, 429, 429]
    response = client.post(entry(continuation), participant("p9"))
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 60  # the start window is minutes, not the page's
    html = response.content.decode()
    assert "Too many new starts of this study" in html and "no work was handed out" in html
    assert Worker.objects.count() == 3 and Assignment.objects.count() == 3
    # Another address is not affected; nor is the first address on another study.
    assert client.post(entry(continuation), participant("p9"),
                       REMOTE_ADDR="198.51.100.7").status_code == 302
    other = make_campaign(owner=continuation.owner, slug="other-study")
    make_items(other, 2)
    assert client.post(entry(other), participant("p9")).status_code == 302


def test_a_plain_link_cookie_is_limited_too(client, owner, limits_on):
    """One browser (one cookie) that gets its work given back and starts again and again."""
    campaign = make_campaign(owner=owner, items_per_assignment=1)
    make_items(campaign, 5)
    for _ in range(2):
        response = client.post(entry(campaign))
        assert response.status_code == 302
        assert assignment_release(assignment_id=Assignment.objects.latest("id").pk)
    response = client.post(entry(campaign))
    assert response.status_code == 429
    assert Assignment.objects.count() == 2
    # Dropping the cookie makes a newcomer each time, and newcomers count per address.
    assert Client().post(entry(campaign)).status_code == 302
    assert Client().post(entry(campaign)).status_code == 302
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
        assert response.status_code == 302
        assert client.post(response["Location"], VALID_CONTINUATION).status_code == 302
    assert Assignment.objects.filter(status="submitted").count() == 6


def test_a_study_is_limited_from_everywhere(client, continuation, limits_on):
    limits_on.CLAIM_LIMIT_PER_STUDY = 2
    statuses = [client.post(entry(continuation), participant(f"p{n}"),
                            REMOTE_ADDR=f"203.0.113.{n}").status_code for n in range(3)]
    assert statuses == [302, 302, 429]


def test_coming_back_by_the_link_is_not_a_start(client, continuation, limits_on):
    limits_on.CLAIM_LIMIT_PER_ADDRESS = 2
    first = client.post(entry(continuation), PROLIFIC)["Location"]
    assert client.post(entry(continuation), PROLIFIC)["Location"] == first  # a double click
    for _ in range(5):
        assert client.get(entry(continuation), PROLIFIC)["Location"] == first


# --- resuming by platform id ----------------------------------------------------------------

@pytest.fixture
def victim(client, continuation):
    """A Prolific participant who started in their own browser (`client`)."""
    response = client.post(entry(continuation), participant("victim"))
    assert response.status_code == 302
    return Assignment.objects.get(token=TOKEN.search(response["Location"])[1])


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
    assert response["Location"] == item_url(victim, 1)


def test_the_platforms_session_id_resumes_from_a_new_browser(continuation, victim):
    new_browser = Client()
    response = new_browser.get(entry(continuation), participant("victim"))
    assert response["Location"] == item_url(victim, 1)
    # ... and that browser is the owner from then on.
    assert new_browser.get(entry(continuation), {"PROLIFIC_PID": prolific_pid("victim")}
                           )["Location"] == item_url(victim, 1)


def test_a_submitted_assignments_code_needs_the_same_proof(client, continuation, victim):
    for position in (1, 2, 3):
        client.post(item_url(victim, position), VALID_CONTINUATION)
    victim.refresh_from_db()
    assert victim.status == "submitted"
    done = reverse("campaigns:done", args=[victim.token])
    assert client.get(entry(continuation), participant("victim"))["Location"] == done
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
    location = Client().post(entry(continuation), hit)["Location"]
    assert Client().get(entry(continuation), hit)["Location"] == location
    stranger = Client().get(entry(continuation), {**hit, "assignmentId": "3GUESS"})
    assert stranger.status_code == 403
