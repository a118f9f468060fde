"""The Redis cache degrades to "no cache" while Redis is unreachable instead of raising."""
import socket
import time

import pytest
from django.core.cache import caches
from django.test import override_settings

pytestmark = pytest.mark.django_db


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again when the socket is


@pytest.fixture
def down_cache():
    """The production cache configuration, pointed at a port where no Redis listens."""
    config = {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": f"redis://127.0.0.1:{closed_port()}/0",
        "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 0.5, "SOCKET_TIMEOUT": 0.5,
                    "IGNORE_EXCEPTIONS": True},
    }
    with override_settings(CACHES={"default": config}):
        yield caches["default"]


def test_reads_miss_and_writes_are_dropped_while_redis_is_down(down_cache):
    started = time.monotonic()
    assert down_cache.get("k", "default") == "default"
    assert down_cache.get_many(["a", "b"]) == {}
    assert not down_cache.add("k", 1)
    down_cache.set("k", 1)
    assert not down_cache.incr("k")
    assert not down_cache.has_key("k")
    assert not down_cache.delete("k")
    down_cache.delete_many(["k"])
    down_cache.clear()
    assert time.monotonic() - started < 5


def test_a_drf_throttle_on_the_down_cache_lets_requests_through(down_cache, rf):
    from rest_framework.throttling import SimpleRateThrottle

    class Throttle(SimpleRateThrottle):
        rate = "1/min"
        cache = down_cache

        def get_cache_key(self, request, view):
            return "throttle-test"

    request = rf.get("/api/x/")
    assert all(Throttle().allow_request(request, None) for _ in range(3))


def test_worker_pages_are_not_rate_limited_while_redis_is_down(down_cache, client, settings):
    settings.RATELIMIT_PER_TOKEN = settings.RATELIMIT_PER_ADDRESS = 1
    statuses = [client.get("/a/down-token/1/").status_code for _ in range(4)]
    assert 429 not in statuses and 500 not in statuses
