"""LLM-judge import over the API: rows of item, judge and raw output, all or nothing."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from campaigns.models import Annotation
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
