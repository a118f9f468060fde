"""A Redis cache that degrades to "no cache" while Redis is unreachable, instead of failing pages.

The cache only holds rate-limit counters and throttle histories: losing them for a while is
harmless, whereas an exception would turn every worker page and API call into a 500.
"""
import logging
import time

from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

UNREACHABLE = (RedisConnectionError, RedisTimeoutError, OSError)
WARN_EVERY_SECONDS = 10.0


class FailSoftRedisCache(RedisCache):
    """RedisCache whose reads miss and whose writes are dropped while Redis is down."""

    _last_warning = 0.0

    def _down(self, operation: str, exc: Exception) -> None:
        now = time.monotonic()
        if now - FailSoftRedisCache._last_warning >= WARN_EVERY_SECONDS:
            FailSoftRedisCache._last_warning = now
            logger.warning("cache unavailable (%s skipped): %s", operation, exc)

    def get(self, key, default=None, version=None):
        try:
            return super().get(key, default, version)
        except UNREACHABLE as exc:
            self._down("get", exc)
            return default

    def get_many(self, keys, version=None):
        try:
            return super().get_many(keys, version)
        except UNREACHABLE as exc:
            self._down("get_many", exc)
            return {}

    def has_key(self, key, version=None):
        try:
            return super().has_key(key, version)
        except UNREACHABLE as exc:
            self._down("has_key", exc)
            return False

    def add(self, key, value, timeout=None, version=None):
        try:
            return super().add(key, value, timeout, version)
        except UNREACHABLE as exc:
            self._down("add", exc)
            return False

    def set(self, key, value, timeout=None, version=None):
        try:
            return super().set(key, value, timeout, version)
        except UNREACHABLE as exc:
            self._down("set", exc)
            return None

    def set_many(self, data, timeout=None, version=None):
        try:
            return super().set_many(data, timeout, version)
        except UNREACHABLE as exc:
            self._down("set_many", exc)
            return list(data)

    def touch(self, key, timeout=None, version=None):
        try:
            return super().touch(key, timeout, version)
        except UNREACHABLE as exc:
            self._down("touch", exc)
            return False

    def incr(self, key, delta=1, version=None):
        try:
            return super().incr(key, delta, version)
        except UNREACHABLE as exc:
            self._down("incr", exc)
            return delta  # as if the counter started now: nobody is limited while Redis is down

    def delete(self, key, version=None):
        try:
            return super().delete(key, version)
        except UNREACHABLE as exc:
            self._down("delete", exc)
            return False

    def delete_many(self, keys, version=None):
        try:
            return super().delete_many(keys, version)
        except UNREACHABLE as exc:
            self._down("delete_many", exc)
            return None

    def clear(self):
        try:
            return super().clear()
        except UNREACHABLE as exc:
            self._down("clear", exc)
            return None
