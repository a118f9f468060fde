"""Researcher scoping: an admin user sees only the campaigns they own or collaborate on."""
from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import Http404, HttpRequest

from ..selectors.campaigns import campaigns_visible_to


def visible_campaign_ids(request: HttpRequest) -> set[int] | None:
    """The ids of the campaigns this user may see, or None for "all" (superusers).

    Cached on the request: permission checks run several times per admin page.
    """
    if getattr(request.user, "is_superuser", False):
        return None
    if not hasattr(request, "_visible_campaign_ids"):
        request._visible_campaign_ids = set(
            campaigns_visible_to(request.user).values_list("pk", flat=True)
        )
    return request._visible_campaign_ids


def campaign_is_visible(request: HttpRequest, campaign_id: int | None) -> bool:
    ids = visible_campaign_ids(request)
    return ids is None or campaign_id in ids


class CampaignScopedAdmin(admin.ModelAdmin):
    """For models that belong to a campaign (`campaign` FK): rows, choices and objects scoped.

    An object of someone else's campaign is a 404, as if it did not exist (the default admin
    redirects to the index instead, which tells tests and people less).
    """

    campaign_lookup = "campaign"

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        qs = super().get_queryset(request)
        if request.user.is_superuser:
            return qs
        visible = campaigns_visible_to(request.user).values("pk")
        return qs.filter(**{f"{self.campaign_lookup}__in": visible})

    def get_object(self, request, object_id, from_field=None):
        obj = super().get_object(request, object_id, from_field)
        if obj is None:
            raise Http404("No such object, or it belongs to a campaign you cannot see.")
        return obj

    def _visible(self, request, obj) -> bool:
        return obj is None or campaign_is_visible(request, obj.campaign_id)

    def has_view_permission(self, request, obj=None):
        return super().has_view_permission(request, obj) and self._visible(request, obj)

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and self._visible(request, obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and self._visible(request, obj)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "campaign" and not request.user.is_superuser:
            kwargs["queryset"] = campaigns_visible_to(request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class ReadOnlyAdmin(CampaignScopedAdmin):
    """Rows written only by the worker pages and services (answers, assignments, workers).

    Not deletable either: a raw delete would skip the slot bookkeeping of the assignment
    service and the deletion record of the privacy service (workers have an erase action).
    """

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
