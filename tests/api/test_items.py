"""Item endpoints: all-or-nothing import (file or JSON list, big uploads in a background job),
unstorable JSON refused, and the cursor-paginated list."""
import gzip
import json
import time

import pytest
from django.core.files.storage import storages
from django.core.files.uploadedfile import SimpleUploadedFile

from campaigns.importing import ImportRejected, read_records
from campaigns.models import ImportJob, Item
from tests.api.conftest import make_items

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


# Item endpoints: all-or-nothing import (file or JSON list) and the cursor-paginated list.


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


# Big item uploads: imported by a background job (202, then poll), all or nothing; wide headers
# are refused at once, and the repeated-column check is linear.


def _csv(n: int, *, bad_row: int | None = None) -> bytes:
    rows = ["id,prompt,completion"]
    rows += [f"i{i},prompt {i},{'' if i == bad_row else f'completion {i}'}"
             for i in range(1, n + 1)]
    return ("\n".join(rows) + "\n").encode()


def _post(api, campaign, content, name="items.csv"):
    return api.post(f"/api/campaigns/{campaign.slug}/items/import/",
                    {"file": SimpleUploadedFile(name, content)}, format="multipart")


def test_a_big_upload_is_a_202_job_that_imports_everything(
        api, campaign, settings, django_capture_on_commit_callbacks):
    settings.IMPORT_BACKGROUND_BYTES = 1000
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(api, campaign, _csv(300))
    assert response.status_code == 202, response.json()
    started = response.json()
    assert started["status"] == "queued" and started["url"].endswith(f"/{started['id']}/")
    polled = api.get(started["url"]).json()
    assert (polled["status"], polled["created"], polled["errors"]) == ("done", 300, [])
    assert Item.objects.filter(campaign=campaign).count() == 300
    job = ImportJob.objects.get()
    assert not storages["imports"].exists(job.file)  # the upload is gone once imported


def test_a_big_upload_with_one_bad_row_imports_nothing_and_says_why(
        api, campaign, settings, django_capture_on_commit_callbacks):
    settings.IMPORT_BACKGROUND_BYTES = 1000
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(api, campaign, _csv(300, bad_row=250))
    polled = api.get(response.json()["url"]).json()
    assert polled["status"] == "failed" and polled["error_total"] == 1
    assert "row 250" in polled["errors"][0]
    assert not Item.objects.exists()


def test_a_small_upload_still_imports_in_the_request(api, campaign):
    response = _post(api, campaign, _csv(3))
    assert response.status_code == 201 and not ImportJob.objects.exists()


def test_another_researchers_job_is_404(api, campaign, other_owner, settings,
                                        django_capture_on_commit_callbacks):
    from tests.api.conftest import token_client
    settings.IMPORT_BACKGROUND_BYTES = 1000
    with django_capture_on_commit_callbacks(execute=True):
        url = _post(api, campaign, _csv(300)).json()["url"]
    assert token_client(other_owner).get(url).status_code == 404


def test_a_header_of_100000_columns_is_refused_at_once(api, campaign):
    header = ",".join(f"c{i}" for i in range(100_000))
    started = time.monotonic()
    response = _post(api, campaign, (header + "\n" + "," * 99_999 + "\n").encode())
    assert time.monotonic() - started < 5
    assert response.status_code == 400
    assert "100000 columns; at most 1000" in str(response.json())


def test_the_repeated_column_check_is_linear(settings):
    settings.IMPORT_MAX_COLUMNS = 100_000
    header = ",".join(f"c{i}" for i in range(40_000)) + ",c7"
    started = time.monotonic()
    with pytest.raises(ImportRejected, match=r"repeated columns \['c7'\]"):
        list(read_records(header + "\n", "csv"))
    assert time.monotonic() - started < 2


def test_a_job_left_running_by_a_killed_worker_runs_again_and_only_once(api, campaign):
    from campaigns.services.imports import import_job_create, import_job_run
    job = import_job_create(campaign=campaign, requested_by=None, filename="items.csv",
                            upload=SimpleUploadedFile("items.csv", _csv(20)), fmt=None,
                            enqueue=False)
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.RUNNING)  # killed
    import_job_run(job_id=job.pk)  # the re-delivery
    import_job_run(job_id=job.pk)  # a late duplicate finds it done
    job.refresh_from_db()
    assert (job.status, job.created) == ("done", 20)
    assert Item.objects.filter(campaign=campaign).count() == 20


# Well-formed but unstorable JSON in an import is a 400 naming the problem, nothing stored.


ROW = '{"id": "a1", "prompt": "p", "completion": %s}'
REFUSED = {
    "deep.json": ("[" + ROW % ("[" * 5000 + "]" * 5000) + "]", "nested deeper than 64"),
    "deep.jsonl": (ROW % ("[" * 5000 + "]" * 5000), "nested deeper than 64"),
    "nan.json": ("[" + ROW % "NaN" + "]", "NaN is not a JSON value"),
    "inf.jsonl": (ROW % "-Infinity", "-Infinity is not a JSON value"),
    "big.json": ("[" + ROW % ("9" * 5000) + "]", "an integer of 5000 digits"),
    "huge.json": ("[" + ROW % "1e400" + "]", "out of range"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_json_in_an_uploaded_file_is_a_400(api, campaign, name):
    content, message = REFUSED[name]
    upload = SimpleUploadedFile(name, content.encode())
    response = api.post(f"/api/campaigns/{campaign.slug}/items/import/", {"file": upload},
                        format="multipart")
    assert response.status_code == 400, response.content[:500]
    assert message in str(response.json())
    assert not Item.objects.exists()


def test_a_deeply_nested_json_body_is_a_400(api, campaign):
    body = '[{"id": "a1", "prompt": "p", "completion": ' + "[" * 5000 + "]" * 5000 + "}]"
    response = api.post(f"/api/campaigns/{campaign.slug}/items/import/", body,
                        content_type="application/json")
    assert response.status_code == 400
    assert not Item.objects.exists()
