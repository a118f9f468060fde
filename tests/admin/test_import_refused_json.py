"""The admin upload form reports unstorable JSON (deep, NaN, huge integers) as a 400."""
import pytest

from campaigns.models import Item
from tests.admin.test_import import upload

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("completion,message", [
    ("[" * 5000 + "]" * 5000, "nested deeper than 64"),
    ("NaN", "NaN is not a JSON value"),
    ("9" * 5000, "an integer of 5000 digits"),
])
def test_refused_json_is_reported_and_nothing_stored(researcher_client, campaign, completion,
                                                      message):
    content = '{"id": "a1", "prompt": "p", "completion": ' + completion + '}'
    response = upload(researcher_client, campaign, content.encode())
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Item.objects.exists()
