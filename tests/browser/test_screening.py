"""Screening in Chromium: an ineligible Prolific participant from the study link to Prolific's
screened-out return (the navigation intercepted) with nothing claimed, and a quota filled by
participants pressing Start at the same moment in separate browsers, without overshoot.
"""
import hashlib

import pytest
from django.contrib.auth import get_user_model

from campaigns.models import Assignment, Campaign, Item, Worker
from campaigns.services.seeds import seed_campaigns_load
from tests.browser.axe import assert_accessible

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

COMPLETE = "https://app.prolific.com/submissions/complete"
ADULT = {"id": "adult", "kind": "choice", "text": "Are you 18 or older?", "eligible": ["yes"],
         "options": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]}
L1 = {"id": "l1", "kind": "choice", "text": "Your first language",
      "options": [{"value": "de", "label": "German"}, {"value": "fr", "label": "French"}],
      "quota": {"de": 2, "fr": 2}}


def pid(name):
    return hashlib.sha256(name.encode()).hexdigest()[:24]


def link(live_server, name):
    return (f"{live_server.url}/c/movie-continuation/?PROLIFIC_PID={pid(name)}"
            f"&STUDY_ID=study-9&SESSION_ID=session-{name}")


@pytest.fixture
def movie(db):
    owner = get_user_model().objects.create_user("seed-owner")
    (campaign, _), = seed_campaigns_load(owner=owner, slugs=("movie-continuation",))
    return campaign


@pytest.fixture
def prolific_visits(page):
    visits = []

    def fulfil(route):
        visits.append(route.request.url)
        route.fulfill(status=200, content_type="text/html",
                      body="<!doctype html><title>Prolific</title><p>Screened out</p>")
    page.route(f"{COMPLETE}*", fulfil)
    return visits


def test_an_ineligible_prolific_participant_is_returned_with_the_screened_out_code(
        page, live_server, movie, prolific_visits):
    Campaign.objects.filter(pk=movie.pk).update(
        intake_questions=[ADULT], recruitment="prolific", completion_code_screened_out="SCR42")
    entry = link(live_server, "minor")
    page.goto(entry)
    page.get_by_label("No").check()
    with page.expect_navigation():
        page.locator("button[data-submit]").click()
    assert page.locator("h1").inner_text() == "Thank you for your interest"
    assert page.locator("#screened-out-code").inner_text() == "SCR42"
    assert_accessible(page, "the screened-out page")
    page.wait_for_url(f"{COMPLETE}*", timeout=10_000)  # by itself, after the pause
    assert prolific_visits == [f"{COMPLETE}?cc=SCR42"]
    assert not Assignment.objects.exists()
    assert not Item.objects.filter(slots_taken__gt=0).exists()
    # Coming back (another browser session): the same outcome, nothing claimed.
    page.context.clear_cookies()
    page.goto(entry)
    assert page.locator("#screened-out-code").inner_text() == "SCR42"
    page.wait_for_url(f"{COMPLETE}*", timeout=10_000)
    assert prolific_visits == [f"{COMPLETE}?cc=SCR42"] * 2
    assert not Assignment.objects.exists()
    assert Worker.objects.get().screened_out_reason == "ineligible:adult"


def test_a_quota_fills_under_concurrent_starts_without_overshoot(browser, live_server, movie):
    """Six German speakers press Start together in six browsers; the German quota is 2."""
    Campaign.objects.filter(pk=movie.pk).update(intake_questions=[L1])
    contexts = [browser.new_context() for _ in range(6)]
    try:
        pages = [context.new_page() for context in contexts]
        for n, page in enumerate(pages):
            page.goto(link(live_server, f"de-{n}"))
            page.get_by_label("German").check()
        for page in pages:  # every click sent before any answer comes back
            page.locator("button[data-submit]").click(no_wait_after=True)
        outcomes = []
        for page in pages:
            page.wait_for_function("() => !location.pathname.startsWith('/c/') || "
                                   "document.getElementById('screened-out-message')")
            outcomes.append("started" if "/a/" in page.url else "screened out")
        assert sorted(outcomes) == ["screened out"] * 4 + ["started"] * 2
        assert Assignment.objects.count() == 2
        assert Worker.objects.filter(screened_out_reason="quota:l1").count() == 4
        french = contexts[0].new_page()
        french.goto(link(live_server, "fr-0"))
        french.get_by_label("French").check()
        with french.expect_navigation():
            french.locator("button[data-submit]").click()
        assert "/a/" in french.url  # another answer's quota still has places
    finally:
        for context in contexts:
            context.close()
