"""Progress endpoint: annotation counts overall and per system."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import Annotation, Item
from ..selectors.dashboard import campaign_progress
from . import openapi
from .permissions import campaign_for


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


class CampaignProgressApi(APIView):
    @extend_schema(operation_id="campaigns_progress", tags=["progress"],
                   responses={200: CampaignProgressOutput, **openapi.errors()})
    def get(self, request, slug: str):
        """Counts of regular items' annotation slots, overall and per system."""
        campaign = campaign_for(request.user, slug)
        overall, per_system = campaign_progress(campaign=campaign)
        body = {
            "status": campaign.status,
            "overall": overall,
            "per_system": per_system,
            "annotations": Annotation.objects.filter(campaign=campaign).count(),
            "control_items": Item.objects.filter(campaign=campaign).exclude(control="").count(),
        }
        return Response(CampaignProgressOutput(body).data)
