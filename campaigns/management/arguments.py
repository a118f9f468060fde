"""Lookups the management commands share, failing with CommandError messages people can act on."""
from pathlib import Path

from django.core.management.base import CommandError

from campaigns.models import Campaign


def campaign_by_slug(slug: str) -> Campaign:
    try:
        return Campaign.objects.get(slug=slug)
    except Campaign.DoesNotExist:
        raise CommandError(f"No campaign with slug {slug!r}.") from None


def existing_file(path: str) -> Path:
    file = Path(path)
    if not file.is_file():
        raise CommandError(f"No such file: {path}")
    return file
