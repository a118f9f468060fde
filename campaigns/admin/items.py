"""The item list: fill counts, filters by campaign, system, control and fill state."""
from __future__ import annotations

import json

from django.contrib import admin
from django.db.models import F
from django.urls import reverse
from django.utils.html import format_html

from ..models import Campaign, Item
from .scoping import CampaignScopedAdmin


class SystemFilter(admin.SimpleListFilter):
    title = "system"
    parameter_name = "system"

    def lookups(self, request, model_admin):
        items = model_admin.get_queryset(request).exclude(system="")
        campaign = request.GET.get("campaign__id__exact", "")
        if campaign.isdigit() and len(campaign) < 19:  # the systems of the chosen campaign only
            items = items.filter(campaign_id=int(campaign))
        systems = items.order_by("system").values_list("system", flat=True).distinct()[:200]
        return [(s, s) for s in systems]

    def queryset(self, request, queryset):
        return queryset.filter(system=self.value()) if self.value() else queryset


class FillFilter(admin.SimpleListFilter):
    title = "fill state"
    parameter_name = "fill"

    def lookups(self, request, model_admin):
        return [("untouched", "Not handed out yet"), ("open", "Open (slots free)"),
                ("in_progress", "Held by active assignments"), ("complete", "Complete")]

    def queryset(self, request, queryset):
        regular = queryset.filter(control="")
        match self.value():
            case "untouched":
                return regular.filter(slots_taken=0)
            case "open":
                return regular.filter(slots_taken__lt=F("slots_wanted"))
            case "in_progress":
                return regular.filter(annotations_done__lt=F("slots_taken"))
            case "complete":
                return regular.filter(annotations_done__gte=F("slots_wanted"))
        return queryset


@admin.register(Item)
class ItemAdmin(CampaignScopedAdmin):
    list_display = ("external_id", "campaign", "system", "control", "fill", "slots_taken",
                    "preview_link")
    list_filter = (("campaign", admin.RelatedOnlyFieldListFilter), SystemFilter, "control",
                   FillFilter)
    search_fields = ("external_id", "system")
    list_select_related = ("campaign",)
    fields = ("campaign", "external_id", "system", "control", "preview_link", "data_pretty",
              "gold_pretty", "gold_tolerance", "slots_wanted", "slots_taken", "annotations_done",
              "created_at")
    readonly_fields = fields
    actions = None

    # Items come in through the import (all-or-nothing, validated); their counters belong to
    # the assignment service. Deleting is only safe before any work was handed out.
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return (super().has_delete_permission(request, obj) and obj is not None
                and obj.campaign.status == Campaign.Status.DRAFT and obj.slots_taken == 0)

    @admin.display(description="Annotations", ordering="annotations_done")
    def fill(self, obj):
        if obj.control:
            return f"{obj.annotations_done} (control)"
        return f"{obj.annotations_done} / {obj.slots_wanted}"

    @admin.display(description="")
    def preview_link(self, obj):
        url = reverse("admin:campaigns_campaign_preview", args=[obj.campaign_id])
        return format_html('<a href="{}?item={}">Preview as a worker</a>', url, obj.pk)

    @admin.display(description="Data")
    def data_pretty(self, obj):
        return format_html("<pre class=\"admin-json\">{}</pre>",
                           json.dumps(obj.data, indent=2, ensure_ascii=False))

    @admin.display(description="Gold answers")
    def gold_pretty(self, obj):
        if obj.gold is None:
            return "-"
        return format_html("<pre class=\"admin-json\">{}</pre>",
                           json.dumps(obj.gold, indent=2, ensure_ascii=False))
