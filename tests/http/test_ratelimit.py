"""Rate limits on the worker pages: a person's pace passes, a script hammering a page does not.

The window moves: the limit holds over any 60 seconds, not per clock minute.
"""
import os
from unittest import mock

import pytest
from django.core.cache import cache

from annotate.http import ratelimit

pytestmark = pytest.mark.django_db
# Counters shared by the web processes of a deployment: this run's Redis database.
REDIS_URL = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture(autouse=True)
def _fresh_counters():
    cache.clear()
    yield
    cache.clear()


class Clock:
    """The counting library's clock (limits' in-memory store), moved by hand."""

    def __init__(self, now: float):
        self.now = now

    def time(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    from limits.storage import memory

    clock = Clock(1_800_000_030.0)
    monkeypatch.setattr(memory, "time", clock)
    monkeypatch.setattr(ratelimit, "time", clock)
    return clock


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


def test_the_limiter_fails_open_when_the_store_is_down(client, settings):
    settings.RATELIMIT_PER_TOKEN = 1
    with mock.patch("limits.strategies.MovingWindowRateLimiter.hit",
                    side_effect=ConnectionError("redis down")):
        statuses = [client.get("/a/down-token/1/").status_code for _ in range(5)]
    assert 429 not in statuses


def test_no_burst_fits_across_a_window_boundary(client, settings, clock):
    """A fixed window lets 2 x the limit through around a minute boundary (the last second of
    one window, the first of the next); the moving window counts the last 60 seconds."""
    settings.RATELIMIT_PER_ADDRESS = 10
    clock.now = 1_800_000_059.5  # half a second before a minute boundary
    assert all(client.get(f"/a/t{n}/1/").status_code != 429 for n in range(10))
    clock.now = 1_800_000_060.5  # just after it
    response = client.get("/a/t10/1/")
    assert response.status_code == 429
    assert 55 <= int(response["Retry-After"]) <= 60  # when the oldest of the ten is a minute old
    clock.now = 1_800_000_119.6  # the first ten are a minute old: room again
    assert client.get("/a/t11/1/").status_code != 429


def test_refused_requests_do_not_extend_the_wait(client, settings, clock):
    settings.RATELIMIT_PER_ADDRESS = 2
    client.get("/a/x/1/"), client.get("/a/y/1/")
    for _ in range(30):  # a script retrying every two seconds
        clock.now += 2
        client.get("/a/z/1/")
    clock.now = 1_800_000_030.0 + 61
    assert client.get("/a/z/1/").status_code != 429


def test_counts_are_shared_through_redis(settings):
    """With the cache in Redis (production), every gunicorn worker counts in the same place:
    two limiters (two processes) see each other's hits."""
    settings.CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache",
                                   "LOCATION": REDIS_URL}}
    ratelimit._LIMITERS.clear()
    try:
        ratelimit.reset()
        hits = [ratelimit.hit(scope="test", key="shared", limit=3, window=60) for _ in range(3)]
        assert hits == [None, None, None]
        ratelimit._LIMITERS.clear()  # another process: a limiter of its own, the same Redis
        retry_after = ratelimit.hit(scope="test", key="shared", limit=3, window=60)
        assert retry_after is not None and 1 <= retry_after <= 60
        assert ratelimit.hit(scope="test", key="other", limit=3, window=60) is None
    finally:
        ratelimit.reset()
        ratelimit._LIMITERS.clear()


def test_the_client_address_comes_from_a_trusted_proxy_only(rf, settings):
    request = rf.get("/c/x/", REMOTE_ADDR="10.1.1.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.5")
    assert ratelimit.client_address(request) == "10.1.1.1"
    settings.RATELIMIT_TRUSTED_PROXIES = 1
    assert ratelimit.client_address(request) == "203.0.113.5"


# --- newcomer starts scale with the study -----------------------------------------------------

@pytest.mark.parametrize(("size", "limits"), [
    (6, (2, 10)),  # a tiny study: two starts an address, ten from addresses seen before
    (105, (6, 27)),
    (10_000, (10, 2000)),  # capped by CLAIM_LIMIT_PER_ADDRESS and CLAIM_LIMIT_PER_STUDY
    (0, (10, 2000)),  # size unknown: the fixed limits
])
def test_newcomer_limits_scale_with_the_study(settings, size, limits):
    settings.CLAIM_LIMIT_PER_ADDRESS, settings.CLAIM_LIMIT_PER_STUDY = 10, 2000
    settings.CLAIM_SHARE_PER_ADDRESS, settings.CLAIM_SHARE_REPEAT = 0.05, 0.25
    assert ratelimit.newcomer_limits(size) == limits


def test_addresses_seen_before_share_one_budget_while_a_fresh_address_always_starts(rf, settings):
    settings.RATELIMIT_ENABLED = True
    settings.CLAIM_LIMIT_PER_ADDRESS, settings.CLAIM_LIMIT_PER_STUDY = 10, 2000
    settings.CLAIM_SHARE_PER_ADDRESS, settings.CLAIM_SHARE_REPEAT = 0.05, 0.25
    ratelimit.reset()

    def start(address: str, n: int) -> int | None:
        request = rf.post("/c/study/", REMOTE_ADDR=address)
        return ratelimit.start_retry_after(request, campaign_id=7, worker_key=f"p:{n}",
                                           newcomer=True, study_size=105)

    started = sum(start(f"203.0.113.{a}", a * 100 + n) is None
                  for a in range(12) for n in range(12))
    assert started == 12 + 27  # a first start per address, then a quarter of the study
    assert start("198.51.100.1", 9999) is None  # a newcomer from a fresh address
    assert start("198.51.100.1", 9998) is not None  # ... but not a second one now
