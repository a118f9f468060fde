"""The work: assignments handed to workers, their items, the annotations, per-item tallies."""
from django.db import models
from django.db.models import Q, Value

from .campaigns import Campaign, Item, Worker, new_token


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
    # The allocation it was handed out under: the campaign's strategy and priority epoch.
    allocation = models.CharField(max_length=20, blank=True, default="", db_default="")
    allocation_epoch = models.PositiveIntegerField(null=True, blank=True)

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
    # How each free-text answer came to be, as the page recorded it and the server bounded it
    # (campaigns/pages/answer_provenance.py): {"<question>[.<part>]": {"typed", "pasted",
    # "pastes", "ms", "chars"}}; {} when the page recorded nothing (API, no script).
    provenance = models.JSONField(default=dict, blank=True,
                                  db_default=Value({}, output_field=models.JSONField()))
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
