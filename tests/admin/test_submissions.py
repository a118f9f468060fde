"""The submissions admin page: the list, its downloads, scoping, and sending to Prolific."""
import csv
import io
import json

import pytest
from django.urls import reverse

from campaigns.models import Campaign
from tests.selectors.test_approvals import PLAN, _study
from tests.services.test_prolific import APPROVE, BONUS, prolific  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


def _url(campaign):
    return reverse("admin:campaigns_campaign_submissions", args=[campaign.pk])


def test_the_page_lists_every_submission_with_its_suggested_action(researcher_client, researcher):
    campaign = _study(researcher)
    page = researcher_client.get(_url(campaign)).content.decode()
    assert f"{len(PLAN)} submissions: 10 to approve, 3 to review," in page
    assert "reject (FAILED_CHECK)" in page and "reject (TOO_QUICKLY)" in page
    assert "prolific: p-ok3" in page and "sess-p-ok3" in page


def test_the_downloads_hold_the_list_and_prolifics_files(researcher_client, researcher):
    campaign = _study(researcher)
    listed = researcher_client.get(_url(campaign) + "?download=csv")
    assert listed["Content-Type"].startswith("text/csv")
    assert len(list(csv.DictReader(io.StringIO(listed.content.decode())))) == len(PLAN)
    body = json.loads(researcher_client.get(_url(campaign) + "?download=json").content)
    assert body["campaign"] == campaign.slug and len(body["submissions"]) == len(PLAN)
    bonus = researcher_client.get(_url(campaign) + "?download=bonus").content.decode()
    assert "p-ok1,0.90\n" in bonus and "p-attention" not in bonus
    assert researcher_client.get(_url(campaign) + "?download=zip").status_code == 400


def test_another_researcher_cannot_see_the_list(other_client, researcher):
    campaign = _study(researcher)
    assert other_client.get(_url(campaign)).status_code in (302, 404)
    assert other_client.get(_url(campaign) + "?download=csv").status_code in (302, 404)


def test_sending_uses_the_typed_token_once_and_stores_nothing(researcher_client, researcher,
                                                              prolific, settings):  # noqa: F811
    settings.PROLIFIC_API_URL = prolific.url
    campaign = _study(researcher)
    response = researcher_client.post(_url(campaign), {"token": "typed-tok", "approve": "on",
                                                       "bonus": "on"})
    assert response.status_code == 302
    assert [r["path"] for r in prolific.requests][:2] == [APPROVE, BONUS]
    assert {r["auth"] for r in prolific.requests} == {"Token typed-tok"}
    stored = json.dumps(list(Campaign.objects.filter(pk=campaign.pk).values()), default=str)
    assert "typed-tok" not in stored


def test_sending_nothing_is_refused_without_a_request(researcher_client, researcher, prolific,  # noqa: F811
                                                      settings):
    settings.PROLIFIC_API_URL = prolific.url
    response = researcher_client.post(_url(_study(researcher)), {"token": "t"})
    assert response.status_code == 400 and prolific.requests == []
    assert "Choose approvals, bonuses or both." in response.content.decode()


def test_screened_out_participants_are_listed_with_their_rule_and_intake_only(
        researcher_client, researcher):
    from django.utils import timezone

    from campaigns.models import Worker
    campaign = _study(researcher)
    Worker.objects.create(campaign=campaign, platform="prolific", platform_id="p-minor",
                          intake={"adult": "no"}, screened_out_at=timezone.now(),
                          screened_out_reason="ineligible:adult")
    page = researcher_client.get(_url(campaign)).content.decode()
    assert "Screened out (1)" in page
    assert "prolific: p-minor" in page and "ineligible:adult" in page and "adult = no" in page
    assert f"{len(PLAN)} submissions:" in page  # not counted as a submission
