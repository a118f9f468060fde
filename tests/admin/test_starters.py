"""The admin's "Add campaign": a gallery of starter templates, their sample items, and a preview
of the schema in the form as the worker will see it."""
import json

import pytest
from django.urls import reverse
from django.utils.html import escape

from campaigns.models import Annotation, Campaign, Item
from campaigns.starters import starter_get, starter_list

pytestmark = pytest.mark.django_db

ADD = "/admin/campaigns/campaign/add/"


def preview_url():
    return reverse("admin:campaigns_campaign_schema_preview")


def test_the_add_page_shows_a_card_per_template_with_its_sample_items(researcher_client):
    text = researcher_client.get(ADD).content.decode()
    for starter in starter_list():
        assert f"?template={starter.name}" in text and starter.title in text
        assert reverse("admin:campaigns_campaign_starter_items", args=[starter.name]) in text


def test_choosing_a_template_prefills_the_form(researcher_client):
    response = researcher_client.get(ADD, {"template": "esa"})
    form = response.context["adminform"].form
    starter = starter_get("esa")
    assert form.initial["schema"] == starter.schema
    assert form.initial["instructions"] == starter.instructions
    assert form.initial["name"] == "Error span annotation (ESA)"
    assert form.initial["items_per_assignment"] == 6
    text = response.content.decode()
    assert 'name="template" value="esa"' in text and "Chosen: the form below holds it" in text


def test_an_unknown_template_leaves_the_form_empty(researcher_client):
    response = researcher_client.get(ADD, {"template": "<nope>"})
    assert response.status_code == 200
    assert "schema" not in response.context["adminform"].form.initial


def test_the_sample_items_download_as_a_jsonl_import_file(researcher_client):
    url = reverse("admin:campaigns_campaign_starter_items", args=["pairwise-preference"])
    response = researcher_client.get(url)
    assert response.status_code == 200
    assert "pairwise-preference-items.jsonl" in response["Content-Disposition"]
    rows = [json.loads(line) for line in response.content.decode().splitlines()]
    assert rows == starter_get("pairwise-preference").items
    missing = reverse("admin:campaigns_campaign_starter_items", args=["nope"])
    assert researcher_client.get(missing).status_code == 404


def test_saving_the_prefilled_form_creates_the_campaign(researcher_client, researcher):
    starter = starter_get("best-worst")
    post = {**{k: v for k, v in starter.campaign_fields().items()
               if k not in ("schema", "intake_questions")},
            "schema": json.dumps(starter.schema), "intake_questions": "[]", "slug": "bws-study",
            "owner": researcher.pk, "completion_mode": "per_assignment",
            "bonus_per_item": "0", "bonus_per_gold_correct": "0",
            "max_assignments_per_worker": "", "gold_items_per_assignment": 0}
    response = researcher_client.post(ADD, post)
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert Campaign.objects.get(slug="bws-study").schema == starter.schema
    assert Item.objects.count() == 0  # not asked to import the sample items


def _template_post(researcher, name: str, slug: str, **changes) -> dict:
    starter = starter_get(name)
    fields = {**starter.campaign_fields(), **changes}
    return {**{k: v for k, v in fields.items() if k not in ("schema", "intake_questions")},
            "schema": json.dumps(fields["schema"]),
            "intake_questions": json.dumps(fields.get("intake_questions", [])), "slug": slug,
            "owner": researcher.pk, "completion_mode": "per_assignment",
            "bonus_per_item": "0", "bonus_per_gold_correct": "0",
            "max_assignments_per_worker": "", "gold_items_per_assignment": 0,
            "template": name, "import_sample_items": "1"}


def test_saving_with_import_ticked_imports_the_sample_items(researcher_client, researcher):
    response = researcher_client.post(ADD, _template_post(researcher, "esa", "esa-study"),
                                      follow=True)
    assert "Imported the template&#x27;s 12 sample items." in response.content.decode()
    assert Campaign.objects.get(slug="esa-study").items.count() == 12


def test_sample_items_that_no_longer_fit_an_edited_schema_are_reported(researcher_client,
                                                                        researcher):
    schema = {**starter_get("esa").schema, "display": [{"field": "context"}]}
    response = researcher_client.post(
        ADD, _template_post(researcher, "esa", "esa-edited", schema=schema), follow=True)
    assert "The sample items were not imported" in response.content.decode()
    assert "context: missing or empty" in response.content.decode()
    assert Campaign.objects.get(slug="esa-edited").items.count() == 0


@pytest.mark.parametrize("name", [s.name for s in starter_list(available_only=False)])
def test_the_schema_preview_shows_the_worker_page_on_a_sample_item(researcher_client, name):
    from campaigns.schema import REGISTRY

    starter = next(s for s in starter_list(available_only=False) if s.name == name)
    if set(starter.kinds) - set(REGISTRY):
        pytest.skip("a question kind of this template is not registered on this branch")
    response = researcher_client.post(preview_url(), {
        "schema": json.dumps(starter.schema), "instructions": "Read **this**.",
        "name": "My study", "template": name})
    assert response.status_code == 200
    text = response.content.decode()
    assert "My study" in text and "<strong>this</strong>" in text
    for question in starter.schema["questions"]:
        assert f'data-kind="{question["kind"]}"' in text
    first = starter.items[0]
    shown = first.get("source") or first.get("story") or first.get("prompt") or ""
    assert escape(shown[:40]) in text
    assert (Campaign.objects.count(), Item.objects.count(), Annotation.objects.count()) == (
        0, 0, 0)


def test_without_a_template_the_preview_makes_up_items_the_schema_accepts(researcher_client):
    schema = starter_get("best-worst").schema
    response = researcher_client.post(preview_url(), {"schema": json.dumps(schema)})
    assert response.status_code == 200
    text = response.content.decode()
    assert "Sample output 1 of 3" in text  # the fewest outputs a best-worst question takes
    assert "sample text for the field \u201csource\u201d" in text


def test_an_invalid_schema_lists_its_problems_by_json_path(researcher_client):
    schema = {"questions": [{"id": "q", "kind": "likert", "text": "How good?", "points": []}]}
    response = researcher_client.post(preview_url(), {"schema": json.dumps(schema)})
    assert response.status_code == 400
    assert "questions[0].points" in response.content.decode()
    not_json = researcher_client.post(preview_url(), {"schema": "{"})
    assert not_json.status_code == 400 and "schema: not valid JSON" in not_json.content.decode()


def test_the_preview_is_post_only_and_for_staff_who_may_edit_campaigns(researcher_client):
    from django.test import Client

    assert researcher_client.get(preview_url()).status_code == 405
    response = Client().post(preview_url(), {"schema": "{}"})
    assert response.status_code == 302 and "/login/" in response["Location"]
