"""A database outage answers 503 "please retry" (page or JSON), never a 500 trace."""
import logging
import sys

from django.db import connections
from django.db.utils import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from .deadline import is_timeout, took_too_long
from .errors import json_error, server_error_page, wants_json

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
MESSAGE = (
    "The service is briefly unavailable. Please wait a few seconds and try again; "
    "answers you saved before are kept."
)


def retry_later(request: HttpRequest) -> HttpResponse:
    if wants_json(request):
        response = json_error(MESSAGE, status=503, code="unavailable",
                              retry_after=RETRY_AFTER_SECONDS)
    else:
        try:
            html = render_to_string("http/retry_later.html", request=None)
        except Exception:  # noqa: BLE001 - the page must not fail; fall back to plain text
            html = MESSAGE
        response = HttpResponse(html, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response


class DatabaseOutageMiddleware:
    """Turns a lost or refused database connection into a 503 that asks the client to retry."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception):
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        if is_timeout(exception):  # the request's deadline, not an outage
            logger.warning("statement timeout on %s %s", request.method, request.path)
            return took_too_long(request)
        logger.warning("database unavailable on %s %s: %s", request.method, request.path,
                       str(exception).strip()[:200])
        # Drop broken connections now so the next request in this process reconnects.
        for conn in connections.all(initialized_only=True):
            try:
                if conn.connection is not None and not conn.is_usable():
                    conn.close()
            except Exception:  # noqa: BLE001, S110 - best effort; request_finished retries it
                pass
        return retry_later(request)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: a database error raised outside a view (e.g. in a middleware) is a 503 too."""
    exception = sys.exc_info()[1]
    if isinstance(exception, OperationalError) and is_timeout(exception):
        return took_too_long(request)
    if isinstance(exception, OperationalError | InterfaceError):
        return retry_later(request)
    return server_error_page(request)
