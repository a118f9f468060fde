"""Campaign endpoints: list, create, read, update, change status."""
import copy

import pytest

from campaigns.models import Campaign
from tests.api.conftest import make_items
from tests.factories import CONTINUATION_SCHEMA, PAIRWISE_SCHEMA, make_campaign

pytestmark = pytest.mark.django_db

NEW = {"slug": "new-study", "name": "New study", "schema": CONTINUATION_SCHEMA,
       "annotations_per_item": 2}


def test_it_lists_only_the_campaigns_a_researcher_owns_or_collaborates_on(api, owner,
                                                                          other_owner):
    mine = make_campaign(owner=owner)
    shared = make_campaign(owner=other_owner)
    shared.collaborators.add(owner)
    make_campaign(owner=other_owner)
    response = api.get("/api/campaigns/")
    assert response.status_code == 200
    assert {c["slug"] for c in response.json()["results"]} == {mine.slug, shared.slug}


@pytest.mark.parametrize("page_size", [1, 20])
def test_the_campaign_list_runs_the_same_queries_whatever_the_page_size(
        api, owner, other_owner, django_assert_num_queries, page_size):
    for _ in range(20):
        make_campaign(owner=owner).collaborators.add(other_owner)
    # token + user, the page, its collaborators
    with django_assert_num_queries(3):
        response = api.get(f"/api/campaigns/?page_size={page_size}")
    assert len(response.json()["results"]) == page_size


def test_it_creates_a_draft_campaign_owned_by_the_caller(api, owner):
    response = api.post("/api/campaigns/", NEW, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["slug"] == "new-study" and body["owner"] == "alice"
    assert body["status"] == "draft" and body["annotations_per_item"] == 2
    assert Campaign.objects.get(slug="new-study").owner == owner


def test_a_schema_error_names_its_json_path(api):
    schema = copy.deepcopy(CONTINUATION_SCHEMA)
    schema["questions"][0]["points"] = "five"
    response = api.post("/api/campaigns/", {**NEW, "schema": schema}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["extra"]["code"] == "schema_invalid"
    assert "schema.questions[0].points" in [e["path"] for e in body["extra"]["errors"]]
    assert not Campaign.objects.filter(slug="new-study").exists()


def test_a_missing_field_is_a_400_naming_the_field(api):
    response = api.post("/api/campaigns/", {"slug": "x"}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert set(body) == {"message", "extra"}
    assert {"name", "schema"} <= set(body["extra"]["fields"])


def test_a_taken_slug_is_a_conflict(api, other_owner):
    make_campaign(owner=other_owner, slug="new-study")
    response = api.post("/api/campaigns/", NEW, format="json")
    assert response.status_code == 409
    assert response.json()["extra"] == {"code": "conflict", "field": "slug"}


@pytest.mark.parametrize("status", ["draft", "live", "paused", "closed"])
def test_a_taken_slug_answers_the_same_whoever_holds_it(api, owner, other_owner, status):
    """Another researcher's campaign is not revealed: no "already exists", no state, and the
    very answer the caller gets for a slug of their own."""
    make_campaign(owner=other_owner, slug="theirs", status=status)
    make_campaign(owner=owner, slug="mine", status=status)
    theirs = api.post("/api/campaigns/", {**NEW, "slug": "theirs"}, format="json")
    mine = api.post("/api/campaigns/", {**NEW, "slug": "mine"}, format="json")
    assert (theirs.status_code, mine.status_code) == (409, 409)
    assert theirs.json() == mine.json() == {
        "message": "This slug is not available; choose another.",
        "extra": {"code": "conflict", "field": "slug"}}


def test_a_nul_character_in_the_schema_is_refused_before_the_database(api):
    schema = copy.deepcopy(CONTINUATION_SCHEMA)
    schema["questions"][0]["text"] = "Coherent?\u0000"
    response = api.post("/api/campaigns/", {**NEW, "schema": schema}, format="json")
    assert response.status_code == 400
    assert "NUL" in response.json()["message"]


def test_it_reads_a_campaign(api, campaign):
    response = api.get(f"/api/campaigns/{campaign.slug}/")
    assert response.status_code == 200
    assert response.json()["schema"] == campaign.schema


def test_an_update_changes_only_the_given_settings_and_applies_a_new_k(api, campaign):
    items = make_items(campaign, 2)
    response = api.patch(f"/api/campaigns/{campaign.slug}/",
                         {"name": "Renamed", "annotations_per_item": 5}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["name"] == "Renamed"
    assert response.json()["description"] == campaign.description
    items[0].refresh_from_db()
    assert items[0].slots_wanted == 5


def test_an_update_with_a_bad_intake_question_names_its_path(api, campaign):
    response = api.patch(f"/api/campaigns/{campaign.slug}/",
                         {"intake_questions": [{"id": "age", "kind": "nope", "text": "Age"}]},
                         format="json")
    assert response.status_code == 400
    assert response.json()["extra"]["errors"][0]["path"].startswith("intake_questions[0]")


ADULT = {"id": "adult", "kind": "choice", "text": "Are you 18 or older?",
         "options": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]}


def test_screening_rules_and_their_code_are_stored_and_a_bad_rule_named_by_path(api, campaign):
    rules = [{**ADULT, "eligible": ["yes"], "quota": {"yes": 30}}]
    response = api.patch(f"/api/campaigns/{campaign.slug}/",
                         {"intake_questions": rules, "completion_code_screened_out": "SCR1"},
                         format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["intake_questions"] == rules
    assert response.json()["completion_code_screened_out"] == "SCR1"
    response = api.patch(f"/api/campaigns/{campaign.slug}/",
                         {"intake_questions": [{**ADULT, "eligible": ["maybe"]}]},
                         format="json")
    assert response.status_code == 400
    assert response.json()["extra"]["errors"] == [
        {"path": "intake_questions[0].eligible[0]",
         "message": "'maybe' is not an answer to this question"}]


def test_the_status_action_pauses_a_campaign(api, campaign):
    response = api.post(f"/api/campaigns/{campaign.slug}/status/", {"status": "paused"},
                        format="json")
    assert response.status_code == 200
    campaign.refresh_from_db()
    assert campaign.status == "paused"


def test_an_unknown_status_is_a_400(api, campaign):
    response = api.post(f"/api/campaigns/{campaign.slug}/status/", {"status": "gone"},
                        format="json")
    assert response.status_code == 400
    assert "status" in response.json()["extra"]["fields"]


def test_a_collaborator_may_change_a_shared_campaign(other_api, campaign, other_owner):
    campaign.collaborators.add(other_owner)
    response = other_api.patch(f"/api/campaigns/{campaign.slug}/", {"name": "Ours"},
                               format="json")
    assert response.status_code == 200


def test_duplicating_onto_another_researchers_slug_answers_the_same_neutral_409(
        api, owner, other_owner):
    mine = make_campaign(owner=owner, slug="mine")
    make_campaign(owner=other_owner, slug="theirs", status="draft")
    response = api.post("/api/campaigns/mine/duplicate/", {"slug": "theirs"}, format="json")
    assert response.status_code == 409
    assert response.json()["message"] == "This slug is not available; choose another."
    assert Campaign.objects.filter(slug="theirs").count() == 1
    assert not Campaign.objects.filter(owner=owner).exclude(pk=mine.pk).exists()


def test_the_worker_pages_language_is_a_bcp47_tag(api, campaign):
    response = api.patch(f"/api/campaigns/{campaign.slug}/",
                         {"language": "zh-Hans", "language_from_browser": True}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["language"] == "zh-Hans"
    response = api.patch(f"/api/campaigns/{campaign.slug}/", {"language": "German!"},
                         format="json")
    assert response.status_code == 400
    assert response.json()["extra"]["errors"] == [
        {"path": "language", "message": "expected a BCP 47 language code such as de, ar or "
                                        "zh-Hans"}]


def test_a_minimum_of_0_per_item_is_taken_under_adaptive_ranking_and_refused_otherwise(api,
                                                                                       owner):
    pairwise = make_campaign(owner=owner, schema=PAIRWISE_SCHEMA)
    response = api.patch(f"/api/campaigns/{pairwise.slug}/",
                         {"allocation": "dynamic_redundancy", "min_annotations_per_item": 0},
                         format="json")
    assert response.status_code == 400
    assert response.json()["extra"]["errors"][0]["path"] == "min_annotations_per_item"
    pairwise.refresh_from_db()
    assert (pairwise.allocation, pairwise.min_annotations_per_item) == ("uniform", None)
    response = api.patch(f"/api/campaigns/{pairwise.slug}/",
                         {"allocation": "adaptive_ranking", "min_annotations_per_item": 0},
                         format="json")
    assert response.status_code == 200, response.json()
    pairwise.refresh_from_db()
    assert (pairwise.allocation, pairwise.min_annotations_per_item) == ("adaptive_ranking", 0)
