"""Uploaded item images, served to the worker pages (same origin, so img-src 'self' covers them)."""
from __future__ import annotations

import mimetypes

from django.core.files.storage import storages
from django.http import FileResponse, Http404, HttpRequest
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

from ..schema.images import STORAGE, image_problem_cheap


@require_GET
@cache_control(max_age=3600)
def item_image(request: HttpRequest, name: str) -> FileResponse:
    """One uploaded image by its relative name; anything else (other files, ../) is a 404."""
    storage = storages[STORAGE]
    if image_problem_cheap(name) or "://" in name or not storage.exists(name):
        raise Http404("No such image.")
    content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    response = FileResponse(storage.open(name, "rb"), content_type=content_type)
    response["X-Content-Type-Options"] = "nosniff"
    return response
