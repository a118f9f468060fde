"""manage.py export_results <slug> --format csv|csv-long|jsonl|json [--gzip] -o PATH."""
import shutil

from django.core.files.storage import storages
from django.core.management.base import BaseCommand, CommandError

from campaigns.errors import ServiceError
from campaigns.management.arguments import campaign_by_slug
from campaigns.models import ExportJob
from campaigns.services.exports import export_job_create, export_job_run


class Command(BaseCommand):
    help = (
        "Export a campaign's annotations to a file, synchronously (the same service as the "
        "admin's Celery jobs; the job is recorded and its file kept in export storage too)."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--format", required=True, choices=ExportJob.Format.values)
        parser.add_argument("--gzip", action="store_true", help="Compress the file with gzip.")
        parser.add_argument("--raw-worker-ids", action="store_true",
                            help="Add the workers' platform ids (they identify people).")
        parser.add_argument("--exclude-flagged", action="store_true",
                            help="Leave out workers flagged by the attention/timing checks.")
        parser.add_argument("-o", "--output", required=True, help="Where to write the file.")

    def handle(self, *args, slug, format, output, **opts):
        campaign = campaign_by_slug(slug)
        options = {key: opts[key] for key in ("gzip", "raw_worker_ids", "exclude_flagged")}
        try:
            job = export_job_create(
                campaign=campaign, requested_by=None, fmt=format, options=options, enqueue=False
            )
        except ServiceError as exc:
            raise CommandError(exc.message) from None
        export_job_run(job_id=job.pk)
        job.refresh_from_db()
        if job.status != ExportJob.Status.DONE:
            raise CommandError(f"Export {job.pk} failed: {job.error}")
        try:
            with storages["exports"].open(job.file, "rb") as src, open(output, "wb") as dst:
                shutil.copyfileobj(src, dst, 1024 * 1024)
        except OSError as exc:
            raise CommandError(f"Could not write {output}: {exc}") from None
        self.stdout.write(self.style.SUCCESS(
            f"Exported {job.rows_written} annotations of {slug} as {format} to {output} "
            f"(export job {job.pk}, stored as {job.file})."
        ))
