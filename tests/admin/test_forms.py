"""The campaign form (campaigns/admin/forms.py): schema problems shown by path, nothing saved;
settings applied; collaborators added by exact username or e-mail address."""
import json

import pytest
from django.urls import reverse

from campaigns.models import Campaign, Item
from tests.admin.conftest import add_items
from tests.factories import CONTINUATION_SCHEMA, make_campaign

pytestmark = pytest.mark.django_db


# The campaign change form: schema problems shown by path, nothing saved; settings applied.


def form_data(campaign: Campaign, **changes) -> dict:
    data = {
        "name": campaign.name, "slug": campaign.slug, "description": "", "source": "",
        "schema": json.dumps(campaign.schema), "instructions": campaign.instructions,
        "examples": "", "consent_text": "", "intake_questions": "[]",
        "items_per_assignment": campaign.items_per_assignment,
        "annotations_per_item": campaign.annotations_per_item,
        "assignment_timeout_minutes": campaign.assignment_timeout_minutes,
        "max_assignments_per_worker": "", "attention_checks_per_assignment": 0,
        "gold_items_per_assignment": 0, "completion_mode": campaign.completion_mode,
        "completion_code": "", "completion_redirect_url": "",
    }
    data.update(changes)
    return data


def change_url(campaign):
    return reverse("admin:campaigns_campaign_change", args=[campaign.pk])


def test_it_shows_every_schema_problem_with_its_path_and_saves_nothing(researcher_client, campaign):
    bad = {"display": [{"field": "prompt"}],
           "questions": [{"id": "q1", "kind": "likert", "text": "Rate", "points": []},
                         {"id": "q2", "kind": "nope", "text": "?"}]}
    response = researcher_client.post(change_url(campaign), form_data(
        campaign, name="Renamed", schema=json.dumps(bad)))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors["schema"]
    assert any(e.startswith("schema.questions[0].points:") for e in errors), errors
    assert any(e.startswith("schema.questions[1]") for e in errors), errors
    content = response.content.decode()
    assert "schema.questions[0].points:" in content
    campaign.refresh_from_db()
    assert campaign.name != "Renamed"
    assert campaign.schema == CONTINUATION_SCHEMA


def test_it_rejects_text_that_is_not_json_and_saves_nothing(researcher_client, campaign):
    response = researcher_client.post(change_url(campaign), form_data(
        campaign, name="Renamed", schema="{not json"))
    assert response.status_code == 200
    assert "schema" in response.context["adminform"].form.errors
    campaign.refresh_from_db()
    assert campaign.name != "Renamed"


def test_it_shows_completion_and_intake_problems_next_to_their_fields(researcher_client,
                                                                      campaign):
    response = researcher_client.post(change_url(campaign), form_data(
        campaign, completion_mode="fixed", completion_code="",
        completion_redirect_url="https://example.org/done",
        intake_questions=json.dumps([{"id": "age", "kind": "likert", "text": "Age"}])))
    errors = response.context["adminform"].form.errors
    assert "completion_code: a fixed completion code is required" in errors["completion_code"]
    assert any("{code}" in e for e in errors["completion_redirect_url"])
    assert any(e.startswith("intake_questions") for e in errors["intake_questions"])


def test_a_new_k_is_applied_to_the_items_slot_targets(researcher_client, campaign):
    add_items(campaign, 3)
    response = researcher_client.post(change_url(campaign),
                                      form_data(campaign, annotations_per_item=5))
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert set(Item.objects.filter(campaign=campaign).values_list("slots_wanted", flat=True)) == {5}


def test_a_new_campaign_is_owned_by_the_researcher_who_adds_it(researcher_client, researcher,
                                                              other_researcher):
    data = form_data(Campaign(name="Fresh", slug="fresh", schema=CONTINUATION_SCHEMA,
                              items_per_assignment=1, annotations_per_item=3,
                              assignment_timeout_minutes=60,
                              completion_mode="per_assignment"),
                     owner=other_researcher.pk)  # ignored: the owner field is read-only
    response = researcher_client.post(reverse("admin:campaigns_campaign_add"), data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    fresh = Campaign.objects.get(slug="fresh")
    assert fresh.owner == researcher
    assert fresh.status == Campaign.Status.DRAFT


def test_the_change_page_shows_sections_and_a_safe_markdown_preview(researcher_client, campaign):
    campaign.instructions = "**Read** this <script>alert(1)</script>"
    campaign.save()
    response = researcher_client.get(change_url(campaign))
    content = response.content.decode()
    for heading in ("Setup", "Task schema", "Instructions and examples",
                    "Consent and intake questions", "Assignment settings", "Completion"):
        assert f">{heading}<" in content
    assert "<strong>Read</strong>" in content
    assert "<script>alert(1)</script>" not in content


def test_answered_questions_can_be_reworded_but_not_removed(researcher_client, campaign):
    from tests.admin.simulate import simulate

    add_items(campaign, 1)
    simulate(campaign, workers=1)
    reworded = json.loads(json.dumps(CONTINUATION_SCHEMA))
    reworded["questions"][0]["text"] = "Is it coherent?"
    response = researcher_client.post(change_url(campaign),
                                      form_data(campaign, schema=json.dumps(reworded)))
    assert response.status_code == 302
    dropped = {**reworded, "questions": reworded["questions"][1:]}
    response = researcher_client.post(change_url(campaign),
                                      form_data(campaign, schema=json.dumps(dropped)))
    assert response.status_code == 200
    assert any("'coherence' has 1 stored answer(s) and cannot be removed" in e
               for e in response.context["adminform"].form.errors["schema"])
    campaign.refresh_from_db()
    assert campaign.schema["questions"][0]["text"] == "Is it coherent?"


def test_the_live_markdown_preview_renders_safely_for_staff_with_campaign_rights(
        researcher_client, client, django_user_model):
    url = reverse("admin:campaigns_campaign_markdown_preview")
    response = researcher_client.post(url, {"text": "**bold** <script>x()</script> "
                                            "[a](javascript:alert(1))"})
    html = response.json()["html"]
    assert "<strong>bold</strong>" in html
    assert "<script" not in html and "javascript:" not in html
    assert researcher_client.get(url).status_code == 405
    page = researcher_client.get(reverse("admin:campaigns_campaign_add"))
    assert f'data-markdown-preview="{url}"' in page.content.decode()
    nobody = django_user_model.objects.create_user("eve", password="pw-eve-12345", is_staff=True)
    client.force_login(nobody)  # the same client, now without campaign permissions
    assert client.post(url, {"text": "x"}).status_code == 403


# The collaborator picker lists nobody: a researcher adds a colleague by exact username or e-mail
# address. A taken slug is refused without saying whose it is.


@pytest.fixture
def staff(django_user_model):
    """Researchers the campaign's owner has never heard of."""
    return [django_user_model.objects.create_user(f"staffer{n}", f"s{n}@lab.example", "pw-1234567",
                                                  is_staff=True) for n in range(3)]


def test_the_change_page_lists_no_other_researcher(researcher_client, campaign, staff,
                                                    other_researcher):
    content = researcher_client.get(change_url(campaign)).content.decode()
    for user in [*staff, other_researcher]:
        assert user.username not in content
        assert user.email not in content
    assert '<textarea name="collaborators"' in content


@pytest.mark.parametrize("name", ["bob", "BOB@example.org", "bob@example.org"])
def test_a_collaborator_is_added_by_exact_username_or_email(researcher_client, campaign,
                                                            other_researcher, name):
    response = researcher_client.post(change_url(campaign), form_data(
        campaign, collaborators=name))
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert list(campaign.collaborators.all()) == [other_researcher]
    # ...and the page shows the collaborators the campaign has, by username.
    assert "bob</textarea>" in researcher_client.get(change_url(campaign)).content.decode()


@pytest.mark.parametrize("name", ["bo", "Bob", "b%", "example.org", "staffer"])
def test_a_partial_or_inexact_name_matches_nobody(researcher_client, campaign, other_researcher,
                                                  staff, name):
    response = researcher_client.post(change_url(campaign), form_data(
        campaign, collaborators=name))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors["collaborators"]
    assert errors == [f"No single researcher account has the username or e-mail address: "
                      f"{name}."]
    assert not campaign.collaborators.exists()


def test_accounts_that_are_not_active_staff_cannot_be_added(researcher_client, campaign,
                                                           django_user_model):
    django_user_model.objects.create_user("worker", "w@example.org", "pw-1234567")
    django_user_model.objects.create_user("gone", "g@example.org", "pw-1234567", is_staff=True,
                                          is_active=False)
    response = researcher_client.post(change_url(campaign), form_data(
        campaign, collaborators="worker\ngone"))
    assert response.context["adminform"].form.errors["collaborators"] == [
        "No single researcher account has the username or e-mail address: worker, gone."]


def test_removing_every_collaborator_empties_the_list(researcher_client, campaign,
                                                      other_researcher):
    campaign.collaborators.add(other_researcher)
    response = researcher_client.post(change_url(campaign), form_data(campaign, collaborators=""))
    assert response.status_code == 302
    assert not campaign.collaborators.exists()


def test_another_researchers_slug_is_refused_without_naming_them(researcher_client,
                                                                 other_researcher):
    make_campaign(owner=other_researcher, slug="their-study", status=Campaign.Status.DRAFT)
    new = Campaign(slug="x", name="Mine", schema=CONTINUATION_SCHEMA,
                   annotations_per_item=3, items_per_assignment=1)
    response = researcher_client.post(reverse("admin:campaigns_campaign_add"), form_data(
        new, slug="their-study"))
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["slug"] == [
        "This slug is not available; choose another."]
    assert "already exists" not in response.content.decode()
    assert Campaign.objects.filter(slug="their-study").count() == 1
