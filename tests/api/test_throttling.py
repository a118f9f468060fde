"""Rate limits: token-authenticated requests per user, sessions not."""
import pytest

from campaigns.api.throttling import TokenRateThrottle

pytestmark = pytest.mark.django_db


def test_token_requests_over_the_rate_get_429_with_retry_after(api, campaign, monkeypatch):
    monkeypatch.setattr(TokenRateThrottle, "THROTTLE_RATES", {"token": "2/min"})
    for _ in range(2):
        assert api.get("/api/campaigns/").status_code == 200
    response = api.get("/api/campaigns/")
    assert response.status_code == 429
    assert response.json()["extra"]["code"] == "throttled"
    assert int(response["Retry-After"]) == response.json()["extra"]["wait_seconds"] > 0


def test_session_requests_are_not_throttled(client, owner, monkeypatch):
    monkeypatch.setattr(TokenRateThrottle, "THROTTLE_RATES", {"token": "1/min"})
    client.force_login(owner)
    assert [client.get("/api/campaigns/").status_code for _ in range(3)] == [200] * 3
