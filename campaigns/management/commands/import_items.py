"""manage.py import_items <campaign-slug> <file>: all-or-nothing item import."""

from django.core.management.base import BaseCommand, CommandError

from campaigns.importing import FORMATS, TRANSCRIPTS, ImportRejected
from campaigns.management.arguments import campaign_by_slug, existing_file
from campaigns.services.items import items_import


class Command(BaseCommand):
    help = "Import items from a CSV, TSV, JSON or JSONL file; a bad row rejects the whole file."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("path")
        parser.add_argument("--format", choices=FORMATS, help="Default: from the file extension.")
        parser.add_argument("--transcripts", choices=TRANSCRIPTS, default="messages",
                            help="How conversations are written: OpenAI messages lists (the "
                                 "default), HH-RLHF transcripts (rows of chosen/rejected become "
                                 "two outputs) or ShareGPT turns.")

    def handle(self, *args, slug, path, format=None, transcripts="messages", **options):
        campaign = campaign_by_slug(slug)
        file = existing_file(path)
        try:
            result = items_import(
                campaign=campaign, content=file.read_bytes(), filename=file.name, fmt=format,
                transcripts=transcripts,
            )
        except ImportRejected as exc:
            raise CommandError(f"Nothing imported; {exc.total} problem(s):\n{exc}") from None
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {result.created} items into {slug} "
                f"({result.control_items} attention/gold)."
            )
        )
