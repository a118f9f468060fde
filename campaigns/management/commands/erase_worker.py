"""manage.py erase_worker <slug> <platform> <platform_id>: delete a worker's data on request."""
from django.core.management.base import BaseCommand, CommandError

from campaigns.errors import ServiceError
from campaigns.models import Campaign, Worker
from campaigns.services.privacy import worker_erase, worker_find


class Command(BaseCommand):
    help = ("Delete a worker's answers, assignments, intake answers and platform id on their "
            "request, and record that it happened.")

    def add_arguments(self, parser):
        parser.add_argument("slug", help="The campaign's slug.")
        parser.add_argument("platform", choices=Worker.Platform.values)
        parser.add_argument("platform_id", help="The id the crowd platform gave the worker.")
        parser.add_argument("--reason", default="", help="Request reference, kept in the record.")

    def handle(self, *args, slug, platform, platform_id, reason="", **options):
        campaign = Campaign.objects.filter(slug=slug).first()
        if campaign is None:
            raise CommandError(f"No campaign with slug {slug!r}.")
        try:
            worker = worker_find(campaign=campaign, platform=platform, platform_id=platform_id)
            result = worker_erase(worker=worker, via="command", reason=reason)
        except ServiceError as exc:
            raise CommandError(exc.message) from None
        record = result.record
        self.stdout.write(self.style.SUCCESS(
            f"Deleted the data of worker {record.pseudonym} in {slug}: "
            f"{record.annotations_deleted} answer(s), {record.assignments_deleted} assignment(s), "
            f"intake {'cleared' if record.intake_cleared else 'was empty'}, "
            f"{record.export_files_deleted} earlier export file(s) withdrawn. "
            f"Recorded as deletion #{record.pk}."
        ))
