"""Judgment import over the API: rows of item, judge and raw output, all or nothing; big uploads
imported by a background job (202, then poll)."""
import pytest
from django.core.files.storage import storages
from django.core.files.uploadedfile import SimpleUploadedFile

from campaigns.models import Annotation, Assignment, ImportJob, Worker
from tests.api.conftest import make_items

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


# LLM-judge import over the API: rows of item, judge and raw output, all or nothing.


@pytest.fixture
def items(campaign):
    return make_items(campaign, 2)


def test_it_imports_judge_outputs_as_annotations(api, campaign, items):
    rows = [{"item": "sys-a-0", "judge": "gpt-4o",
             "output": "Scores: {'coherence': 4, 'sentiment': 3}"},
            {"item": "sys-a-1", "judge": "gpt-4o", "output": "{'coherence': 2, 'sentiment': 5}"}]
    response = api.post(f"/api/campaigns/{campaign.slug}/judgments/import/", rows,
                        format="json")
    assert response.status_code == 200, response.json()
    assert response.json() == {"created": 2, "updated": 0, "judges": ["gpt-4o"]}
    assert Annotation.objects.filter(worker__platform="llm").count() == 2


def test_bad_judge_rows_reject_everything_with_row_numbers(api, campaign, items):
    rows = [{"item": "sys-a-0", "judge": "j", "output": "{'coherence': 4, 'sentiment': 3}"},
            {"item": "nope", "judge": "j", "output": "{'coherence': 4, 'sentiment': 3}"},
            {"item": "sys-a-1", "judge": "j", "output": "{'coherence': 9, 'sentiment': 3}"},
            {"item": "sys-a-1"}]
    response = api.post(f"/api/campaigns/{campaign.slug}/judgments/import/", rows,
                        format="json")
    assert response.status_code == 400
    errors = response.json()["extra"]["errors"]
    assert {e["row"] for e in errors} == {4}  # shape problems first, before any lookup
    rows.pop()
    errors = api.post(f"/api/campaigns/{campaign.slug}/judgments/import/", rows,
                      format="json").json()["extra"]["errors"]
    assert [(e["row"], e["field"]) for e in errors] == [(2, "item"), (3, "output.coherence")]
    assert not Annotation.objects.exists()


def test_it_imports_a_judgment_file_with_a_default_judge(api, campaign, items):
    upload = SimpleUploadedFile("j.csv", b'item,output\nsys-a-0,"{""coherence"": 1, '
                                b'""sentiment"": 1}"\n')
    response = api.post(f"/api/campaigns/{campaign.slug}/judgments/import/",
                        {"file": upload, "judge": "claude"}, format="multipart")
    assert response.status_code == 200, response.json()
    assert response.json()["judges"] == ["claude"]


def test_human_ratings_imported_through_the_api_count_toward_progress(api, campaign, items):
    """platform=account: one worker per rater id, a held slot and a done annotation per
    rating, assignments submitted when they start (never before)."""
    rows = [{"item": item.external_id, "judge": rater, "output": f"{{'coherence': {n + 1}, "
             "'sentiment': 3}"} for n, rater in enumerate(["r1", "r2", "r3", "r4"])
            for item in items]
    url = f"/api/campaigns/{campaign.slug}/judgments/import/?platform=account"
    response = api.post(url, rows, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["judges"] == ["r1", "r2", "r3", "r4"]
    for item in items:
        item.refresh_from_db()
        # k is 3; four raters: done, nothing left to hand out, the counters' rules hold.
        assert (item.annotations_done, item.slots_taken, item.slots_wanted) == (4, 4, 4)
    assert Worker.objects.filter(campaign=campaign, platform="account").count() == 4
    for assignment in Assignment.objects.filter(campaign=campaign):
        assert assignment.submitted_at >= assignment.started_at
    progress = api.get(f"/api/campaigns/{campaign.slug}/progress/").json()
    assert (progress["overall"]["done"], progress["overall"]["items_complete"]) == (8, 2)
    assert progress["overall"]["remaining"] == 0
    again = api.post(url, rows[:2], format="json").json()  # re-import: updates, no new counts
    assert again["updated"] == 2
    items[0].refresh_from_db()
    assert items[0].annotations_done == 4


def test_llm_judgments_stay_out_of_progress_and_a_bad_platform_is_a_400(api, campaign, items):
    rows = [{"item": "sys-a-0", "judge": "gpt", "output": "{'coherence': 4, 'sentiment': 3}"}]
    assert api.post(f"/api/campaigns/{campaign.slug}/judgments/import/", rows,
                    format="json").status_code == 200
    items[0].refresh_from_db()
    assert (items[0].annotations_done, items[0].slots_taken) == (0, 0)
    response = api.post(f"/api/campaigns/{campaign.slug}/judgments/import/?platform=robot",
                        rows, format="json")
    assert response.status_code == 400 and "platform" in response.json()["extra"]["fields"]


# Big judgment uploads are imported by a background job (202, then poll), all or nothing.


def _file(n: int, *, bad_row: int | None = None) -> bytes:
    lines = ["item,judge,output"]
    lines += [f'sys-a-{i},gpt-4o,"{{""coherence"": {9 if i + 1 == bad_row else 4}, '
              f'""sentiment"": 2}}"' for i in range(n)]
    return ("\n".join(lines) + "\n").encode()


def _post(api, campaign, content, **fields):
    return api.post(f"/api/campaigns/{campaign.slug}/judgments/import/",
                    {"file": SimpleUploadedFile("judgments.csv", content), **fields},
                    format="multipart")


@pytest.fixture
def background(settings):
    settings.IMPORT_BACKGROUND_BYTES = 1000


def test_a_big_upload_is_a_202_job_that_imports_every_judgment(
        api, campaign, background, django_capture_on_commit_callbacks):
    make_items(campaign, 60)
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(api, campaign, _file(60))
    assert response.status_code == 202, response.json()
    started = response.json()
    assert (started["status"], started["kind"]) == ("queued", "judgments")
    assert started["url"].endswith(f"/judgments/imports/{started['id']}/")
    polled = api.get(started["url"]).json()
    assert (polled["status"], polled["created"], polled["judges"]) == ("done", 60, ["gpt-4o"])
    assert Annotation.objects.filter(worker__platform="llm").count() == 60
    assert not storages["imports"].exists(ImportJob.objects.get().file)


def test_a_big_upload_with_one_bad_row_imports_nothing_and_says_which(
        api, campaign, background, django_capture_on_commit_callbacks):
    make_items(campaign, 60)
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(api, campaign, _file(60, bad_row=42))
    polled = api.get(response.json()["url"]).json()
    assert polled["status"] == "failed" and polled["error_total"] == 1
    assert "row 42" in polled["errors"][0]
    assert not Annotation.objects.exists() and not Worker.objects.filter(platform="llm").exists()


def test_the_judge_and_platform_fields_reach_the_job(api, campaign, background,
                                                     django_capture_on_commit_callbacks):
    make_items(campaign, 60)
    content = "\n".join(["item,output"] + [f'sys-a-{i},"{{""coherence"": 4, ""sentiment"": 2}}"'
                                           for i in range(60)]).encode()
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(api, campaign, content, judge="expert", platform="account")
    assert api.get(response.json()["url"]).json()["status"] == "done"
    assert Worker.objects.get(platform="account").platform_id == "expert"


def test_a_judgments_job_is_not_found_under_items_nor_by_another_researcher(
        api, other_api, campaign, background, django_capture_on_commit_callbacks):
    make_items(campaign, 60)
    with django_capture_on_commit_callbacks(execute=True):
        url = _post(api, campaign, _file(60)).json()["url"]
    assert api.get(url.replace("/judgments/", "/items/")).status_code == 404
    assert other_api.get(url).status_code == 404
