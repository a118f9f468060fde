"""Fixtures for the worker-page tests: no rate limits, helpers to start and answer."""
import re

import pytest
from django.urls import reverse

from campaigns.models import Assignment, Item
from tests.factories import (
    RUBRIC_SCHEMA,
    SUMMARY_SCHEMA,
    TRANSLATION_SCHEMA,
    make_campaign,
    make_items,
)

PROLIFIC = {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "study-1",
            "SESSION_ID": "session-1"}


@pytest.fixture(autouse=True)
def _no_rate_limits(settings):
    settings.RATELIMIT_ENABLED = False


def start(client, campaign, params=None, **extra) -> Assignment:
    """Start as a Prolific worker (or `params`) and return the claimed assignment."""
    params = PROLIFIC if params is None else params
    response = client.post(reverse("campaigns:entry", args=[campaign.slug]),
                           {**params, **extra})
    assert response.status_code == 200, response.content.decode()[:2000]
    token = page_url(response).split("/")[2]
    return Assignment.objects.get(token=token)


PAGE_URL = re.compile(r'<body data-page-url="([^"]+)"')


def page_url(response) -> str:
    """Where a worker POST took the worker: the address of the page it answered with (the
    page names it for the address bar), or a redirect's target."""
    if response.status_code in (301, 302, 303):
        return response["Location"]
    match = PAGE_URL.search(response.content.decode())
    assert match, f"no page address in a {response.status_code} answer"
    return match.group(1)


def item_url(assignment, position=1):
    return reverse("campaigns:item", args=[assignment.token, position])


VALID_CONTINUATION = {"q-coherence": "4", "q-sentiment": "2", "q-feedback": "fine"}


@pytest.fixture
def continuation(owner):
    campaign = make_campaign(owner=owner, items_per_assignment=3, slug="continuation")
    make_items(campaign, 5)
    return campaign


@pytest.fixture
def summary_campaign(owner):
    campaign = make_campaign(owner=owner, schema=SUMMARY_SCHEMA, slug="summaries")
    Item.objects.create(campaign=campaign, external_id="s1", slots_wanted=3, data={
        "story": "Tom went out. It rained.",
        "summary": ["Tom went out.", "It was sunny.", "A vivid story."]})
    return campaign


@pytest.fixture
def rubric_campaign(owner):
    campaign = make_campaign(owner=owner, schema=RUBRIC_SCHEMA, slug="rubric")
    Item.objects.create(campaign=campaign, external_id="r1", slots_wanted=3,
                        data={"answer": "Laptops are portable.\nBest option: laptop"})
    return campaign


@pytest.fixture
def translation_campaign(owner):
    campaign = make_campaign(owner=owner, schema=TRANSLATION_SCHEMA, slug="translation",
                             completion_mode="fixed", completion_code="C7Q2M4TA",
                             completion_redirect_url="https://app.prolific.com/submissions/complete?cc={code}")
    Item.objects.create(campaign=campaign, external_id="t1", slots_wanted=3,
                        data={"source": "Der Hund.", "translation": "The dog."})
    return campaign
