"""Rate limits on the worker pages (/c/ and /a/), per assignment token and per client address."""
import logging
import re
import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

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


def hit(key: str, limit: int, window: int) -> tuple[bool, int]:
    """Count one request against `key`; (allowed, seconds until the window resets).

    Fails open: if the cache (Redis) is unreachable, nobody is limited and the page still works.
    """
    now = time.time()
    bucket = int(now // window)
    retry_after = max(1, int((bucket + 1) * window - now))
    cache_key = f"rl:{key}:{bucket}"
    try:
        cache.add(cache_key, 0, timeout=window + 1)
        count = cache.incr(cache_key)
    except ValueError:  # evicted between add and incr: start the window again
        count = 1
        try:
            cache.set(cache_key, 1, timeout=window + 1)
        except Exception:  # noqa: BLE001 - cache down: fail open
            return True, retry_after
    except Exception as exc:  # noqa: BLE001 - cache down: fail open
        logger.warning("rate limit not applied, cache unavailable: %s", exc)
        return True, retry_after
    return count <= limit, retry_after


def wants_json(request: HttpRequest) -> bool:
    """API paths and clients that ask for JSON (not browsers) get JSON errors."""
    if request.path_info.startswith("/api/"):
        return True
    accept = request.META.get("HTTP_ACCEPT", "")
    return "application/json" in accept and "text/html" not in accept


def json_error(message: str, *, status: int, code: str, **extra) -> JsonResponse:
    """The API's one error shape: {"message": ..., "extra": {"code": ..., ...}}."""
    return JsonResponse({"message": message, "extra": {"code": code, **extra}}, status=status)


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
            "campaigns/rate_limited.html", {"retry_after": retry_after}, request=None
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
            window = settings.RATELIMIT_WINDOW_SECONDS
            checks = [("address", f"ip:{client_address(request)}", settings.RATELIMIT_PER_ADDRESS)]
            if match["token"]:
                token = match["token"][:80]
                checks.insert(0, ("token", f"tok:{token}", settings.RATELIMIT_PER_TOKEN))
            for scope, key, limit in checks:
                allowed, retry_after = hit(key, limit, window)
                if not allowed:
                    return too_many_requests(request, retry_after, scope)
        return self.get_response(request)
