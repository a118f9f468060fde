"""Admin action: delete the selected workers' data on their request (after a confirmation page)."""
from __future__ import annotations

from django.contrib import admin, messages
from django.template.response import TemplateResponse

from ..exporting.pseudonyms import worker_pseudonym
from ..services.privacy import worker_erase


@admin.action(description="Delete the selected workers' data (on their request)")
def erase_workers(modeladmin, request, queryset):
    """First a confirmation page listing who and what; the confirmed POST erases each worker."""
    workers = list(queryset.select_related("campaign").filter(erased_at__isnull=True))
    if request.POST.get("confirm") == "yes":
        reason = request.POST.get("reason", "").strip()[:1000]
        erased = annotations = 0
        for worker in workers:
            result = worker_erase(worker=worker, requested_by=request.user, via="admin",
                                  reason=reason)
            if not result.already_erased:
                erased += 1
                annotations += result.record.annotations_deleted
        modeladmin.message_user(
            request,
            f"Deleted the data of {erased} worker(s): {annotations} answer(s) removed, "
            "platform ids and intake answers erased. Each deletion is recorded.",
            messages.SUCCESS,
        )
        return None
    if not workers:
        modeladmin.message_user(request, "The selected workers' data was already deleted.",
                                messages.INFO)
        return None
    rows = [
        {
            "pk": w.pk,
            "campaign": w.campaign,
            "platform": w.get_platform_display(),
            "pseudonym": worker_pseudonym(campaign_id=w.campaign_id, platform=w.platform,
                                          platform_id=w.platform_id),
            "answers": w.annotations.count(),
        }
        for w in workers
    ]
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": "Delete workers' data on their request",
        "opts": modeladmin.model._meta,
        "rows": rows,
        "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
        "action": "erase_workers",
    }
    return TemplateResponse(request, "admin/campaigns/worker/erase_workers.html", context)
