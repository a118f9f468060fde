"""The qualification step: a worker's test of gold items before the main items, and its answers
(kept apart from the main answers: never in the statistics or the annotation exports)."""
from django.db import models
from django.db.models import Q

from .campaigns import Campaign, Item, Worker, new_token


class Qualification(models.Model):
    """One worker's qualification test on one campaign, and its outcome once finished.

    A row carried over from another campaign of the same owner and group (`carried_from`)
    has no answers of its own: the outcome there stands here too.
    """

    class Status(models.TextChoices):
        ACTIVE = "active", "Taking the test"
        PASSED = "passed", "Passed"
        FAILED = "failed", "Failed"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE,
                                 related_name="qualifications", db_index=False)
    worker = models.OneToOneField(Worker, on_delete=models.CASCADE,
                                  related_name="qualification")
    # The test pages' credential, as an assignment's token is the item pages'.
    token = models.CharField(max_length=64, unique=True, default=new_token, editable=False)
    # The campaign's group when the test was taken (outcomes are shared within it).
    group = models.CharField(max_length=80, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    items = models.JSONField(default=list, help_text="The test's item ids, in order.")
    pass_mark = models.FloatField()
    correct = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    score = models.FloatField(null=True, blank=True, help_text="Share of the items correct.")
    carried_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    # The platform's ids of the start (as an assignment stores them), for the claim after a
    # pass and for the proof of the same session when the participant comes back.
    platform_ids = models.JSONField(default=dict, blank=True)
    # The start's limit on the main assignment's items (a Prolific start Prolific did not
    # vouch for gets one item, views/entry.py); None: no limit.
    max_items = models.PositiveIntegerField(null=True, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=["active", "passed", "failed"]),
                                   name="qualification_status_valid"),
        ]
        indexes = [models.Index(fields=["campaign", "status"], name="qualification_by_status"),
                   models.Index(fields=["group", "status"], name="qualification_by_group",
                                condition=~Q(group=""))]

    def __str__(self) -> str:
        return f"qualification {self.pk} ({self.status})"

    @property
    def session_id(self) -> str:
        return self.platform_ids.get("session_id", "")

    @property
    def mturk_assignment_id(self) -> str:
        return self.platform_ids.get("mturk_assignment_id", "")


class QualificationAnswer(models.Model):
    """A worker's answer to one item of their qualification test (given once, never changed:
    with feedback on, the expected answer was shown after it)."""

    qualification = models.ForeignKey(Qualification, on_delete=models.CASCADE,
                                      related_name="answers", db_index=False)
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()
    answers = models.JSONField(default=dict)
    correct = models.BooleanField()
    seconds_spent = models.FloatField(null=True, blank=True)
    # How each free-text answer came to be, as on an annotation (Annotation.provenance).
    provenance = models.JSONField(default=dict, blank=True,
                                  db_default=models.Value({}, output_field=models.JSONField()))
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["qualification", "position"]
        constraints = [
            models.UniqueConstraint(fields=["qualification", "position"],
                                    name="qualificationanswer_unique_position"),
        ]

    def __str__(self) -> str:
        return f"qualification {self.qualification_id} position {self.position}"
