"""The data model: campaigns, items, workers, assignments, annotations, export jobs.

Models hold data and invariants (constraints, indexes); business rules live in
campaigns/services and campaigns/selectors, the worker's hot path in campaigns/work.
"""
import secrets

from django.conf import settings
from django.db import models
from django.db.models import F, Q


def new_token() -> str:
    """An unguessable assignment token: the worker's only credential (~192 bits)."""
    return secrets.token_urlsafe(24)


class Campaign(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        LIVE = "live", "Live"
        PAUSED = "paused", "Paused"
        CLOSED = "closed", "Closed"

    class CompletionMode(models.TextChoices):
        PER_ASSIGNMENT = "per_assignment", "A verifiable code per assignment"
        FIXED = "fixed", "One fixed code for everyone (e.g. a Prolific study code)"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="owned_campaigns"
    )
    collaborators = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="shared_campaigns"
    )
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    description = models.TextField(blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)

    schema = models.JSONField(default=dict, help_text="Task schema: display and questions.")
    instructions = models.TextField(blank=True, help_text="Markdown, rendered safely.")
    examples = models.TextField(blank=True, help_text="Worked examples (Markdown).")
    consent_text = models.TextField(blank=True, help_text="Markdown; empty means no consent step.")
    intake_questions = models.JSONField(
        default=list, blank=True, help_text="Questions asked once per worker (schema format)."
    )

    items_per_assignment = models.PositiveIntegerField(default=1)
    annotations_per_item = models.PositiveIntegerField(default=3)
    assignment_timeout_minutes = models.PositiveIntegerField(default=60)
    max_assignments_per_worker = models.PositiveIntegerField(
        null=True, blank=True, help_text="Empty means no limit."
    )
    attention_checks_per_assignment = models.PositiveIntegerField(default=0)
    gold_items_per_assignment = models.PositiveIntegerField(default=0)

    completion_mode = models.CharField(
        max_length=20, choices=CompletionMode.choices, default=CompletionMode.PER_ASSIGNMENT
    )
    completion_code = models.CharField(
        max_length=100, blank=True, help_text="The shared code when the mode is 'fixed'."
    )
    completion_redirect_url = models.URLField(
        max_length=500,
        blank=True,
        help_text="Where to send the worker when done; {code} is replaced by the code, e.g. "
        "https://app.prolific.com/submissions/complete?cc={code}",
    )
    source = models.TextField(blank=True, help_text="Where the items come from (attribution).")

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(items_per_assignment__gte=1), name="campaign_items_per_assignment_gte_1"
            ),
            models.CheckConstraint(
                condition=Q(annotations_per_item__gte=1), name="campaign_annotations_per_item_gte_1"
            ),
            models.CheckConstraint(
                condition=Q(assignment_timeout_minutes__gte=1), name="campaign_timeout_gte_1"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_live(self) -> bool:
        return self.status == self.Status.LIVE


class Item(models.Model):
    """One thing to judge. `slots_taken` counts assignments holding it (active or submitted)."""

    class Control(models.TextChoices):
        NONE = "", "Regular item"
        ATTENTION = "attention", "Attention check"
        GOLD = "gold", "Gold item (expected answers)"

    # No index of its own: item_campaign_control and the external-id constraint lead with it.
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="items",
                                 db_index=False)
    external_id = models.CharField(max_length=200)
    system = models.CharField(max_length=200, blank=True, db_index=True)
    data = models.JSONField(default=dict)
    control = models.CharField(max_length=10, choices=Control.choices, default="", blank=True)
    gold = models.JSONField(null=True, blank=True, help_text="Expected answers {question: answer}.")
    gold_tolerance = models.FloatField(null=True, blank=True)
    # Redundancy bookkeeping. `slots_wanted` is the campaign's k for regular items, 0 for control
    # items (they never count toward k). The checks make over-assignment impossible even if a
    # service has a bug: 0 <= annotations_done <= slots_taken <= slots_wanted.
    slots_wanted = models.PositiveIntegerField(default=0)
    slots_taken = models.IntegerField(default=0)
    annotations_done = models.IntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "external_id"], name="item_unique_external_id_per_campaign"
            ),
            models.CheckConstraint(condition=Q(slots_taken__gte=0), name="item_slots_taken_gte_0"),
            models.CheckConstraint(
                condition=Q(slots_taken__lte=F("slots_wanted")), name="item_slots_taken_lte_wanted"
            ),
            models.CheckConstraint(
                condition=Q(annotations_done__gte=0), name="item_annotations_done_gte_0"
            ),
            models.CheckConstraint(
                condition=Q(annotations_done__lte=F("slots_taken")),
                name="item_annotations_done_lte_taken",
            ),
            models.CheckConstraint(
                condition=Q(control__in=["", "attention", "gold"]), name="item_control_valid"
            ),
        ]
        indexes = [
            # Handing out work: the least-filled open regular items of a campaign first.
            models.Index(
                fields=["campaign", "slots_taken", "id"],
                name="item_open_by_fill",
                condition=Q(control="") & Q(slots_taken__lt=F("slots_wanted")),
            ),
            models.Index(fields=["campaign", "control"], name="item_campaign_control"),
        ]

    def __str__(self) -> str:
        return f"{self.campaign.slug}:{self.external_id}"


class Worker(models.Model):
    """A person (or an LLM judge) as seen by one campaign."""

    class Platform(models.TextChoices):
        PROLIFIC = "prolific", "Prolific"
        MTURK = "mturk", "Amazon Mechanical Turk"
        LINK = "link", "Plain link"
        ACCOUNT = "account", "Site account"
        LLM = "llm", "LLM judge"

    # No index of its own: worker_unique_per_campaign leads with it.
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="workers",
                                 db_index=False)
    platform = models.CharField(max_length=10, choices=Platform.choices)
    platform_id = models.CharField(max_length=200)
    intake = models.JSONField(null=True, blank=True, help_text="Answers to the intake questions.")
    consented_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    erased_at = models.DateTimeField(
        null=True, blank=True, help_text="When this worker's data was deleted on request."
    )

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "platform", "platform_id"], name="worker_unique_per_campaign"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.platform}:{self.platform_id}"


class Assignment(models.Model):
    """One unit of work handed to one worker; the token is the worker's only credential."""

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        SUBMITTED = "submitted", "Submitted"
        EXPIRED = "expired", "Expired"
        RETURNED = "returned", "Returned"

    # No indexes of their own: assignment_by_status and assignment_worker_status lead with
    # them (every claim inserts and every hand-in rewrites all of the row's index entries).
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="assignments",
                                 db_index=False)
    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="assignments",
                               db_index=False)
    token = models.CharField(max_length=64, unique=True, default=new_token, editable=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    items = models.ManyToManyField(Item, through="AssignmentItem", related_name="assignments")
    started_at = models.DateTimeField(auto_now_add=True)
    deadline = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    completion_code = models.CharField(max_length=100, blank=True)
    # Platform ids as the platform sent them (Prolific STUDY_ID/SESSION_ID, MTurk ids).
    study_id = models.CharField(max_length=200, blank=True)
    session_id = models.CharField(max_length=200, blank=True)
    mturk_assignment_id = models.CharField(max_length=200, blank=True)
    mturk_hit_id = models.CharField(max_length=200, blank=True)
    turk_submit_to = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["active", "submitted", "expired", "returned"]),
                name="assignment_status_valid",
            ),
        ]
        indexes = [
            models.Index(fields=["campaign", "status", "deadline"], name="assignment_by_status"),
            models.Index(fields=["worker", "status"], name="assignment_worker_status"),
            # Expiry (at every claim and periodically): only active assignments are indexed,
            # so finding the overdue ones stays cheap however many were submitted.
            models.Index(fields=["deadline"], name="assignment_active_deadline",
                         condition=Q(status="active")),
        ]

    def __str__(self) -> str:
        return f"assignment {self.pk} ({self.status})"


class AssignmentItem(models.Model):
    """An item's place in an assignment (1-based position, the order the worker sees)."""

    # No index of its own: both unique constraints lead with it.
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="slots",
                                   db_index=False)
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="slots")
    position = models.PositiveIntegerField()
    # False once the slot was given back (assignment expired before this item was answered).
    holds_slot = models.BooleanField(default=True)

    class Meta:
        ordering = ["assignment", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "position"], name="assignmentitem_unique_position"
            ),
            models.UniqueConstraint(
                fields=["assignment", "item"], name="assignmentitem_unique_item"
            ),
            models.CheckConstraint(
                condition=Q(position__gte=1), name="assignmentitem_position_gte_1"
            ),
        ]

    def __str__(self) -> str:
        return f"assignment {self.assignment_id} position {self.position}"


class Annotation(models.Model):
    """One worker's answers for one item in one assignment; a repeated submit updates it."""

    # campaign, assignment and item have no index of their own: annotation_campaign_id, the
    # (assignment, item) constraint and annotation_item lead with them (fewer indexes for
    # every saved answer to update).
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="annotations",
                                 db_index=False)
    assignment = models.ForeignKey(
        Assignment, on_delete=models.CASCADE, related_name="annotations", db_index=False
    )
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="annotations",
                             db_index=False)
    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="annotations")
    answers = models.JSONField(default=dict)
    seconds_spent = models.FloatField(null=True, blank=True)
    # Outcome for attention-check and gold items (None for regular items).
    control_passed = models.BooleanField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "item"], name="annotation_unique_per_assignment_item"
            ),
            models.CheckConstraint(
                condition=Q(seconds_spent__isnull=True) | Q(seconds_spent__gte=0),
                name="annotation_seconds_gte_0",
            ),
        ]
        indexes = [
            models.Index(fields=["campaign", "id"], name="annotation_campaign_id"),
            models.Index(fields=["campaign", "updated_at"], name="annotation_campaign_updated"),
            models.Index(fields=["item"], name="annotation_item"),
        ]

    def __str__(self) -> str:
        return f"annotation {self.pk} (item {self.item_id}, assignment {self.assignment_id})"


class ItemTally(models.Model):
    """How many human ratings of one regular item gave each value of each numeric answer part.

    `counts` is {"<question>" or "<question>/<part>": {"<value>": n}}, for every number in an
    answer's top level or one level down (likert points, rubric criteria, sliders). Kept by
    PostgreSQL statement triggers on the annotation table (campaigns/work/sql/tally_v1.sql),
    so every write path (pages, API, erasure, deletes, raw SQL) keeps it exact;
    attention/gold items and LLM judges are not counted. Agreement on a fixed scale reads
    these per-item tallies instead of a million answers
    (selectors.analysis.question_value_counts).
    """

    item = models.OneToOneField(Item, on_delete=models.CASCADE, primary_key=True,
                                related_name="tally")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    counts = models.JSONField(default=dict)

    def __str__(self) -> str:
        return f"tally of item {self.item_id}"


class ExportJob(models.Model):
    """A requested export; its state lives here, not in Celery's result backend."""

    class Format(models.TextChoices):
        CSV = "csv", "CSV (one row per annotation)"
        CSV_LONG = "csv-long", "Long CSV (one row per atomic judgment)"
        JSONL = "jsonl", "JSON lines"
        JSON = "json", "JSON"
        ANALYSIS_CSV = "analysis-csv", "Analysis tables (CSV)"
        ANALYSIS_JSON = "analysis-json", "Analysis tables (JSON)"
        ANALYSIS_MD = "analysis-md", "Evaluation report (Markdown)"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="export_jobs")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="export_jobs"
    )
    format = models.CharField(max_length=20, choices=Format.choices, default=Format.CSV)
    options = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    rows_written = models.PositiveBigIntegerField(default=0)
    rows_total = models.PositiveBigIntegerField(null=True, blank=True)
    file = models.CharField(max_length=500, blank=True, help_text="Path in the export storage.")
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Touched with every chunk written; a running job whose heartbeat stops is re-queued or failed.
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "started_at"], name="exportjob_status")]

    def __str__(self) -> str:
        return f"export {self.pk} {self.format} ({self.status})"


class DeletionRecord(models.Model):
    """That a worker's data was deleted on request: when, by whom, what (never the raw id)."""

    campaign = models.ForeignKey(
        Campaign, null=True, on_delete=models.SET_NULL, related_name="deletion_records"
    )
    campaign_slug = models.CharField(max_length=80)
    worker = models.ForeignKey(
        Worker, null=True, on_delete=models.SET_NULL, related_name="deletion_records"
    )
    platform = models.CharField(max_length=10)
    pseudonym = models.CharField(
        max_length=40, help_text="The worker's pseudonym in exports made before the deletion."
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="deletion_records",
    )
    requested_via = models.CharField(max_length=20, help_text="service, command, admin or api.")
    reason = models.TextField(blank=True)
    annotations_deleted = models.PositiveIntegerField(default=0)
    assignments_deleted = models.PositiveIntegerField(default=0)
    intake_cleared = models.BooleanField(default=False)
    export_files_deleted = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"deletion of {self.pseudonym} in {self.campaign_slug}"
