"""Progress endpoint: annotation counts overall and per system."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from ..models import Annotation, Campaign, Item
from ..selectors import dashboard
from . import openapi
from .base import ApiView
from .permissions import campaign_for

_FIGURES = ("items", "items_complete", "wanted", "done", "in_progress", "remaining")


def _progress(campaign: Campaign):
    """(overall, per_system) from the dashboard selector, without its score charts."""
    if hasattr(dashboard, "campaign_progress"):
        return dashboard.campaign_progress(campaign=campaign)
    per_system = dashboard._progress_per_system(campaign)
    overall = dashboard.Progress(system="All systems")
    for p in per_system:
        for name in _FIGURES:
            setattr(overall, name, getattr(overall, name) + getattr(p, name))
    return overall, per_system


class ProgressOutput(serializers.Serializer):
    system = serializers.CharField()
    items = serializers.IntegerField(help_text="Regular items.")
    items_complete = serializers.IntegerField(help_text="Items with all their annotations.")
    wanted = serializers.IntegerField(help_text="Annotations wanted (items x k).")
    done = serializers.IntegerField(help_text="Annotations submitted.")
    in_progress = serializers.IntegerField(help_text="Slots held by open assignments.")
    remaining = serializers.IntegerField(help_text="Slots nobody holds yet.")
    percent_done = serializers.FloatField()


class CampaignProgressOutput(serializers.Serializer):
    status = serializers.CharField()
    overall = ProgressOutput()
    per_system = ProgressOutput(many=True)
    annotations = serializers.IntegerField(help_text="All annotations, control items included.")
    control_items = serializers.IntegerField(help_text="Attention-check and gold items.")


class CampaignProgressApi(ApiView):
    @extend_schema(operation_id="campaigns_progress", tags=["progress"],
                   responses={200: CampaignProgressOutput, **openapi.errors()})
    def get(self, request, slug: str):
        """Counts of regular items' annotation slots, overall and per system."""
        campaign = campaign_for(request.user, slug)
        overall, per_system = _progress(campaign)
        body = {
            "status": campaign.status,
            "overall": overall,
            "per_system": per_system,
            "annotations": Annotation.objects.filter(campaign=campaign).count(),
            "control_items": Item.objects.filter(campaign=campaign).exclude(control="").count(),
        }
        return Response(CampaignProgressOutput(body).data)
