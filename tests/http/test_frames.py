"""Who may frame what: worker responses (errors and early answers too) let MTurk frame them."""
import pytest
from django.core.cache import cache

pytestmark = pytest.mark.django_db

MTURK = "frame-ancestors 'self' https://www.mturk.com https://workersandbox.mturk.com"


def test_a_rate_limited_worker_page_may_still_be_framed_by_mturk(client, settings):
    settings.RATELIMIT_ENABLED = True
    settings.RATELIMIT_PER_TOKEN = 2
    cache.clear()
    try:
        responses = [client.get("/a/hammered-token/1/") for _ in range(4)]
    finally:
        cache.clear()
    limited = responses[-1]
    assert limited.status_code == 429
    assert "X-Frame-Options" not in limited.headers
    assert MTURK in limited.headers["Content-Security-Policy"]


def test_the_operator_can_name_the_sites_that_frame_the_worker_pages(client, settings):
    settings.WORKER_FRAME_ANCESTORS = ["'self'", "https://lms.example.org"]
    csp = client.get("/c/no-such-study/").headers["Content-Security-Policy"]
    assert "frame-ancestors 'self' https://lms.example.org" in csp
    assert "mturk" not in csp


def test_researcher_pages_and_the_api_are_never_framed(client):
    for path in ("/admin/login/", "/api/schema/", "/healthz"):
        response = client.get(path)
        assert "frame-ancestors 'none'" in response.headers.get("Content-Security-Policy", ""), path


def test_a_qualification_test_page_may_be_framed_by_mturk_and_is_rate_limited(client,
                                                                                settings):
    settings.RATELIMIT_ENABLED = True
    settings.RATELIMIT_PER_TOKEN = 2
    cache.clear()
    try:
        responses = [client.get("/q/hammered-token/1/") for _ in range(4)]
    finally:
        cache.clear()
    assert responses[0].status_code == 404 and responses[-1].status_code == 429
    for response in responses:
        assert MTURK in response.headers["Content-Security-Policy"]
