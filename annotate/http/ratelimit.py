"""Rate limits on the worker pages (/c/, /a/, /q/) and on starting work, per key in a moving
window.

Counting is the `limits` library's moving window (every hit's time is kept, so no burst fits
across a window boundary), stored in Redis when the cache is Redis (CACHE_URL / REDIS_URL) and
in this process's memory otherwise. This module picks the keys and answers 429 as a page or
as JSON. Two families of limits:

- pages: every request to a worker page, per assignment token and per client address
  (RATELIMIT_PER_TOKEN, RATELIMIT_PER_ADDRESS per RATELIMIT_WINDOW_SECONDS);
- starts: every attempt to be handed work (the study link's start POST), per worker id, and
  a newcomer's per client address and study and per study (CLAIM_LIMIT_*), far below the
  page limit, so that a loop of made-up ids cannot empty a campaign.
"""
from __future__ import annotations

import logging
import math
import re
import threading
import time

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from limits import RateLimitItemPerSecond
from limits.storage import MemoryStorage, RedisStorage, Storage
from limits.strategies import MovingWindowRateLimiter

from .errors import json_error, wants_json

logger = logging.getLogger(__name__)

# The study link /c/<slug>/, and the pages under a token: an assignment's /a/ and a
# qualification test's /q/.
WORKER_PATH = re.compile(r"^/(?:c/(?P<slug>[-\w]+)|[aq]/(?P<token>[-\w]+))/")
KEY_PREFIX = "annotate-limits"
PAGE_MESSAGE = ("Too many requests came from your browser in a short time. Please wait and "
                "then reload the page. Your answers so far are saved.")
START_MESSAGE = ("Too many new starts of this study came from your connection in a short time, "
                 "so no work was handed out. Please wait and then try again.")
_LIMITERS: dict[str, MovingWindowRateLimiter] = {}  # storage location -> limiter
_BUILDING = threading.Lock()


def client_address(request: HttpRequest) -> str:
    """REMOTE_ADDR, or the X-Forwarded-For entry added by the outermost trusted proxy."""
    hops = settings.RATELIMIT_TRUSTED_PROXIES
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if hops > 0 and forwarded:
        entries = [part.strip() for part in forwarded.split(",") if part.strip()]
        if entries:
            return entries[max(0, len(entries) - hops)]
    return request.META.get("REMOTE_ADDR", "") or "unknown"


def _location() -> str:
    """The Redis URL of the default cache, or '' when the cache lives in process memory."""
    config = settings.CACHES["default"]
    if "redis" not in config.get("BACKEND", "").lower():
        return ""
    location = config.get("LOCATION") or ""
    return location[0] if isinstance(location, (list, tuple)) else location


def _storage(location: str) -> Storage:
    if not location:
        return MemoryStorage()
    # Short timeouts as the cache's: with Redis down a request waits at most half a second.
    return RedisStorage(location, key_prefix=KEY_PREFIX, socket_timeout=0.5,
                        socket_connect_timeout=0.5)


def _limiter() -> MovingWindowRateLimiter:
    location = _location()
    limiter = _LIMITERS.get(location)
    if limiter is None:
        # One thread builds it: `limits` imports redis lazily and, raced by a threaded
        # worker's first requests, read a half-imported module's version and failed open.
        with _BUILDING:
            limiter = _LIMITERS.get(location)
            if limiter is None:
                limiter = _LIMITERS[location] = MovingWindowRateLimiter(_storage(location))
    return limiter


def hit(*, scope: str, key: str, limit: int, window: int | None = None) -> int | None:
    """Count one request against (`scope`, `key`); the seconds to wait when it is over `limit`
    requests in the last `window` seconds (RATELIMIT_WINDOW_SECONDS by default), else None.

    A refused request is not counted. Fails open: if the store (Redis) is unreachable, nobody
    is limited and the page still works.
    """
    item = RateLimitItemPerSecond(max(1, limit), window or settings.RATELIMIT_WINDOW_SECONDS)
    try:
        limiter = _limiter()
        if limiter.hit(item, scope, key):
            return None
        reset = limiter.get_window_stats(item, scope, key).reset_time
    except Exception as exc:  # noqa: BLE001 - store down: fail open
        logger.warning("rate limit not applied, store unavailable: %s", exc)
        return None
    return max(1, math.ceil(reset - time.time()))


def reset() -> None:
    """Forget every count (tests: each starts with empty counters)."""
    for limiter in _LIMITERS.values():
        try:
            limiter.storage.reset()
        except Exception as exc:  # noqa: BLE001 - store down: nothing to forget
            logger.warning("rate limits not reset: %s", exc)


def start_retry_after(request: HttpRequest, *, campaign_id: int, worker_key: str,
                      newcomer: bool, study_size: int = 0) -> int | None:
    """Count an attempt to be handed work on study `campaign_id` by `worker_key` (platform and
    id: a Prolific or MTurk id, or a plain link's cookie); the seconds to wait when one of the
    start limits is reached, else None. The one place that states those limits:

    - every start counts per worker id and study (CLAIM_LIMIT_PER_WORKER);
    - a newcomer's start (an id this study has not seen) also counts per client address and
      study, and per study (CLAIM_LIMIT_PER_STUDY). A loop of made-up ids, or a browser that
      drops its cookie, is a stream of newcomers from one address; a worker who comes back for
      more work is not.
    - the newcomer limits adapt to the study's size (`study_size`: the assignments it hands out
      in all; newcomer_limits): one address may start a small share of them, and newcomers
      from addresses that already started one may together start a larger share, so a handful
      of addresses cannot take a study while a newcomer from an address of their own always
      may start.
    """
    if not settings.RATELIMIT_ENABLED:
        return None
    window = settings.CLAIM_WINDOW_SECONDS
    checks = [("start-worker", f"{campaign_id}:{worker_key}", settings.CLAIM_LIMIT_PER_WORKER)]
    if newcomer:
        per_address, per_study_repeat = newcomer_limits(study_size)
        address_key = f"{campaign_id}:{client_address(request)}"
        checks.append(("start-address", address_key, per_address))
        if not _fresh(scope="start-address", key=address_key, limit=per_address, window=window):
            checks.append(("start-study-repeat", str(campaign_id), per_study_repeat))
        checks.append(("start-study", str(campaign_id), settings.CLAIM_LIMIT_PER_STUDY))
    for scope, key, limit in checks:
        retry_after = hit(scope=scope, key=key, limit=limit, window=window)
        if retry_after is not None:
            logger.info("start refused: %s limit reached (%s)", scope, key)
            return retry_after
    return None


def newcomer_limits(study_size: int) -> tuple[int, int]:
    """(newcomer starts one address may make, newcomer starts from addresses that already
    made one, together) per study and window, for a study of `study_size` assignments:
    CLAIM_SHARE_PER_ADDRESS and CLAIM_SHARE_REPEAT of its size, at least 2 and 10, at most
    CLAIM_LIMIT_PER_ADDRESS and CLAIM_LIMIT_PER_STUDY (0: no size known, those limits)."""
    if study_size <= 0:
        return settings.CLAIM_LIMIT_PER_ADDRESS, settings.CLAIM_LIMIT_PER_STUDY
    per_address = math.ceil(study_size * settings.CLAIM_SHARE_PER_ADDRESS)
    repeat = math.ceil(study_size * settings.CLAIM_SHARE_REPEAT)
    return (min(settings.CLAIM_LIMIT_PER_ADDRESS, max(2, per_address)),
            min(settings.CLAIM_LIMIT_PER_STUDY, max(10, repeat)))


def _fresh(*, scope: str, key: str, limit: int, window: int) -> bool:
    """Whether (`scope`, `key`) has no hit in the window (a store that is down: fresh)."""
    item = RateLimitItemPerSecond(max(1, limit), window)
    try:
        return _limiter().get_window_stats(item, scope, key).remaining >= item.amount
    except Exception as exc:  # noqa: BLE001 - store down: fail open
        logger.warning("rate limit not read, store unavailable: %s", exc)
        return True


def too_many_requests(request: HttpRequest, retry_after: int, scope: str,
                      message: str = PAGE_MESSAGE) -> HttpResponse:
    if wants_json(request):
        response = json_error(message, status=429, code="rate_limited", scope=scope,
                              retry_after=retry_after)
    else:
        html = render_to_string("http/rate_limited.html",
                                {"retry_after": retry_after, "message": message,
                                 "wait_minutes": math.ceil(retry_after / 60)}, request=None)
        response = HttpResponse(html, status=429)
    response["Retry-After"] = str(retry_after)
    response["Cache-Control"] = "no-store"
    return response


class RateLimitMiddleware:
    """Turns away a client that sends far more requests to a worker page than a person could."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        match = WORKER_PATH.match(request.path_info)
        if match and settings.RATELIMIT_ENABLED:
            checks = [("address", client_address(request), settings.RATELIMIT_PER_ADDRESS)]
            if match["token"]:
                checks.insert(0, ("token", match["token"][:80], settings.RATELIMIT_PER_TOKEN))
            for scope, key, limit in checks:
                retry_after = hit(scope=scope, key=key, limit=limit)
                if retry_after is not None:
                    return too_many_requests(request, retry_after, scope)
        return self.get_response(request)
