"""Statistics endpoint: the analysis selector's tables (agreement, scores, judges, quality)."""
from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from ..selectors.analysis import campaign_statistics
from . import openapi
from .base import ApiView
from .permissions import campaign_for
from .serializers import validated

STATS_SCHEMA = {
    "type": "object",
    "description": "Every analysis table as lists of row objects (see docs/analysis).",
    "properties": {
        "campaign": {"type": "string"},
        "exclude_flagged": {"type": "boolean"},
        "counts": {"type": "object", "additionalProperties": {}},
    },
    "required": ["campaign", "exclude_flagged", "counts"],
    "additionalProperties": {},
}


class CampaignStatsApi(ApiView):
    class StatsFilterInput(serializers.Serializer):
        exclude_flagged = serializers.BooleanField(required=False, default=False)

    @extend_schema(
        operation_id="campaigns_stats", tags=["statistics"],
        parameters=[OpenApiParameter("exclude_flagged", bool, description=(
            "Leave workers flagged by quality control out of every statistic; `changes` then "
            "compares the figures with and without them."))],
        responses={200: STATS_SCHEMA, **openapi.errors()},
    )
    def get(self, request, slug: str):
        """Agreement, system scores and ranking, pairwise tests, judge-vs-human figures,
        worker quality and progress per day."""
        campaign = campaign_for(request.user, slug)
        filters = validated(self.StatsFilterInput, request.query_params)
        return Response(campaign_statistics(campaign=campaign, **filters))
