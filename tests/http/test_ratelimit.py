"""Rate limits on the worker pages: a person's pace passes, a script hammering a page does not."""
from unittest import mock

import pytest
from django.core.cache import cache

from annotate.http import ratelimit

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_counters():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _clock_mid_window(monkeypatch):
    """Windows follow the wall clock; a test that straddled a window's end would see its
    counter restart. Pin the clock of the counting library (django-ratelimit)."""
    from types import SimpleNamespace

    from django_ratelimit import core

    monkeypatch.setattr(core, "time", SimpleNamespace(time=lambda: 1_800_000_030.0))


def test_a_worker_at_a_brisk_human_pace_never_meets_the_limit(client, settings):
    # One item every 2 seconds for a whole minute, three requests per item (page, submit, next).
    requests_per_minute = 30 * 3
    assert requests_per_minute < settings.RATELIMIT_PER_TOKEN
    statuses = {client.get("/a/some-token/1/").status_code for _ in range(requests_per_minute)}
    assert 429 not in statuses


def test_a_script_hammering_one_token_is_turned_away_with_a_clear_page(client, settings):
    statuses = [client.get("/a/hammered-token/1/").status_code
                for _ in range(settings.RATELIMIT_PER_TOKEN + 5)]
    assert 429 not in statuses[: settings.RATELIMIT_PER_TOKEN]
    assert statuses[-1] == 429
    response = client.get("/a/hammered-token/1/")
    assert response.status_code == 429
    assert int(response["Retry-After"]) >= 1
    assert b"Please slow down" in response.content
    # Another worker's token from another address is unaffected.
    assert client.get("/a/other-token/1/", REMOTE_ADDR="10.0.0.9").status_code != 429


def test_a_script_rotating_tokens_is_caught_by_the_address_limit(client, settings):
    settings.RATELIMIT_PER_ADDRESS = 20
    statuses = [client.get(f"/a/token-{n}/1/").status_code for n in range(25)]
    assert statuses[:20].count(429) == 0
    assert statuses[-1] == 429
    assert client.get("/c/anything/").status_code == 429
    assert client.get("/c/anything/", REMOTE_ADDR="10.0.0.2").status_code != 429


def test_a_json_client_gets_a_json_error(client, settings):
    settings.RATELIMIT_PER_TOKEN = 1
    client.get("/a/json-token/1/")
    response = client.get("/a/json-token/1/", HTTP_ACCEPT="application/json")
    assert response.status_code == 429
    assert response.json()["extra"]["code"] == "rate_limited"
    assert response.json()["extra"]["scope"] == "token"


def test_other_paths_are_not_limited(client, settings):
    settings.RATELIMIT_PER_ADDRESS = 1
    assert all(client.get("/healthz").status_code != 429 for _ in range(5))


def test_the_limiter_fails_open_when_the_cache_is_down(client, settings):
    settings.RATELIMIT_PER_TOKEN = 1
    with mock.patch.object(cache, "add", side_effect=ConnectionError("redis down")):
        statuses = [client.get("/a/down-token/1/").status_code for _ in range(5)]
    assert 429 not in statuses


def test_the_client_address_comes_from_a_trusted_proxy_only(rf, settings):
    request = rf.get("/c/x/", REMOTE_ADDR="10.1.1.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.5")
    assert ratelimit.client_address(request) == "10.1.1.1"
    settings.RATELIMIT_TRUSTED_PROXIES = 1
    assert ratelimit.client_address(request) == "203.0.113.5"
