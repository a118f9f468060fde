"""Request size limits: an oversized body gets a clear 413 before anything reads it."""
from django.conf import settings
from django.http import HttpRequest, HttpResponse

from .ratelimit import json_error, wants_json

# Multipart bodies carry uploaded files (item imports), which stream to disk: the import limit
# applies to them, plus some room for the other form fields.
MULTIPART_SLACK_BYTES = 1024 * 1024


def body_limit(request: HttpRequest) -> int | None:
    content_type = request.META.get("CONTENT_TYPE", "")
    if content_type.startswith("multipart/form-data"):
        uploads = max(settings.IMPORT_MAX_BYTES,
                      getattr(settings, "API_UPLOAD_MAX_BYTES", 0) or 0)
        return uploads + MULTIPART_SLACK_BYTES
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE  # None disables the check


def too_large(request: HttpRequest, limit: int) -> HttpResponse:
    megabytes = f"{limit / (1024 * 1024):.0f} MB"
    message = f"The request is too large: at most {megabytes} can be sent at once."
    if wants_json(request):
        return json_error(message, status=413, code="too_large", limit_bytes=limit)
    return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")


class RequestSizeMiddleware:
    """Answers 413 when Content-Length exceeds the limit for the body's kind."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = body_limit(request)
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if limit is not None and length > limit:
            return too_large(request, limit)
        return self.get_response(request)
