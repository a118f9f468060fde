"""Starter templates in the API: list, detail, and a draft campaign started from one."""
import pytest
from rest_framework.test import APIClient

from campaigns.models import Campaign
from campaigns.starters import starter_list

pytestmark = pytest.mark.django_db


def test_it_lists_every_template_with_its_kinds_and_sample_item_count(api):
    response = api.get("/api/templates/")
    assert response.status_code == 200
    body = response.json()
    assert [t["name"] for t in body] == [s.name for s in starter_list()]
    pairwise = next(t for t in body if t["name"] == "pairwise-preference")
    assert pairwise["kinds"] == ["pairwise"] and pairwise["sample_items"] == 12
    assert pairwise["title"] == "Pairwise preference" and pairwise["description"]


def test_a_template_detail_carries_schema_instructions_worked_example_and_sample_items(api):
    body = api.get("/api/templates/mqm/").json()
    question = body["schema"]["questions"][0]
    assert question["kind"] == "spans" and question["require_category"] is True
    assert "Worked example" in body["examples"] and body["instructions"]
    assert len(body["items"]) == 12 and {"id", "source", "target"} <= set(body["items"][0])
    assert body["settings"]["items_per_assignment"] == 6


def test_an_unknown_template_is_a_json_404_naming_the_known_ones(api):
    response = api.get("/api/templates/nope/")
    assert response.status_code == 404
    body = response.json()
    assert body["extra"]["code"] == "template_not_found"
    assert "best-worst" in body["extra"]["templates"] and "nope" in body["message"]


def test_it_creates_a_draft_campaign_owned_by_the_caller_with_the_sample_items(api, owner):
    response = api.post("/api/templates/best-worst/campaigns/",
                        {"slug": "my-bws", "with_sample_items": True}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["slug"] == "my-bws" and body["status"] == "draft"
    assert body["owner"] == owner.username and body["name"] == "Best-worst scaling"
    assert Campaign.objects.get(slug="my-bws").items.count() == 12


def test_a_taken_slug_or_bad_input_is_refused_and_nothing_is_created(api, campaign):
    taken = api.post("/api/templates/esa/campaigns/", {"slug": campaign.slug}, format="json")
    assert taken.status_code == 409
    bad = api.post("/api/templates/esa/campaigns/", {"slug": "x", "colour": 1}, format="json")
    assert bad.status_code == 400
    assert Campaign.objects.count() == 1


def test_templates_need_authentication():
    assert APIClient().get("/api/templates/").status_code == 401


def test_the_openapi_schema_documents_the_template_routes(api):
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert {"/api/templates/", "/api/templates/{name}/",
            "/api/templates/{name}/campaigns/"} <= set(schema["paths"])
