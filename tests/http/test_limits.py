"""One request-size check: oversized bodies get a clear 413 (page or JSON), not a 500."""
import pytest

pytestmark = pytest.mark.django_db


def test_an_oversized_form_post_is_a_clear_413(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = client.post("/a/some-token/1/", data="x=" + "a" * 5000,
                           content_type="application/x-www-form-urlencoded")
    assert response.status_code == 413
    assert b"too large" in response.content


def test_an_oversized_json_body_is_a_json_413(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = client.post("/api/anything/", data="[" + "1," * 5000 + "1]",
                           content_type="application/json")
    assert response.status_code == 413
    assert response.json()["extra"]["code"] == "payload_too_large"


def test_uploads_are_held_to_the_import_limit_not_the_form_limit(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    settings.IMPORT_MAX_BYTES = settings.API_UPLOAD_MAX_BYTES = 10
    small = client.post("/c/nothing/", {"file": ("a" * 2000)})
    assert small.status_code != 413
    big = client.post("/c/nothing/", {"text": "a" * (2 * 1024 * 1024)})
    assert big.status_code == 413


def test_an_api_body_is_held_to_the_api_limit_too(client, settings):
    settings.API_UPLOAD_MAX_BYTES = 1000
    response = client.post("/api/campaigns/", data="[" + "1," * 1000 + "1]",
                           content_type="application/json")
    assert response.status_code == 413
    assert response.json()["extra"] == {"code": "payload_too_large", "limit_bytes": 1000}


def test_a_page_upload_is_not_held_to_the_api_limit(client, settings):
    settings.API_UPLOAD_MAX_BYTES = 10
    response = client.post("/c/nothing/", {"text": "a" * 2000})
    assert response.status_code != 413
