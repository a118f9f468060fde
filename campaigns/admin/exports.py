"""Export jobs: status, progress while running, and a link to the download."""
from __future__ import annotations

from django.contrib import admin
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html

from ..models import ExportJob
from .jobs import JobListAdmin


@admin.register(ExportJob)
class ExportJobAdmin(JobListAdmin):
    list_display = ("id", "campaign", "format", "status", "progress", "requested_by",
                    "created_at", "finished_at", "download")
    list_filter = ("status", "format", ("campaign", admin.RelatedOnlyFieldListFilter))
    list_select_related = ("campaign", "requested_by")
    fields = ("campaign", "format", "options", "status", "progress", "error", "attempts",
              "requested_by", "created_at", "started_at", "finished_at", "download")
    readonly_fields = fields

    job_permission = "campaigns.add_exportjob"  # who may ask for an export may retry one

    @admin.display(description="Progress")
    def progress(self, obj):
        if obj.rows_total is None:
            return f"{obj.rows_written:,} rows"
        pct = 100 * obj.rows_written / obj.rows_total if obj.rows_total else 100
        return f"{obj.rows_written:,} / {obj.rows_total:,} ({pct:.0f}%)"

    @admin.display(description="File")
    def download(self, obj):
        if obj.status != ExportJob.Status.DONE or not obj.file:
            return obj.error[:80] if obj.status == ExportJob.Status.FAILED else "-"
        try:
            url = reverse("export_download", args=[obj.pk])
        except NoReverseMatch:  # the download view is not installed
            return obj.file
        return format_html('<a href="{}">Download</a>', url)
