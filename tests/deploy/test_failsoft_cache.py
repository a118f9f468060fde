"""The Redis cache degrades to "no cache" while Redis is unreachable instead of raising."""
import socket

import pytest

from campaigns.failsoft_cache import FailSoftRedisCache


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again when the socket is


@pytest.fixture
def down_cache():
    return FailSoftRedisCache(
        f"redis://127.0.0.1:{closed_port()}/0",
        {"OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}},
    )


def test_reads_miss_and_writes_are_dropped_while_redis_is_down(down_cache):
    assert down_cache.get("k", "default") == "default"
    assert down_cache.get_many(["a", "b"]) == {}
    assert down_cache.add("k", 1) is False
    down_cache.set("k", 1)
    assert down_cache.incr("k") == 1
    assert down_cache.has_key("k") is False
    assert down_cache.delete("k") is False
    down_cache.delete_many(["k"])
    down_cache.clear()


def test_a_drf_throttle_on_the_down_cache_lets_requests_through(down_cache, rf, monkeypatch):
    from rest_framework.throttling import SimpleRateThrottle

    class Throttle(SimpleRateThrottle):
        rate = "1/min"
        cache = down_cache

        def get_cache_key(self, request, view):
            return "throttle-test"

    request = rf.get("/api/x/")
    assert all(Throttle().allow_request(request, None) for _ in range(3))
