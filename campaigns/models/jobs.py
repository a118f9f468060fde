"""Background jobs: the fields every kind shares, and the exports, imports and cached statistics
(judge runs are in judges.py). campaigns/jobs/lifecycle.py is the one writer of the shared
fields; each kind keeps only its own."""
from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

from .campaigns import Campaign


class JobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class BackgroundJob(models.Model):
    """A job run by a Celery worker; its state lives on its row, not in a result backend."""

    Status = JobStatus

    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.QUEUED)
    attempts = models.PositiveIntegerField(
        default=0, help_text="Times a worker claimed the job; each claim's number is its run's.")
    queued_attempts = models.PositiveIntegerField(
        default=0, help_text="`attempts` when the job was last queued (a retry starts afresh).")
    error = models.TextField(blank=True)
    waiting = models.CharField(
        max_length=500, blank=True,
        help_text="Why a queued job has not started: its researcher's share of the queue is "
                  "in use (JOBS_RUNNING_PER_RESEARCHER).")
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Touched as the run makes progress; a running job whose heartbeat stops is swept.
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


class ExportJob(BackgroundJob):
    """A requested export; its state lives here, not in Celery's result backend."""

    class Format(models.TextChoices):
        CSV = "csv", "CSV (one row per annotation)"
        CSV_LONG = "csv-long", "Long CSV (one row per atomic judgment)"
        JSONL = "jsonl", "JSON lines"
        JSON = "json", "JSON"
        ANALYSIS_CSV = "analysis-csv", "Analysis tables (CSV)"
        ANALYSIS_JSON = "analysis-json", "Analysis tables (JSON)"
        ANALYSIS_MD = "analysis-md", "Evaluation report (Markdown)"
        SOFT_LABELS = "soft-labels", "Soft labels (CSV: each item's label distribution)"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="export_jobs")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="export_jobs"
    )
    format = models.CharField(max_length=20, choices=Format.choices, default=Format.CSV)
    options = models.JSONField(default=dict, blank=True)
    rows_written = models.PositiveBigIntegerField(default=0)
    rows_total = models.PositiveBigIntegerField(null=True, blank=True)
    file = models.CharField(max_length=500, blank=True, help_text="Path in the export storage.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "started_at"], name="exportjob_status")]

    def __str__(self) -> str:
        return f"export {self.pk} {self.format} ({self.status})"


class ImportJob(BackgroundJob):
    """An item upload too big for a web request, imported by a Celery job (all or nothing);
    its state lives here, its progress while running in the cache."""

    class Kind(models.TextChoices):
        ITEMS = "items", "Items"
        JUDGMENTS = "judgments", "Judgments"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="import_jobs")
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.ITEMS)
    options = models.JSONField(default=dict, blank=True,
                               help_text="A judgments upload's judge name and platform.")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="import_jobs"
    )
    filename = models.CharField(max_length=255)
    format = models.CharField(max_length=10, blank=True)
    file = models.CharField(max_length=500, blank=True, help_text="Path in the import storage.")
    size = models.PositiveBigIntegerField(default=0)
    created = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    control_items = models.PositiveIntegerField(default=0)
    judges = models.JSONField(default=list, blank=True)
    errors = models.JSONField(default=list, blank=True)
    error_total = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"import {self.pk} {self.filename} ({self.status})"


class StatisticsResult(BackgroundJob):
    """A campaign's statistics (or report, or side-by-side table) for one set of options,
    computed by a Celery job and kept with the time of the data it was computed from; the
    status is that of the latest computation asked for, the result that of the last success."""

    class Kind(models.TextChoices):
        STATISTICS = "statistics", "Statistics"
        REPORT = "report", "Evaluation report"
        SIDE_BY_SIDE = "side_by_side", "Judge-vs-human side by side"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE,
                                 related_name="statistics_results")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    options = models.JSONField(default=dict)
    options_key = models.CharField(max_length=64, help_text="sha256 of the canonical options.")
    result = models.JSONField(null=True, blank=True, encoder=DjangoJSONEncoder)
    computed_at = models.DateTimeField(null=True, blank=True,
                                       help_text="When the data of `result` was read.")
    figures = models.JSONField(
        null=True, blank=True,
        help_text="The figures of `result`, drawn with it: each with its title, text "
                  "alternative, data table, plotted values, SVG and (for a report) PDF.")
    full_requested = models.BooleanField(
        default=False,
        help_text="The queued computation recomputes every figure, reusing no interval of the "
                  "last one (campaigns/services/statistics_reuse.py).")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "kind", "options_key"],
                                    name="statisticsresult_unique_options"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} of campaign {self.campaign_id} ({self.status})"
