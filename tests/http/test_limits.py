"""One body limit per kind of path, checked against Content-Length before anything reads the
body: worker pages small, imports large, API JSON and admin forms in between; a clear 413
(page, or JSON under /api/), never a 500 or a spooled upload."""
import socket

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import RequestFactory
from django.urls import reverse

from annotate.http.limits import body_limit
from campaigns.models import Item
from tests.admin.conftest import items_jsonl

pytestmark = pytest.mark.django_db
MB = 1024 * 1024
MULTIPART = "multipart/form-data; boundary=xyz"


@pytest.mark.parametrize(("path", "content_type", "limit"), [
    ("/c/some-study/", MULTIPART, 1 * MB),
    ("/c/some-study/", "application/x-www-form-urlencoded", 1 * MB),
    ("/a/some-token/1/", MULTIPART, 1 * MB),
    ("/c/a%00b/", MULTIPART, 1 * MB),
    ("/admin/campaigns/campaign/1/import/", MULTIPART, 201 * MB),
    ("/admin/campaigns/campaign/1/judgments/", MULTIPART, 201 * MB),
    ("/api/campaigns/s/items/import/", MULTIPART, 201 * MB),
    ("/api/campaigns/s/judgments/import/", MULTIPART, 201 * MB),
    ("/api/campaigns/s/items/import/", "application/json", 10 * MB),
    ("/api/campaigns/", "application/json", 10 * MB),
    ("/api/campaigns/", MULTIPART, 10 * MB),
    ("/admin/campaigns/campaign/1/change/", MULTIPART, 10 * MB),
    ("/admin/login/", "application/x-www-form-urlencoded", 10 * MB),
])
def test_the_default_limit_of_each_kind_of_path(path, content_type, limit):
    request = RequestFactory().post(path, data=b"-", content_type=content_type)
    assert body_limit(request) == limit


def oversized(client, path: str, length: int, content_type: str = MULTIPART, **extra):
    """A POST claiming `length` bytes but carrying one: the test client's input stream
    raises if anything tries to read past what was sent, so a 413 proves nothing read it."""
    return client.post(path, data=b"-", content_type=content_type,
                       CONTENT_LENGTH=str(length), **extra)


def test_an_anonymous_150_mb_post_to_a_study_link_is_413_unread(client):
    response = oversized(client, "/c/any-study/", 150 * MB)
    assert response.status_code == 413
    assert response["Content-Type"].startswith("text/plain")
    assert b"at most 1 MB" in response.content


def test_an_answer_post_over_the_worker_limit_is_413(client):
    assert oversized(client, "/a/some-token/1/", MB + 1,
                     "application/x-www-form-urlencoded").status_code == 413
    assert client.post("/a/some-token/1/", {"started": "x" * (MB - 100)}).status_code != 413


def test_an_admin_form_is_held_to_the_form_limit_and_uploads_to_the_import_limit(
    researcher_client, campaign, settings
):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    change = reverse("admin:campaigns_campaign_change", args=[campaign.pk])
    assert oversized(researcher_client, change, 1001).status_code == 413
    content = items_jsonl(40)
    assert len(content) > 1000
    response = researcher_client.post(
        reverse("admin:campaigns_campaign_import", args=[campaign.pk]),
        {"file": SimpleUploadedFile("items.jsonl", content)}, follow=True)
    assert "Imported 40 items" in response.content.decode()
    assert Item.objects.filter(campaign=campaign).count() == 40


def test_an_api_json_body_has_the_api_json_limit_in_the_json_shape(client, settings):
    settings.API_JSON_MAX_BYTES = 1000
    response = oversized(client, "/api/campaigns/", 1001, "application/json")
    assert response.status_code == 413
    assert response.json() == {
        "message": "The request is too large: at most 1000 bytes can be sent at once.",
        "extra": {"code": "payload_too_large", "limit_bytes": 1000}}
    # ...and it is the documented 10 MB by default, above Django's 2.5 MB form default.
    settings.API_JSON_MAX_BYTES = 10 * MB
    assert oversized(client, "/api/campaigns/", 10 * MB + 1, "application/json"
                     ).status_code == 413


def test_an_api_upload_may_be_as_large_as_an_import(client, settings):
    settings.API_JSON_MAX_BYTES = 1000
    response = oversized(client, "/api/campaigns/s/items/import/", 5000)
    assert response.status_code != 413  # read further: here, refused for want of a token
    assert response.status_code == 401


def test_a_live_server_answers_413_before_the_body_is_sent(live_server):
    """Over a real socket: the headers of a 150 MB upload are answered at once, so nothing
    waited for (or spooled) the body."""
    host, port = live_server.thread.host, live_server.thread.port
    with socket.create_connection((host, port), timeout=10) as conn:
        conn.sendall((f"POST /c/any-study/ HTTP/1.1\r\nHost: {host}\r\n"
                      f"Content-Type: {MULTIPART}\r\nContent-Length: {150 * MB}\r\n\r\n"
                      "--xyz\r\n").encode())
        answer = conn.recv(4096).decode("latin-1")
    assert answer.startswith("HTTP/1.1 413")
