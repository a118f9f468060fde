"""The admin's platform setup: Prolific link builder, warnings, release, places to open."""
import pytest
from django.urls import reverse

from campaigns.models import Assignment, Item
from campaigns.work import assignment_claim, worker_get_or_create
from tests.factories import make_campaign, make_items

pytestmark = pytest.mark.django_db


def test_the_link_builder_shows_the_study_url_and_each_completion_url(researcher_client, owner,
                                                                      settings):
    settings.SITE_URL = "https://annotate.example.org"
    campaign = make_campaign(owner=owner, slug="study", recruitment="prolific",
                             completion_mode="fixed", completion_code="C0DE1",
                             completion_code_failed_checks="FAIL1",
                             attention_checks_per_assignment=2, completion_code_no_work="NW1")
    html = researcher_client.get(
        reverse("admin:campaigns_campaign_change", args=[campaign.pk])).content.decode()
    assert ("https://annotate.example.org/c/study/?PROLIFIC_PID={{%PROLIFIC_PID%}}"
            "&amp;STUDY_ID={{%STUDY_ID%}}&amp;SESSION_ID={{%SESSION_ID%}}") in html
    for code in ("C0DE1", "FAIL1", "NW1"):
        assert f"https://app.prolific.com/submissions/complete?cc={code}" in html
    assert "manual review" not in html


def test_a_prolific_campaign_with_per_assignment_codes_is_warned_about(researcher_client, owner):
    campaign = make_campaign(owner=owner, recruitment="prolific")
    url = reverse("admin:campaigns_campaign_change", args=[campaign.pk])
    assert "manual review" in researcher_client.get(url).content.decode()
    plain = make_campaign(owner=owner)
    assert "manual review" not in researcher_client.get(
        reverse("admin:campaigns_campaign_change", args=[plain.pk])).content.decode()


def test_the_release_action_frees_an_abandoned_assignment(researcher_client, owner):
    campaign = make_campaign(owner=owner, items_per_assignment=2, annotations_per_item=1)
    make_items(campaign, 2)
    worker = worker_get_or_create(campaign=campaign, platform="link", platform_id="w")
    assignment = assignment_claim(campaign=campaign, worker=worker)
    response = researcher_client.post(reverse("admin:campaigns_assignment_changelist"), {
        "action": "release", "_selected_action": [assignment.pk]}, follow=True)
    assert "1 assignment(s) released" in response.content.decode()
    assert Assignment.objects.get().status == "returned"
    assert set(Item.objects.values_list("slots_taken", flat=True)) == {0}


def test_another_researchers_assignment_cannot_be_released(other_client, owner):
    campaign = make_campaign(owner=owner, items_per_assignment=1)
    make_items(campaign, 1)
    worker = worker_get_or_create(campaign=campaign, platform="link", platform_id="w")
    assignment = assignment_claim(campaign=campaign, worker=worker)
    other_client.post(reverse("admin:campaigns_assignment_changelist"), {
        "action": "release", "_selected_action": [assignment.pk]})
    assert Assignment.objects.get().status == "active"


def test_the_dashboard_shows_places_to_open_on_the_platform(researcher_client, owner):
    campaign = make_campaign(owner=owner, items_per_assignment=4, annotations_per_item=3)
    make_items(campaign, 10)
    html = researcher_client.get(
        reverse("admin:campaigns_campaign_dashboard", args=[campaign.pk])).content.decode()
    assert 'id="places-to-open"><span class="dash-number">8</span> places to open' in html
