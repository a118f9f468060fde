"""Item endpoints: all-or-nothing import (file or JSON list) and the cursor-paginated list."""
import gzip
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from campaigns.models import Item
from tests.api.conftest import make_items

pytestmark = pytest.mark.django_db

ROWS = [{"id": "a1", "system": "gpt", "prompt": "Once", "completion": "upon a time"},
        {"id": "a2", "system": "llama", "prompt": "It was", "completion": "a dark night"}]


def test_it_imports_a_json_list(api, campaign):
    response = api.post(f"/api/campaigns/{campaign.slug}/items/import/", ROWS, format="json")
    assert response.status_code == 201, response.json()
    assert response.json() == {"created": 2, "control_items": 0}
    assert set(campaign.items.values_list("external_id", flat=True)) == {"a1", "a2"}


def test_it_imports_an_uploaded_csv_file(api, campaign):
    upload = SimpleUploadedFile("items.csv", b"id,system,prompt,completion\n"
                                b"c1,gpt,Hello,world\nc2,gpt,Good,bye\n", "text/csv")
    response = api.post(f"/api/campaigns/{campaign.slug}/items/import/", {"file": upload},
                        format="multipart")
    assert response.status_code == 201, response.json()
    assert response.json()["created"] == 2


def test_the_format_field_overrides_the_file_extension(api, campaign):
    upload = SimpleUploadedFile("items.txt", "\n".join(json.dumps(r) for r in ROWS).encode())
    response = api.post(f"/api/campaigns/{campaign.slug}/items/import/",
                        {"file": upload, "format": "jsonl"}, format="multipart")
    assert response.status_code == 201, response.json()


def test_one_bad_row_rejects_the_whole_import_with_row_numbers(api, campaign):
    rows = [*ROWS, {"id": "a3", "system": "gpt", "prompt": "x"}, {"prompt": "y",
                                                                   "completion": "z"}]
    response = api.post(f"/api/campaigns/{campaign.slug}/items/import/", rows, format="json")
    assert response.status_code == 400
    extra = response.json()["extra"]
    assert extra["code"] == "import_rejected" and extra["total"] == 2
    assert [(e["row"], e["field"]) for e in extra["errors"]] == [(3, "completion"), (4, "id")]
    assert response.json()["message"].startswith("Nothing was imported: 2 problem(s). row 3")
    assert not Item.objects.filter(campaign=campaign).exists()


def test_an_id_already_in_the_campaign_is_rejected(api, campaign):
    api.post(f"/api/campaigns/{campaign.slug}/items/import/", ROWS[:1], format="json")
    response = api.post(f"/api/campaigns/{campaign.slug}/items/import/", ROWS, format="json")
    assert response.status_code == 400
    assert response.json()["extra"]["errors"][0]["row"] == 1
    assert campaign.items.count() == 1


def test_a_nul_character_in_a_file_is_rejected_before_the_database(api, campaign):
    upload = SimpleUploadedFile("items.csv", b"id,prompt,completion\nn1,a\x00b,c\n")
    response = api.post(f"/api/campaigns/{campaign.slug}/items/import/", {"file": upload},
                        format="multipart")
    assert response.status_code == 400
    assert "NUL" in response.json()["message"]


def test_utf16_and_gzip_uploads_are_named_not_called_nul_characters(api, campaign):
    csv = "id,prompt,completion\nu1,Café,x\n"
    upload = SimpleUploadedFile("items.csv", csv.encode("utf-16"))
    response = api.post(f"/api/campaigns/{campaign.slug}/items/import/", {"file": upload},
                        format="multipart")
    assert response.status_code == 201, response.json()
    assert campaign.items.get().data["prompt"] == "Café"
    upload = SimpleUploadedFile("items.csv", gzip.compress(csv.encode()))
    response = api.post(f"/api/campaigns/{campaign.slug}/items/import/", {"file": upload},
                        format="multipart")
    assert response.status_code == 400
    assert "gzip-compressed" in response.json()["message"]
    assert "NUL" not in response.json()["message"]


def test_a_quote_free_tsv_is_imported_with_the_tsv_raw_format(api, campaign):
    content = b'id\tprompt\tcompletion\nq1\t"Hi, he said\tok\n'
    url = f"/api/campaigns/{campaign.slug}/items/import/"
    response = api.post(url, {"file": SimpleUploadedFile("items.tsv", content)},
                        format="multipart")
    assert response.status_code == 400 and "tsv-raw" in response.json()["message"]
    response = api.post(url, {"file": SimpleUploadedFile("items.tsv", content),
                              "format": "tsv-raw"}, format="multipart")
    assert response.status_code == 201, response.json()
    assert campaign.items.get().data["prompt"] == '"Hi, he said'


def test_an_escaped_emoji_is_stored_but_a_lone_surrogate_escape_is_not(api, campaign):
    emoji = SimpleUploadedFile("items.jsonl", json.dumps(
        {"id": "e1", "prompt": "Nice \U0001F600", "completion": "x"}).encode())
    response = api.post(f"/api/campaigns/{campaign.slug}/items/import/", {"file": emoji},
                        format="multipart")
    assert response.status_code == 201, response.json()
    assert campaign.items.get().data["prompt"] == "Nice \U0001F600"
    lone = SimpleUploadedFile("items.jsonl",
                              b'{"id": "e2", "prompt": "\\ud800", "completion": "x"}')
    response = api.post(f"/api/campaigns/{campaign.slug}/items/import/", {"file": lone},
                        format="multipart")
    assert response.status_code == 400 and "surrogates" in response.json()["message"]


def test_a_body_that_is_not_a_list_is_a_400(api, campaign):
    response = api.post(f"/api/campaigns/{campaign.slug}/items/import/", {"id": "x"},
                        format="json")
    assert response.status_code == 400
    assert response.json()["extra"]["code"] == "parse_error"


def test_an_upload_over_the_limit_is_413(api, campaign, settings, monkeypatch):
    monkeypatch.setattr("annotate.http.limits.MULTIPART_SLACK_BYTES", 0)
    settings.IMPORT_MAX_BYTES = 1000
    upload = SimpleUploadedFile("items.csv", b"id,prompt,completion\n" + b"x,y,z\n" * 500)
    response = api.post(f"/api/campaigns/{campaign.slug}/items/import/", {"file": upload},
                        format="multipart")
    assert response.status_code == 413
    assert response.json()["extra"]["code"] == "payload_too_large"
    assert not campaign.items.exists()


def test_a_form_encoded_body_is_415(api, campaign):
    response = api.post(f"/api/campaigns/{campaign.slug}/items/import/", "id=1",
                        content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415
    assert response.json()["extra"]["code"] == "unsupported_media_type"


def test_the_list_pages_with_a_cursor(api, campaign):
    make_items(campaign, 5)
    first = api.get(f"/api/campaigns/{campaign.slug}/items/?page_size=3").json()
    second = api.get(first["next"]).json()
    ids = [i["external_id"] for i in first["results"] + second["results"]]
    assert ids == [f"sys-a-{n}" for n in range(5)] and second["next"] is None


def test_the_list_filters_by_system(api, campaign):
    make_items(campaign, 2, system="a")
    make_items(campaign, 3, system="b")
    body = api.get(f"/api/campaigns/{campaign.slug}/items/?system=b").json()
    assert {i["system"] for i in body["results"]} == {"b"} and len(body["results"]) == 3


def test_a_malformed_cursor_is_a_400(api, campaign):
    response = api.get(f"/api/campaigns/{campaign.slug}/items/?cursor=nonsense")
    assert response.status_code == 400
    assert "cursor" in response.json()["extra"]["fields"]


@pytest.mark.parametrize("page_size", [2, 40])
def test_the_item_list_runs_the_same_queries_whatever_the_page_size(
        api, campaign, django_assert_num_queries, page_size):
    make_items(campaign, 40)
    # token + user, the campaign, the page
    with django_assert_num_queries(3):
        response = api.get(f"/api/campaigns/{campaign.slug}/items/?page_size={page_size}")
    assert len(response.json()["results"]) == page_size
