"""Who the API lets in: researchers by token or session; nobody by an assignment token."""
import pytest
from rest_framework.test import APIClient

from tests.factories import make_campaign

pytestmark = pytest.mark.django_db

# Every campaign-scoped operation, with a body that would be valid for the owner.
OPERATIONS = [
    ("get", "/api/campaigns/{slug}/", None),
    ("patch", "/api/campaigns/{slug}/", {"name": "Mine now"}),
    ("post", "/api/campaigns/{slug}/status/", {"status": "closed"}),
    ("get", "/api/campaigns/{slug}/progress/", None),
    ("get", "/api/campaigns/{slug}/items/", None),
    ("post", "/api/campaigns/{slug}/items/import/", [{"id": "x", "prompt": "p",
                                                     "completion": "c"}]),
    ("get", "/api/campaigns/{slug}/annotations/", None),
    ("get", "/api/campaigns/{slug}/stats/", None),
    ("get", "/api/campaigns/{slug}/agreement/?question=coherence", None),
    ("post", "/api/campaigns/{slug}/judgments/import/", [{"item": "x", "judge": "j",
                                                         "output": "{}"}]),
    ("get", "/api/campaigns/{slug}/exports/", None),
    ("post", "/api/campaigns/{slug}/exports/", {"format": "csv"}),
]


@pytest.mark.parametrize(("method", "path", "body"), OPERATIONS)
def test_a_second_researcher_gets_404_for_every_operation_on_the_first_ones_campaign(
        other_api, campaign, method, path, body):
    response = getattr(other_api, method)(path.format(slug=campaign.slug), body, format="json")
    assert response.status_code == 404
    assert response.json() == {"message": "No such campaign.", "extra": {"code": "not_found"}}
    campaign.refresh_from_db()
    assert campaign.name != "Mine now" and campaign.status == "live"
    assert not campaign.items.exists() and not campaign.export_jobs.exists()


def test_a_second_researcher_lists_nothing_of_the_first_ones(other_api, campaign):
    assert other_api.get("/api/campaigns/").json()["results"] == []


@pytest.mark.parametrize(("method", "path", "body"), OPERATIONS)
def test_a_workers_assignment_token_opens_nothing(assignment, method, path, body):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {assignment.token}")
    response = getattr(client, method)(path.format(slug=assignment.campaign.slug), body,
                                       format="json")
    assert response.status_code == 401
    assert response.json()["extra"]["code"] == "authentication_failed"
    assert response["WWW-Authenticate"] == "Token"


def test_an_anonymous_request_is_401_with_the_error_shape(campaign):
    response = APIClient().get("/api/campaigns/")
    assert response.status_code == 401
    assert response.json() == {"message": "Authentication credentials were not provided.",
                               "extra": {"code": "not_authenticated"}}


def test_a_logged_in_researcher_may_use_the_api_with_the_session(client, owner, campaign):
    client.force_login(owner)
    response = client.get(f"/api/campaigns/{campaign.slug}/")
    assert response.status_code == 200


def test_a_session_write_without_the_csrf_token_is_403(owner, campaign):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(owner)
    response = client.patch(f"/api/campaigns/{campaign.slug}/", {"name": "x"}, format="json")
    assert response.status_code == 403
    assert set(response.json()) == {"message", "extra"}


def test_a_superuser_sees_every_campaign(django_user_model, owner):
    make_campaign(owner=owner)
    root = django_user_model.objects.create_superuser("root", "root@example.org", "pw-root-123")
    client = APIClient()
    client.force_authenticate(root)
    assert len(client.get("/api/campaigns/").json()["results"]) == 1
