"""The request-size limit: an oversized body gets a clear 413 before anything reads it.

This is the one Content-Length check for pages and API alike. DRF's parsers read the raw stream,
so Django's own DATA_UPLOAD_MAX_MEMORY_SIZE never sees a JSON body; checking here covers both.
"""
from django.conf import settings
from django.http import HttpRequest, HttpResponse

from .errors import json_error, wants_json

# Multipart bodies carry uploaded files (item imports), which stream to disk: the import limit
# applies to them, plus some room for the other form fields.
MULTIPART_SLACK_BYTES = 1024 * 1024


def body_limit(request: HttpRequest) -> int | None:
    """The largest body this request may carry, in bytes (None: no limit)."""
    multipart = request.META.get("CONTENT_TYPE", "").startswith("multipart/form-data")
    form_limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE  # None disables it
    if request.path_info.startswith("/api/"):
        api_limit = settings.API_UPLOAD_MAX_BYTES
        return api_limit if multipart or form_limit is None else min(form_limit, api_limit)
    return settings.IMPORT_MAX_BYTES + MULTIPART_SLACK_BYTES if multipart else form_limit


def content_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def too_large(request: HttpRequest, limit: int) -> HttpResponse:
    megabytes = f"{limit / (1024 * 1024):.0f} MB" if limit >= 1024 * 1024 else f"{limit} bytes"
    message = f"The request is too large: at most {megabytes} can be sent at once."
    if wants_json(request):
        return json_error(message, status=413, code="payload_too_large", limit_bytes=limit)
    return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")


class RequestSizeMiddleware:
    """Answers 413 when Content-Length exceeds the limit for the body's kind and path."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = body_limit(request)
        if limit is not None and content_length(request) > limit:
            return too_large(request, limit)
        return self.get_response(request)
