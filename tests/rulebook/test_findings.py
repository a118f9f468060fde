"""The nine findings of the rulebook issue, each through the route where it was seen."""
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from campaigns.models import Annotation, Campaign, Item
from campaigns.selectors.analysis import annotations_frame
from tests.admin.test_forms import form_data
from tests.rulebook.conftest import PREFERENCE_SCHEMA, with_question

pytestmark = pytest.mark.django_db


def detail(campaign):
    return f"/api/campaigns/{campaign.slug}/"


# 1. Renaming an answered question through the API hid its answers.

def test_an_api_rename_of_an_answered_question_is_refused_and_hides_nothing(api, answered):
    renamed = with_question(PREFERENCE_SCHEMA, "preference", id="pref")
    response = api.patch(detail(answered), {"schema": renamed}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["extra"]["code"] == "schema_invalid"
    assert "'preference' has 4 stored answer(s) and cannot be removed or renamed" in body["message"]
    answered.refresh_from_db()
    assert answered.schema == PREFERENCE_SCHEMA
    frame = annotations_frame(campaign=answered)
    assert frame[frame["question"].eq("preference")]["annotation"].nunique() == 4


def test_a_rename_is_a_recorded_migration_that_says_how_many_answers_it_changed(api, answered):
    from campaigns.models import AnswerMigration

    response = api.post(f"{detail(answered)}questions/rename/",
                        {"question": "preference", "to": "pref"}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["annotations_changed"] == 4
    answered.refresh_from_db()
    assert [q["id"] for q in answered.schema["questions"]] == ["pref", "fluency"]
    assert all("pref" in a and "preference" not in a
               for a in Annotation.objects.values_list("answers", flat=True))
    frame = annotations_frame(campaign=answered)  # what exports and statistics read
    assert sorted(frame[frame["question"].eq("pref")]["value"]) == ["a", "b", "tie", "tie"]
    record = AnswerMigration.objects.get(campaign=answered)
    assert (record.question, record.renamed_to, record.annotations_changed,
            record.requested_via) == ("preference", "pref", 4, "api")


def test_a_label_change_keeps_the_id_and_every_answer(api, answered):
    relabelled = with_question(PREFERENCE_SCHEMA, "preference", text="Which reads better?")
    response = api.patch(detail(answered), {"schema": relabelled}, format="json")
    assert response.status_code == 200
    assert response.json()["schema"]["questions"][0]["text"] == "Which reads better?"


# 2. The admin let a choice option with answers be removed.

def test_the_admin_refuses_to_remove_an_answered_option(researcher_client, answered):
    options = [o for o in PREFERENCE_SCHEMA["questions"][0]["options"] if o["value"] != "tie"]
    schema = with_question(PREFERENCE_SCHEMA, "preference", options=options)
    response = researcher_client.post(
        reverse("admin:campaigns_campaign_change", args=[answered.pk]),
        form_data(answered, schema=json.dumps(schema)))
    assert response.status_code == 200
    errors = " ".join(response.context["adminform"].form.errors["schema"])
    assert "2 of the 4 stored answer(s) of 'preference' would no longer fit" in errors
    answered.refresh_from_db()
    assert answered.schema == PREFERENCE_SCHEMA


def test_an_option_nobody_chose_may_go_and_a_new_optional_question_may_come(api, answered):
    options = [o for o in PREFERENCE_SCHEMA["questions"][0]["options"] if o["value"] != "skip"]
    schema = with_question(PREFERENCE_SCHEMA, "preference", options=options)
    schema["questions"].append({"id": "note", "kind": "text", "text": "Anything else?",
                                "required": False})
    assert api.patch(detail(answered), {"schema": schema}, format="json").status_code == 200
    schema["questions"].append({"id": "must", "kind": "text", "text": "Required?"})
    response = api.patch(detail(answered), {"schema": schema}, format="json")
    assert response.status_code == 400
    assert "must be optional" in response.json()["message"]


# 3. The API published a campaign with no items.

def test_the_api_refuses_to_publish_a_campaign_without_items(api, owner):
    from tests.factories import make_campaign

    draft = make_campaign(owner=owner, status=Campaign.Status.DRAFT)
    response = api.post(f"{detail(draft)}status/", {"status": "live"}, format="json")
    assert response.status_code == 400
    assert response.json()["extra"]["code"] == "no_items"
    assert "has no items to annotate; import items first" in response.json()["message"]
    draft.refresh_from_db()
    assert draft.status == "draft"


# 4. The API reopened a closed campaign.

def test_the_api_never_reopens_a_closed_campaign(api, answered):
    assert api.post(f"{detail(answered)}status/", {"status": "closed"},
                    format="json").status_code == 200
    for target in ("live", "paused", "draft"):
        response = api.post(f"{detail(answered)}status/", {"status": target}, format="json")
        assert response.status_code == 409, target
    answered.refresh_from_db()
    assert answered.status == "closed"


# 5. Close in the admin had no confirmation (tests/admin/test_campaigns.py covers both routes).

def test_the_close_button_asks_and_says_what_closing_does(researcher_client, answered):
    url = reverse("admin:campaigns_campaign_status", args=[answered.pk, "close"])
    page = researcher_client.post(url)
    text = page.content.decode()
    assert page.status_code == 200 and "Yes, close for good" in text
    assert "workers who hold an assignment can still hand it in" in text
    answered.refresh_from_db()
    assert answered.status == "live"


# 6. Attention checks per assignment with no attention items.

def test_attention_checks_without_attention_items_warn_at_save_and_refuse_at_publish(
        api, answered):
    response = api.patch(detail(answered), {"attention_checks_per_assignment": 2}, format="json")
    assert response.status_code == 200
    assert any("0 attention item(s)" in w for w in response.json()["warnings"])
    api.post(f"{detail(answered)}status/", {"status": "paused"}, format="json")
    response = api.post(f"{detail(answered)}status/", {"status": "live"}, format="json")
    assert response.status_code == 400
    assert response.json()["extra"]["code"] == "control_items_missing"
    answered.refresh_from_db()
    assert answered.status == "paused"


def test_the_admin_warns_at_save_about_missing_attention_items(researcher_client, answered):
    response = researcher_client.post(
        reverse("admin:campaigns_campaign_change", args=[answered.pk]),
        form_data(answered, attention_checks_per_assignment=2), follow=True)
    assert "Attention checks per assignment is 2, but the campaign has 0 attention item(s)" \
        in response.content.decode()


# 7. Item import reported problems in two rounds.

def test_an_import_reports_every_problem_in_one_pass_existing_ids_included(api, answered):
    existing = Item.objects.filter(campaign=answered).first().external_id
    csv = ("id,system,prompt,completion,control,gold\n"
           "n1,s,p,,,\n"                                   # empty displayed field
           'n2,s,p,c,gold,"{""preference"": ""maybe""}"\n'  # bad gold value
           "n3,s,p,c,sometimes,\n"                          # bad control
           f"{existing},s,p,c,,\n")                         # an id the campaign has
    response = api.post(f"{detail(answered)}items/import/",
                        {"file": SimpleUploadedFile("items.csv", csv.encode())}, format="multipart")
    assert response.status_code == 400
    errors = response.json()["extra"]["errors"]
    assert [(e["row"], e["field"]) for e in errors] == [
        (1, "completion"), (2, "gold.preference"), (3, "control"), (4, "id")]
    assert "already exists in this campaign" in errors[3]["message"]
    assert Item.objects.filter(campaign=answered).count() == 4


def test_an_option_rename_is_a_recorded_migration_of_the_stored_answers(api, answered):
    from campaigns.models import AnswerMigration

    response = api.post(f"{detail(answered)}questions/rename/",
                        {"question": "preference", "value": "tie", "to": "draw"}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["annotations_changed"] == 2  # the two "tie" answers
    answered.refresh_from_db()
    assert [o["value"] for o in answered.schema["questions"][0]["options"]] == [
        "a", "b", "draw", "skip"]
    frame = annotations_frame(campaign=answered)
    assert sorted(frame[frame["question"].eq("preference")]["value"]) == [
        "a", "b", "draw", "draw"]
    record = AnswerMigration.objects.get(campaign=answered)
    assert (record.value, record.value_renamed_to, record.annotations_changed) == (
        "tie", "draw", 2)
    taken = api.post(f"{detail(answered)}questions/rename/",
                     {"question": "preference", "value": "draw", "to": "a"}, format="json")
    assert taken.status_code == 400 and taken.json()["extra"]["code"] == "bad_option_value"
    likert = api.post(f"{detail(answered)}questions/rename/",
                      {"question": "fluency", "value": "1", "to": "one"}, format="json")
    assert likert.status_code == 400 and likert.json()["extra"]["code"] == "no_option_values"
