"""Rate limits on the worker pages (/c/ and /a/), per assignment token and per client address.

Counting is django-ratelimit's (fixed windows in the cache); this middleware picks the keys
and answers 429 as a page or as JSON.
"""
import logging
import re

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django_ratelimit.core import get_usage

from .errors import json_error, wants_json

logger = logging.getLogger(__name__)

WORKER_PATH = re.compile(r"^/(?:c/(?P<slug>[-\w]+)|a/(?P<token>[-\w]+))/")


def client_address(request: HttpRequest) -> str:
    """REMOTE_ADDR, or the X-Forwarded-For entry added by the outermost trusted proxy."""
    hops = settings.RATELIMIT_TRUSTED_PROXIES
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if hops > 0 and forwarded:
        entries = [part.strip() for part in forwarded.split(",") if part.strip()]
        if entries:
            return entries[max(0, len(entries) - hops)]
    return request.META.get("REMOTE_ADDR", "") or "unknown"


def hit(request: HttpRequest, *, scope: str, key: str, limit: int) -> int | None:
    """Count one request against `key`; the seconds to wait if it is over `limit`, else None.

    Fails open: if the cache (Redis) is unreachable, nobody is limited and the page still works.
    """
    try:
        usage = get_usage(request, group=f"worker-{scope}", key=lambda group, request: key,
                          rate=(limit, settings.RATELIMIT_WINDOW_SECONDS), increment=True)
    except Exception as exc:  # noqa: BLE001 - cache down: fail open
        logger.warning("rate limit not applied, cache unavailable: %s", exc)
        return None
    if usage is None or not usage["should_limit"]:  # None: the cache failed (fail open)
        return None
    return max(1, usage["time_left"])


def too_many_requests(request: HttpRequest, retry_after: int, scope: str) -> HttpResponse:
    message = (
        "Too many requests. Please wait a moment and try again; "
        "your answers so far are saved."
    )
    if wants_json(request):
        response = json_error(message, status=429, code="rate_limited", scope=scope,
                              retry_after=retry_after)
    else:
        html = render_to_string(
            "http/rate_limited.html", {"retry_after": retry_after}, request=None
        )
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
                retry_after = hit(request, scope=scope, key=key, limit=limit)
                if retry_after is not None:
                    return too_many_requests(request, retry_after, scope)
        return self.get_response(request)
