"""A request's deadline: in the web processes a SQL statement may run
DB_STATEMENT_TIMEOUT_SECONDS (PostgreSQL's statement_timeout, set on the connection by
settings; docker/gunicorn.conf.py puts it 10 s inside gunicorn's worker timeout). A statement
stopped by it answers a clear 503 "took too long" (JSON under /api/, a page elsewhere) through
annotate.http.outage, instead of the worker being killed mid-request with every other page
waiting behind it. A request stopped by gunicorn itself (Python busy past GUNICORN_TIMEOUT) is
answered by annotate.http.gunicorn_worker in the same shape.
"""
from django.conf import settings
from django.http import HttpRequest, HttpResponse

from .errors import json_error, wants_json

QUERY_CANCELED = "57014"  # PostgreSQL's SQLSTATE for a statement stopped by statement_timeout


def is_timeout(exception: BaseException) -> bool:
    """Whether a database error is a statement stopped by the deadline."""
    cause = exception.__cause__ or exception
    return getattr(cause, "pgcode", None) == QUERY_CANCELED


def took_too_long(request: HttpRequest) -> HttpResponse:
    seconds = settings.DB_STATEMENT_TIMEOUT_SECONDS
    took = f"longer than {seconds:g} seconds" if seconds else "too long"
    message = (f"The request took {took} and was stopped. Try a smaller request, or the "
               "job-based endpoint if there is one.")
    if wants_json(request):
        response = json_error(message, status=503, code="timeout", timeout_seconds=seconds)
    else:
        response = HttpResponse(message, status=503, content_type="text/plain; charset=utf-8")
    response["Cache-Control"] = "no-store"
    return response
