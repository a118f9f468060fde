"""Workers, assignments and annotations: read-only lists (the worker pages write them)."""
from __future__ import annotations

import json

from django.contrib import admin, messages
from django.db.models import Count, IntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.template.loader import render_to_string
from django.utils.html import format_html

from ..analysis.answer_provenance import FLAGS, answer_flags
from ..exporting.pseudonyms import worker_pseudonym
from ..models import Annotation, AnswerMigration, Assignment, DeletionRecord, Worker
from ..selectors.answer_provenance import worker_free_text
from ..selectors.worker_activity import worker_assignments, worker_control_outcomes
from ..work import assignment_release
from .privacy import erase_workers
from .scoping import ReadOnlyAdmin


def _count(model, **filters):
    """A correlated count per worker (subqueries, so two counts do not multiply each other)."""
    qs = (model.objects.filter(worker=OuterRef("pk"), **filters).order_by()
          .values("worker").annotate(n=Count("id")).values("n"))
    return Coalesce(Subquery(qs, output_field=IntegerField()), 0)


@admin.register(Worker)
class WorkerAdmin(ReadOnlyAdmin):
    list_display = ("platform_id", "platform", "campaign", "n_assignments", "n_submitted",
                    "n_annotations", "n_checks_failed", "created_at")
    list_filter = ("platform", ("campaign", admin.RelatedOnlyFieldListFilter))
    search_fields = ("platform_id",)
    list_select_related = ("campaign",)
    fields = ("campaign", "platform", "platform_id", "pseudonym", "intake_pretty",
              "consented_at", "created_at", "erased_at", "activity")
    readonly_fields = fields
    actions = [erase_workers]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(
            _assignments=_count(Assignment),
            _submitted=_count(Assignment, status=Assignment.Status.SUBMITTED),
            _annotations=_count(Annotation),
            _failed=_count(Annotation, control_passed=False),
        )

    @admin.display(description="Assignments", ordering="_assignments")
    def n_assignments(self, obj):
        return obj._assignments

    @admin.display(description="Submitted", ordering="_submitted")
    def n_submitted(self, obj):
        return obj._submitted

    @admin.display(description="Annotations", ordering="_annotations")
    def n_annotations(self, obj):
        return obj._annotations

    @admin.display(description="Checks failed", ordering="_failed")
    def n_checks_failed(self, obj):
        return obj._failed

    @admin.display(description="Pseudonym in exports")
    def pseudonym(self, obj):
        return worker_pseudonym(campaign_id=obj.campaign_id, platform=obj.platform,
                                platform_id=obj.platform_id)

    @admin.display(description="Intake answers")
    def intake_pretty(self, obj):
        if not obj.intake:
            return "-"
        return format_html('<pre class="admin-json">{}</pre>',
                           json.dumps(obj.intake, indent=2, ensure_ascii=False))

    @admin.display(description="Assignments, timings and checks")
    def activity(self, obj):
        return render_to_string("admin/campaigns/worker/activity.html", {
            "worker": obj,
            "rows": worker_assignments(worker=obj),
            "controls": worker_control_outcomes(worker=obj),
            "free_text": worker_free_text(worker=obj),
        })


@admin.register(Assignment)
class AssignmentAdmin(ReadOnlyAdmin):
    list_display = ("id", "campaign", "worker", "status", "started_at", "deadline",
                    "submitted_at", "n_items")
    list_filter = ("status", ("campaign", admin.RelatedOnlyFieldListFilter))
    search_fields = ("worker__platform_id", "study_id", "session_id", "mturk_assignment_id")
    list_select_related = ("campaign", "worker")
    exclude = ("items",)
    actions = ["release"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_items=Count("slots"))

    def has_release_permission(self, request):
        # A write on the campaign's work: for those who may change campaigns (the list is
        # already limited to the campaigns this user may see).
        return request.user.has_perm("campaigns.change_campaign")

    @admin.action(description="Release (abandoned: give unanswered items back now)",
                  permissions=["release"])
    def release(self, request, queryset):
        released = sum(assignment_release(assignment_id=pk)
                       for pk in queryset.filter(status=Assignment.Status.ACTIVE)
                       .values_list("pk", flat=True))
        skipped = queryset.count() - released
        if released:
            self.message_user(request, f"{released} assignment(s) released: their unanswered "
                              "items are handed out again, answered items stay answered.",
                              messages.SUCCESS)
        if skipped:
            self.message_user(request, f"{skipped} assignment(s) were not active and were left "
                              "as they are.", messages.WARNING)

    @admin.display(description="Items", ordering="_items")
    def n_items(self, obj):
        return obj._items


@admin.register(Annotation)
class AnnotationAdmin(ReadOnlyAdmin):
    list_display = ("id", "campaign", "item", "worker", "seconds_spent", "control_passed",
                    "updated_at")
    list_filter = (("campaign", admin.RelatedOnlyFieldListFilter), "control_passed",
                   "item__control")
    search_fields = ("item__external_id", "worker__platform_id")
    list_select_related = ("campaign", "item", "item__campaign", "worker")
    fields = ("campaign", "assignment", "item", "worker", "answers_pretty", "provenance_pretty",
              "seconds_spent", "control_passed", "created_at", "updated_at")
    readonly_fields = fields

    @admin.display(description="Answers")
    def answers_pretty(self, obj):
        return format_html('<pre class="admin-json">{}</pre>',
                           json.dumps(obj.answers, indent=2, ensure_ascii=False))

    @admin.display(description="Free-text provenance")
    def provenance_pretty(self, obj):
        if not obj.provenance:
            return "-"
        flags = {path: [FLAGS[f] for f in answer_flags(record)]
                 for path, record in obj.provenance.items()}
        shown = {path: {**record, "flags": flags[path]} if flags[path] else record
                 for path, record in obj.provenance.items()}
        return format_html('<pre class="admin-json">{}</pre>',
                           json.dumps(shown, indent=2, ensure_ascii=False))


@admin.register(DeletionRecord)
class DeletionRecordAdmin(ReadOnlyAdmin):
    """That a worker's data was deleted (no raw platform ids); kept as the record, never edited."""

    list_display = ("created_at", "campaign_slug", "pseudonym", "requested_by", "requested_via",
                    "annotations_deleted")
    list_filter = ("requested_via",)
    search_fields = ("campaign_slug", "pseudonym")
    list_select_related = ("requested_by",)


@admin.register(AnswerMigration)
class AnswerMigrationAdmin(ReadOnlyAdmin):
    """Recorded renames of answered questions (the stored answers they rewrote)."""

    list_display = ("created_at", "campaign", "question", "renamed_to", "annotations_changed",
                    "gold_items_changed", "requested_by", "requested_via")
    list_select_related = ("campaign", "requested_by")
