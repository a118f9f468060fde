"""Records of changes made on request: a worker's data erased, an answered question renamed."""
from django.conf import settings
from django.db import models

from .campaigns import Campaign, Worker


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


class AllocationChange(models.Model):
    """A change of a campaign's allocation strategy or stopping target, and when it took effect
    (the priority epoch from which the new design applies)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE,
                                 related_name="allocation_changes")
    allocation_before = models.CharField(max_length=20)
    allocation_after = models.CharField(max_length=20)
    stop_when_before = models.JSONField(default=dict)
    stop_when_after = models.JSONField(default=dict)
    epoch = models.PositiveIntegerField(help_text="The first priority epoch of the new design.")
    annotations_before = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.campaign_id}: {self.allocation_before} -> {self.allocation_after}"
