"""Well-formed but unstorable JSON in an import is a 400 naming the problem, nothing stored."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from campaigns.models import Item

pytestmark = pytest.mark.django_db

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
