"""The campaign admin: publish, pause, close and duplicate as list actions, as buttons and as
services; the platform setup (Prolific link builder, warnings, release, places to open)."""
import pytest
from django.urls import reverse

from campaigns.errors import Conflict, ServiceError
from campaigns.models import Assignment, Campaign, Item
from campaigns.services.campaigns import (
    campaign_close,
    campaign_duplicate,
    campaign_pause,
    campaign_publish,
)
from campaigns.work import assignment_claim, worker_get_or_create
from tests.admin.conftest import add_items
from tests.factories import make_campaign, make_items

pytestmark = pytest.mark.django_db


# Publish, pause, close and duplicate: as list actions, as buttons, and as services.


CHANGELIST = "admin:campaigns_campaign_changelist"


def run_action(client, action, *campaigns, **extra):
    return client.post(reverse(CHANGELIST), {
        "action": action, "_selected_action": [c.pk for c in campaigns], **extra}, follow=True)


def status_of(campaign) -> str:
    campaign.refresh_from_db()
    return campaign.status


def test_the_publish_action_makes_drafts_with_items_live(researcher_client, researcher):
    ready = make_campaign(owner=researcher, status=Campaign.Status.DRAFT)
    add_items(ready)
    empty = make_campaign(owner=researcher, status=Campaign.Status.DRAFT)
    response = run_action(researcher_client, "publish", ready, empty)
    assert status_of(ready) == "live"
    assert status_of(empty) == "draft"
    text = response.content.decode()
    assert "has no items to annotate" in text
    assert "1 campaign(s) published." in text


def test_the_pause_and_close_actions_change_the_status(researcher_client, campaign):
    run_action(researcher_client, "pause", campaign)
    assert status_of(campaign) == "paused"
    page = run_action(researcher_client, "close", campaign)  # Close asks first
    assert status_of(campaign) == "paused"
    assert "Closing is for good" in page.content.decode()
    run_action(researcher_client, "close", campaign, confirm="yes")
    assert status_of(campaign) == "closed"


def test_the_status_buttons_post_to_the_services(researcher_client, campaign):
    url = reverse("admin:campaigns_campaign_status", args=[campaign.pk, "pause"])
    assert researcher_client.get(url).status_code == 405
    response = researcher_client.post(url)
    assert response.status_code == 302
    assert status_of(campaign) == "paused"
    close = reverse("admin:campaigns_campaign_status", args=[campaign.pk, "close"])
    page = researcher_client.post(close)  # a confirmation page that says what closing does
    assert page.status_code == 200 and status_of(campaign) == "paused"
    assert "cannot be published again" in page.content.decode()
    researcher_client.post(close, {"confirm": "yes"})
    assert status_of(campaign) == "closed"
    response = researcher_client.post(reverse("admin:campaigns_campaign_status",
                                              args=[campaign.pk, "publish"]), follow=True)
    assert status_of(campaign) == "closed"
    assert "cannot be published" in response.content.decode()
    bogus = reverse("admin:campaigns_campaign_status", args=[campaign.pk, "explode"])
    assert researcher_client.post(bogus).status_code == 404


def test_status_services_refuse_transitions_that_make_no_sense(owner):
    campaign = make_campaign(owner=owner, status=Campaign.Status.DRAFT)
    with pytest.raises(ServiceError, match="no items"):
        campaign_publish(campaign=campaign)
    with pytest.raises(Conflict):
        campaign_pause(campaign=campaign)
    add_items(campaign)
    assert campaign_publish(campaign=campaign).status == "live"
    assert campaign_pause(campaign=campaign).status == "paused"
    assert campaign_publish(campaign=campaign).status == "live"
    assert campaign_close(campaign=campaign).status == "closed"
    with pytest.raises(Conflict):
        campaign_close(campaign=campaign)
    with pytest.raises(Conflict):
        campaign_publish(campaign=campaign)


def test_publish_refuses_a_campaign_whose_schema_became_invalid(owner):
    campaign = make_campaign(owner=owner, status=Campaign.Status.DRAFT)
    add_items(campaign)
    Campaign.objects.filter(pk=campaign.pk).update(schema={"questions": []})
    campaign.refresh_from_db()
    with pytest.raises(ServiceError, match="cannot be published"):
        campaign_publish(campaign=campaign)


def test_duplicate_copies_schema_and_settings_without_items_or_results(owner, other_owner):
    original = make_campaign(owner=owner, annotations_per_item=5, items_per_assignment=12,
                             instructions="Read me", completion_mode="fixed",
                             completion_code="C0DE")
    original.collaborators.add(other_owner)
    add_items(original)
    copy = campaign_duplicate(campaign=original, owner=other_owner)
    assert copy.pk != original.pk
    assert copy.slug == f"{original.slug}-copy"
    assert copy.status == "draft"
    assert copy.owner == other_owner
    assert (copy.schema, copy.instructions, copy.annotations_per_item,
            copy.items_per_assignment, copy.completion_code) == (
        original.schema, "Read me", 5, 12, "C0DE")
    assert not Item.objects.filter(campaign=copy).exists()
    assert list(copy.collaborators.all()) == [other_owner]
    again = campaign_duplicate(campaign=original, owner=owner)
    assert again.slug == f"{original.slug}-copy-2"


def test_the_duplicate_action_and_button_create_drafts(researcher_client, campaign):
    run_action(researcher_client, "duplicate", campaign)
    assert Campaign.objects.filter(slug=f"{campaign.slug}-copy", status="draft").exists()
    response = researcher_client.post(
        reverse("admin:campaigns_campaign_duplicate", args=[campaign.pk]))
    second = Campaign.objects.get(slug=f"{campaign.slug}-copy-2")
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:campaigns_campaign_change", args=[second.pk])


def test_the_owner_can_delete_a_campaign_with_its_results(researcher_client, campaign):
    from campaigns.models import Annotation
    from tests.admin.simulate import simulate

    add_items(campaign, 2)
    simulate(campaign, workers=1)
    url = reverse("admin:campaigns_campaign_delete", args=[campaign.pk])
    page = researcher_client.get(url)
    assert page.status_code == 200 and b"Annotations: 1" in page.content
    response = researcher_client.post(url, {"post": "yes"})
    assert response.status_code == 302
    assert not Campaign.objects.filter(pk=campaign.pk).exists()
    assert not Annotation.objects.exists()


# The admin's platform setup: Prolific link builder, warnings, release, places to open.


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
