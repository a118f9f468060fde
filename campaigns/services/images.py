"""Upload item images: files an item's `image` display field can name (schema/images.py)."""
from __future__ import annotations

from pathlib import PurePosixPath

from django.core.files.storage import storages
from django.utils.text import get_valid_filename

from ..errors import ServiceError
from ..models import Campaign
from ..schema.images import EXTENSIONS, STORAGE

MAX_IMAGE_BYTES = 10 * 1024 * 1024
# What each extension's file starts with: a page or script renamed to .png is refused.
_SIGNATURES = {
    ".png": (b"\x89PNG\r\n\x1a\n",),
    ".jpg": (b"\xff\xd8\xff",),
    ".jpeg": (b"\xff\xd8\xff",),
    ".gif": (b"GIF87a", b"GIF89a"),
    ".webp": (b"RIFF",),
    ".avif": (b"",),  # checked by its ftyp box below
}


def _problem(name: str, size: int, head: bytes) -> str | None:
    suffix = PurePosixPath(name).suffix.lower()
    if suffix not in EXTENSIONS:
        return f"{name}: an image must end with one of {', '.join(EXTENSIONS)}"
    if size > MAX_IMAGE_BYTES:
        return f"{name}: {size:,} bytes; the limit is {MAX_IMAGE_BYTES:,} bytes"
    if suffix == ".avif":
        ok = head[4:12] == b"ftypavif"
    elif suffix == ".webp":
        ok = head.startswith(b"RIFF") and head[8:12] == b"WEBP"
    else:
        ok = head.startswith(_SIGNATURES[suffix])
    return None if ok else f"{name}: the content is not a {suffix[1:].upper()} image"


def item_images_save(*, campaign: Campaign, files: list) -> list[str]:
    """Store uploaded images under the campaign's folder, all or none; returns the names items
    use (`<campaign slug>/<file name>`; a taken name gets a suffix)."""
    problems, checked = [], []
    for upload in files:
        name = get_valid_filename(PurePosixPath(upload.name).name)
        head = upload.read(16)
        upload.seek(0)
        problem = _problem(name, upload.size, head)
        if problem:
            problems.append(problem)
        checked.append((name, upload))
    if problems or not checked:
        raise ServiceError("No image was stored: " + ("; ".join(problems) or "no file given."),
                           code="images_rejected", extra={"problems": problems})
    storage = storages[STORAGE]
    return [storage.save(f"{campaign.slug}/{name}", upload) for name, upload in checked]


def item_images_list(*, campaign: Campaign) -> list[str]:
    """The names of the campaign's uploaded images."""
    storage = storages[STORAGE]
    if not storage.exists(campaign.slug):
        return []
    return sorted(f"{campaign.slug}/{f}" for f in storage.listdir(campaign.slug)[1])
