"""The admin's job lists (exports, judge runs): one base with the lifecycle's states and its
two actions on request, cancel and retry."""
from __future__ import annotations

from django.contrib import admin, messages

from ..errors import ServiceError
from ..models import JobStatus
from ..services.jobs import job_cancel_request, job_retry_request
from .scoping import CampaignScopedAdmin


class JobListAdmin(CampaignScopedAdmin):
    """Background jobs (exports, judge runs): requested from the campaign, never typed in or
    edited; while a visible job is queued or running the list refreshes itself (a meta
    refresh, no script) so progress moves on screen. Every kind has the lifecycle's states
    and its two actions on request: cancel, and retry."""

    in_flight_statuses = (JobStatus.QUEUED, JobStatus.RUNNING)
    actions = ("cancel_jobs", "retry_jobs")
    job_permission = ""  # what cancelling and retrying this kind's jobs takes

    def has_job_permission(self, request) -> bool:
        return request.user.has_perm(self.job_permission)

    def _each(self, request, queryset, service, verb):
        for job in queryset:  # the changelist's scoped rows
            try:
                service(job=job)
            except ServiceError as exc:
                messages.warning(request, f"{job}: {exc.message}")
            else:
                messages.success(request, f"{job}: {verb}.")

    @admin.action(description="Cancel the selected jobs (queued or running)",
                  permissions=["job"])
    def cancel_jobs(self, request, queryset):
        self._each(request, queryset, job_cancel_request, "cancelled")

    @admin.action(description="Retry the selected jobs (failed or cancelled)",
                  permissions=["job"])
    def retry_jobs(self, request, queryset):
        self._each(request, queryset, job_retry_request, "queued again")

    def changelist_view(self, request, extra_context=None):
        in_flight = self.get_queryset(request).filter(
            status__in=self.in_flight_statuses).exists()
        return super().changelist_view(
            request, {**(extra_context or {}), "jobs_in_flight": in_flight})

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
