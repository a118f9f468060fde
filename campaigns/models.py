"""The data model: campaigns, items, workers, assignments, annotations, export jobs.

Models hold data and invariants (constraints, indexes); business rules live in
campaigns/services and campaigns/selectors, the worker's hot path in campaigns/work.
"""
import secrets

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.core.validators import MinValueValidator
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

    class Recruitment(models.TextChoices):
        LINK = "link", "A plain link (anyone with the link)"
        PROLIFIC = "prolific", "Prolific (the link needs PROLIFIC_PID)"

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
    # The bonus rule of the submissions list, in the study's currency (0: no bonus).
    bonus_per_item = models.DecimalField(
        max_digits=8, decimal_places=2, default=0,
        validators=[MinValueValidator(0)], help_text="Bonus per regular item answered.")
    bonus_per_gold_correct = models.DecimalField(
        max_digits=8, decimal_places=2, default=0,
        validators=[MinValueValidator(0)], help_text="Bonus per gold item answered correctly.")
    # Quality control's absolute speed floors, beside its relative rule (analysis/quality.py).
    min_seconds_per_item = models.FloatField(
        null=True, blank=True, help_text="Flag workers whose median time per item is below this "
        "many seconds. Empty: only the relative rule (a quarter of the typical worker's time).")
    min_seconds_per_word = models.FloatField(
        null=True, blank=True, help_text="Flag workers whose median time per item is below this "
        "many seconds per word of the item's displayed text. Empty: no per-word floor.")
    # Prolific studies: where participants come from, and the study's code for each outcome.
    recruitment = models.CharField(
        max_length=10, choices=Recruitment.choices, default=Recruitment.LINK,
        help_text="Prolific: a link without a participant id gets a page asking to open the "
        "study from Prolific, and the done page sends participants back automatically.")
    completion_code_failed_checks = models.CharField(
        max_length=100, blank=True,
        help_text="The study's code for a participant who failed two or more attention checks "
        "(empty: they get the completion code).")
    completion_code_no_work = models.CharField(
        max_length=100, blank=True,
        help_text="The study's code for a participant who finds no work to do (empty: they are "
        "asked to return the study).")

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
            models.CheckConstraint(
                condition=Q(bonus_per_item__gte=0) & Q(bonus_per_gold_correct__gte=0),
                name="campaign_bonus_rule_gte_0",
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
    # Time on the item measured by the server: summed over every save of the item, and the
    # first save's alone (a worker who goes back to change an answer is not a speeder).
    seconds_spent = models.FloatField(null=True, blank=True)
    seconds_first = models.FloatField(null=True, blank=True)
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


class AnswerMigration(models.Model):
    """A recorded rename in an answered question, in the schema and in every stored and gold
    answer: the question's id, or one of its option values."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE,
                                 related_name="answer_migrations")
    question = models.CharField(max_length=64, help_text="The question's id before.")
    renamed_to = models.CharField(max_length=64, help_text="The question's id after.")
    # Set when an option value of the question was renamed (the question's id stays).
    value = models.CharField(max_length=100, blank=True, help_text="The option value before.")
    value_renamed_to = models.CharField(max_length=100, blank=True,
                                        help_text="The option value after.")
    annotations_changed = models.PositiveIntegerField(default=0)
    gold_items_changed = models.PositiveIntegerField(default=0)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    requested_via = models.CharField(max_length=20, help_text="command, admin or api.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.campaign_id}: {self.question} -> {self.renamed_to}"


class Judge(models.Model):
    """An LLM judge of one campaign: an OpenAI-compatible endpoint, a model and its settings.

    The API key is never stored: `api_key_env` names the environment variable (or setting)
    that holds it, read when a request is sent. Its answers are stored as annotations of the
    Worker of platform "llm" whose platform id is the judge's name.
    """

    class ResponseFormat(models.TextChoices):
        JSON_SCHEMA = "json_schema", "JSON Schema (response_format json_schema)"
        JSON_OBJECT = "json_object", "Any JSON object (response_format json_object)"
        NONE = "none", "Plain instruction only"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="judges")
    name = models.CharField(max_length=200, help_text="Shown as the judge in statistics.")
    base_url = models.URLField(
        max_length=500, blank=True,
        help_text="OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1 (Ollama). Empty: "
        "the LLM_JUDGE_LOCAL_URL setting (unset by default, so nothing is called).")
    model = models.CharField(max_length=200)
    api_key_env = models.CharField(
        max_length=100, blank=True,
        help_text="Name of the environment variable holding the API key (ending in _API_KEY); "
        "the key itself is never stored. Empty: no key (local servers).")
    parameters = models.JSONField(default=dict, blank=True,
                                  help_text='{"temperature": 0, "max_tokens": 512, "seed": 1}')
    samples = models.PositiveIntegerField(default=1, help_text="Answers per item.")
    concurrency = models.PositiveIntegerField(default=4, help_text="Requests in flight at once.")
    requests_per_minute = models.PositiveIntegerField(default=600)
    max_attempts = models.PositiveIntegerField(
        default=3, help_text="Requests per item and sample before an invalid output is final.")
    response_format = models.CharField(max_length=20, choices=ResponseFormat.choices,
                                       default=ResponseFormat.JSON_SCHEMA)
    prompt_template = models.TextField(
        blank=True, help_text="Django template over {{ item.<field> }}, {{ display }}, "
        "{{ questions }}, {{ answer_format }}, {{ campaign.instructions }}. Empty: the default "
        "generated from the schema.")
    price_input_per_million = models.DecimalField(
        max_digits=12, decimal_places=4, null=True, blank=True,
        help_text="Price per million prompt tokens, for the estimate before a run.")
    price_output_per_million = models.DecimalField(
        max_digits=12, decimal_places=4, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "name"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "name"], name="judge_unique_name"),
            models.CheckConstraint(condition=Q(samples__gte=1) & Q(samples__lte=20),
                                   name="judge_samples_1_20"),
            models.CheckConstraint(condition=Q(concurrency__gte=1) & Q(concurrency__lte=64),
                                   name="judge_concurrency_1_64"),
            models.CheckConstraint(condition=Q(requests_per_minute__gte=1),
                                   name="judge_rpm_gte_1"),
            models.CheckConstraint(condition=Q(max_attempts__gte=1) & Q(max_attempts__lte=10),
                                   name="judge_max_attempts_1_10"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.model})"


class JudgeRun(models.Model):
    """One run of a judge over a scope of items; its state lives here (a Celery job runs it)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="runs")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    scope = models.JSONField(default=dict, help_text='{"scope": "all"}, {"system": ...} or '
                             '{"sample": n}')
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0, help_text="Items x samples in scope.")
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    requests = models.PositiveIntegerField(default=0, help_text="Requests this run sent.")
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    estimate = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"judge run {self.pk} ({self.status})"

    @property
    def remaining(self) -> int:
        return max(0, self.total - self.done - self.failed)


class JudgeOutput(models.Model):
    """One response of a judge for one item and sample, kept raw whether valid or not.

    Keyed by (judge, item, prompt hash, sample, attempt): a run never asks again for what is
    stored, so a cancelled or crashed run resumes without paying twice. A valid output
    becomes (or updates) the judge's annotation of the item; a failed one never does.
    """

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="outputs")
    run = models.ForeignKey(JudgeRun, null=True, on_delete=models.SET_NULL, related_name="outputs")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="judge_outputs")
    prompt_hash = models.CharField(max_length=64, help_text="sha256 of the exact prompt text.")
    sample = models.PositiveIntegerField(default=0)
    attempt = models.PositiveIntegerField(default=1)
    model = models.CharField(max_length=200)
    raw_output = models.TextField(blank=True)
    failed = models.BooleanField(default=False)
    failure_reason = models.TextField(blank=True)
    answers = models.JSONField(null=True, blank=True, help_text="The validated answers.")
    annotation = models.ForeignKey(Annotation, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="judge_outputs")
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    usage = models.JSONField(default=dict, blank=True, help_text="The endpoint's usage report.")
    seconds = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "item", "prompt_hash", "sample", "attempt"],
                                    name="judgeoutput_unique_attempt"),
            models.CheckConstraint(condition=Q(failed=True) | ~Q(failure_reason__gt=""),
                                   name="judgeoutput_reason_only_when_failed"),
        ]
        indexes = [models.Index(fields=["judge", "prompt_hash"], name="judgeoutput_judge_prompt")]

    def __str__(self) -> str:
        return f"judge output {self.pk} ({'failed' if self.failed else 'ok'})"


class ImportJob(models.Model):
    """An item upload too big for a web request, imported by a Celery job (all or nothing);
    its state lives here, its progress while running in the cache."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

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
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    created = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    control_items = models.PositiveIntegerField(default=0)
    judges = models.JSONField(default=list, blank=True)
    errors = models.JSONField(default=list, blank=True)
    error_total = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"import {self.pk} {self.filename} ({self.status})"


class StatisticsResult(models.Model):
    """A campaign's statistics (or report, or side-by-side table) for one set of options,
    computed by a Celery job and kept with the time of the data it was computed from; the
    status is that of the latest computation asked for, the result that of the last success."""

    class Kind(models.TextChoices):
        STATISTICS = "statistics", "Statistics"
        REPORT = "report", "Evaluation report"
        SIDE_BY_SIDE = "side_by_side", "Judge-vs-human side by side"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE,
                                 related_name="statistics_results")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    options = models.JSONField(default=dict)
    options_key = models.CharField(max_length=64, help_text="sha256 of the canonical options.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    result = models.JSONField(null=True, blank=True, encoder=DjangoJSONEncoder)
    computed_at = models.DateTimeField(null=True, blank=True,
                                       help_text="When the data of `result` was read.")
    attempts = models.PositiveIntegerField(default=0)
    queued_attempts = models.PositiveIntegerField(
        default=0, help_text="`attempts` when the latest computation was queued.")
    requested_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "kind", "options_key"],
                                    name="statisticsresult_unique_options"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} of campaign {self.campaign_id} ({self.status})"
