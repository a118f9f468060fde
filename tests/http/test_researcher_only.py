"""Sessions, authentication and messages run for the researchers' pages only: a worker
request passes them by and loses nothing."""
import pytest
from django.core import checks

from tests.factories import make_campaign, make_items

pytestmark = pytest.mark.django_db


def test_a_worker_request_gets_no_session_user_or_messages(client, owner, researcher):
    campaign = make_campaign(owner=owner)
    make_items(campaign, 1)
    client.force_login(researcher)  # even a researcher's browser: the worker page ignores it
    response = client.get(f"/c/{campaign.slug}/", {"PROLIFIC_PID": "a" * 24,
                                                   "STUDY_ID": "s", "SESSION_ID": "s"})
    assert response.status_code == 200
    request = response.wsgi_request
    assert not hasattr(request, "session")
    assert not hasattr(request, "user")
    assert not hasattr(request, "_messages")
    assert "X-Frame-Options" not in response.headers  # CSP's frame-ancestors says who frames
    assert "frame-ancestors 'self' https://www.mturk.com" in response.headers[
        "Content-Security-Policy"]
    assert "sessionid" not in response.cookies


def test_a_researcher_page_still_has_them_all(researcher_client):
    response = researcher_client.get("/admin/")
    assert response.status_code == 200
    request = response.wsgi_request
    assert request.user.is_authenticated and request.session.session_key
    assert hasattr(request, "_messages")
    assert response.headers["X-Frame-Options"] == "DENY"


def test_an_unknown_worker_page_answers_its_own_404_without_them(client):
    response = client.get("/a/no-such-token/1/")
    assert response.status_code == 404
    assert not hasattr(response.wsgi_request, "user")


def test_the_admin_finds_the_middleware_it_needs():
    errors = [m for m in checks.run_checks() if m.id.startswith("admin.")]
    assert errors == []
