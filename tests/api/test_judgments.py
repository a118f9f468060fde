"""LLM-judge import over the API: rows of item, judge and raw output, all or nothing."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from campaigns.models import Annotation, Assignment, Worker
from tests.api.conftest import make_items

pytestmark = pytest.mark.django_db


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
