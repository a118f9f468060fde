"""manage.py import_judgments <campaign-slug> <file> [--judge NAME]: all-or-nothing judge import."""

from django.core.management.base import BaseCommand, CommandError

from campaigns.importing import ImportRejected
from campaigns.management.arguments import campaign_by_slug, existing_file
from campaigns.models import Worker
from campaigns.services.judgments import judgments_import, read_judgment_file


class Command(BaseCommand):
    help = (
        "Import LLM-judge output (CSV, TSV or JSONL with columns item, judge, output; the output "
        "is a dict literal such as {\"1\": 1, ..., \"15\": 0}); a bad row rejects the whole file."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("path")
        parser.add_argument("--judge", help="Judge name for rows without a judge column.")
        parser.add_argument(
            "--platform", default=Worker.Platform.LLM, choices=Worker.Platform.values,
            help="Store as this worker platform (default llm; e.g. account for expert scores).")

    def handle(self, *args, slug, path, judge=None, platform=Worker.Platform.LLM, **options):
        campaign = campaign_by_slug(slug)
        file = existing_file(path)
        try:
            rows = read_judgment_file(file.read_bytes(), file.name, judge=judge)
            result = judgments_import(campaign=campaign, rows=rows, platform=platform)
        except ImportRejected as exc:
            raise CommandError(f"Nothing imported; {exc.total} problem(s):\n{exc}") from None
        self.stdout.write(self.style.SUCCESS(
            f"Imported judgments into {slug}: {result.created} new, {result.updated} updated "
            f"({', '.join(result.judges)})."))
