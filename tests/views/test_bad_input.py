"""Worker pages answer malformed input with a 4xx and store nothing (never a 500)."""
import pytest
from django.test import Client

from campaigns.models import Annotation
from tests.views.conftest import VALID_CONTINUATION, item_url, start

pytestmark = pytest.mark.django_db


@pytest.fixture
def safe_client():
    return Client(raise_request_exception=False)


@pytest.mark.parametrize("field,value", [
    ("q-coherence", "9" * 400),
    ("q-coherence", "1e400"),
    ("q-feedback", "nul \x00 inside"),
    ("q-coherence", "4\x00"),
])
def test_bad_values_on_a_likert_page_are_400(safe_client, continuation, field, value):
    assignment = start(safe_client, continuation)
    response = safe_client.post(item_url(assignment, 1), {**VALID_CONTINUATION, field: value})
    assert response.status_code == 400
    assert not Annotation.objects.exists()


@pytest.mark.parametrize("count", ["x", "1e3", "9" * 5000, "-1"])
def test_a_bad_line_count_is_400(safe_client, summary_campaign, count):
    assignment = start(safe_client, summary_campaign)
    response = safe_client.post(item_url(assignment, 1), {"q-lines__count": count,
                                                          "q-lines.1.label": "yes"})
    assert 400 <= response.status_code < 500
    assert not Annotation.objects.exists()


@pytest.mark.parametrize("path", ["/a/{token}/2147483648/", "/a/{token}/99999999999999999999/",
                                  "/a/{token}%00/1/", "/a/%00/1/", "/a/{token}%00/finish/",
                                  "/a/{token}%00/done/"])
def test_bad_assignment_urls_are_404(safe_client, continuation, path):
    assignment = start(safe_client, continuation)
    url = path.format(token=assignment.token)
    assert safe_client.get(url).status_code == 404
    assert safe_client.post(url, VALID_CONTINUATION).status_code in (403, 404)
    assert not Annotation.objects.exists()
