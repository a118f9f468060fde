"""The "image" display format's values: an uploaded file under MEDIA_ROOT/item-images, or an
https URL on a host the operator allowed (IMAGE_HOSTS). The same rule decides what an import
accepts, what the item page shows and what instructions' Markdown may show; IMAGE_HOSTS also
widens the Content-Security-Policy's img-src (annotate/settings.py)."""
from __future__ import annotations

from pathlib import PurePosixPath
from urllib.parse import urlsplit

from django.conf import settings
from django.core.files.storage import storages
from django.urls import reverse

STORAGE = "item_images"
EXTENSIONS = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif")  # not SVG: it can hold scripts
MAX_PATH = 500


def _is_url(value: str) -> bool:
    return "://" in value or value.startswith("//")


def url_problem(value: str) -> str | None:
    """Why an image URL may not be shown, or None (https on an allowed host)."""
    try:
        parts = urlsplit(value)
    except ValueError:
        return "not a valid URL"
    allowed = settings.IMAGE_HOSTS
    if parts.scheme != "https":
        return "an image URL must start with https://"
    host = (parts.hostname or "").lower()
    if host not in allowed:
        hosts = ", ".join(allowed) if allowed else "none are configured"
        return f"image host {host!r} is not allowed (IMAGE_HOSTS: {hosts})"
    return None


def file_problem(value: str) -> str | None:
    """Why an uploaded image's name is unusable, or None (a safe relative path that exists)."""
    path = PurePosixPath(value)
    if (len(value) > MAX_PATH or path.is_absolute() or ".." in path.parts or "\\" in value
            or not path.parts):
        return "an image file must be a relative path such as cats/01.png"
    if path.suffix.lower() not in EXTENSIONS:
        return f"an image file must end with one of {', '.join(EXTENSIONS)}"
    if not storages[STORAGE].exists(value):
        return f"no uploaded image {value!r} (upload it to the item images first)"
    return None


def image_problem(value: object) -> str | None:
    """Why an item's image value cannot be shown, or None."""
    if not isinstance(value, str) or not value.strip():
        return "expected an image URL or the name of an uploaded image"
    value = value.strip()
    return url_problem(value) if _is_url(value) else file_problem(value)


def image_src(value: object) -> str:
    """Where the page loads the image from ("" when the value is not an allowed image)."""
    if not isinstance(value, str) or image_problem_cheap(value.strip()):
        return ""
    value = value.strip()
    return value if _is_url(value) else reverse("item_image", args=[value])


def image_problem_cheap(value: str) -> str | None:
    """image_problem() without the storage lookup (the page: the import checked the file)."""
    if _is_url(value):
        return url_problem(value)
    path = PurePosixPath(value)
    if not value or path.is_absolute() or ".." in path.parts or "\\" in value:
        return "bad path"
    return None if path.suffix.lower() in EXTENSIONS else "bad extension"
