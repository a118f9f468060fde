"""The request-size limit: an oversized body gets a clear 413 before anything reads it.

This is the one body-size check for pages and API alike, one limit per kind of path, taken
from the request's Content-Length before any middleware or view reads (or spools) the body:

- worker pages (/c/, /a/, /q/): WORKER_BODY_MAX_BYTES (1 MB); nobody uploads a file there, so an
  anonymous 150 MB POST is refused at once;
- upload views marked with @takes_uploads (the admin's item and judgment imports, the API's
  item and judgment imports), multipart bodies: IMPORT_MAX_BYTES plus room for the form fields;
- everything else under /api/ (JSON bodies, and uploads sent as JSON): API_JSON_MAX_BYTES;
- every other page (admin forms): DATA_UPLOAD_MAX_MEMORY_SIZE.

DRF's parsers read the raw stream, so Django's own DATA_UPLOAD_MAX_MEMORY_SIZE never sees a
JSON body; checking Content-Length here covers both.
"""
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve

from .errors import json_error, wants_json

# Multipart bodies carry uploaded files (item imports), which stream to disk: the import limit
# applies to them, plus some room for the other form fields.
MULTIPART_SLACK_BYTES = 1024 * 1024
# Every path under these is a worker page (even one that matches no study or token).
WORKER_PREFIXES = ("/c/", "/a/", "/q/")


def takes_uploads(view):
    """Mark a view (function or class) as an upload view: its multipart bodies may be as large
    as an import file (IMPORT_MAX_BYTES)."""
    view.takes_uploads = True
    return view


def _is_upload_view(request: HttpRequest) -> bool:
    try:
        func = resolve(request.path_info).func
    except Resolver404:
        return False
    view_class = getattr(func, "view_class", None) or getattr(func, "cls", None)
    return bool(getattr(func, "takes_uploads", False)
                or getattr(view_class, "takes_uploads", False))


def body_limit(request: HttpRequest) -> int | None:
    """The largest body this request may carry, in bytes (None: no limit)."""
    path = request.path_info
    if path.startswith(WORKER_PREFIXES):
        return settings.WORKER_BODY_MAX_BYTES
    multipart = request.META.get("CONTENT_TYPE", "").startswith("multipart/form-data")
    if multipart and _is_upload_view(request):
        return settings.IMPORT_MAX_BYTES + MULTIPART_SLACK_BYTES
    if path.startswith("/api/"):
        return settings.API_JSON_MAX_BYTES
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE  # None disables it


def content_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def too_large(request: HttpRequest, limit: int) -> HttpResponse:
    megabytes = f"{limit / (1024 * 1024):.0f} MB" if limit >= 1024 * 1024 else f"{limit} bytes"
    message = f"The request is too large: at most {megabytes} can be sent at once."
    if wants_json(request):
        response = json_error(message, status=413, code="payload_too_large", limit_bytes=limit)
    else:
        response = HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")
    return response


class RequestSizeMiddleware:
    """Answers 413 when Content-Length exceeds the limit for the body's kind and path."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        length = content_length(request)
        if length:
            limit = body_limit(request)
            if limit is not None and length > limit:
                return too_large(request, limit)
        return self.get_response(request)
