"""manage.py import_items <campaign-slug> <file>: all-or-nothing item import."""
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from campaigns.importing import FORMATS, ImportRejected
from campaigns.models import Campaign
from campaigns.services.items import items_import


class Command(BaseCommand):
    help = "Import items from a CSV, TSV, JSON or JSONL file; a bad row rejects the whole file."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("path")
        parser.add_argument("--format", choices=FORMATS, help="Default: from the file extension.")

    def handle(self, *args, slug, path, format=None, **options):
        try:
            campaign = Campaign.objects.get(slug=slug)
        except Campaign.DoesNotExist:
            raise CommandError(f"No campaign with slug {slug!r}.") from None
        file = Path(path)
        if not file.is_file():
            raise CommandError(f"No such file: {path}")
        try:
            result = items_import(
                campaign=campaign, content=file.read_bytes(), filename=file.name, fmt=format
            )
        except ImportRejected as exc:
            raise CommandError(f"Nothing imported; {exc.total} problem(s):\n{exc}") from None
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {result.created} items into {slug} "
                f"({result.control_items} attention/gold)."
            )
        )
