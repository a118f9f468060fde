"""The qualification test's answers over the API: JSON rows, or CSV with ?download=csv. Kept
apart from the annotations (never in their exports or in the statistics)."""
from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from . import openapi
from .permissions import campaign_for
from .serializers import validated

QUALIFICATIONS_SCHEMA = {
    "type": "object",
    "properties": {
        "campaign": {"type": "string"},
        "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
        "answers": {"type": "array", "items": {"type": "object", "additionalProperties": {}}},
    },
    "required": ["campaign", "counts", "answers"],
}


class QualificationListApi(APIView):
    class FilterInput(serializers.Serializer):
        download = serializers.ChoiceField(choices=["csv"], required=False)

    @extend_schema(
        operation_id="campaigns_qualifications", tags=["submissions"],
        parameters=[OpenApiParameter("download", str, enum=["csv"],
                                     description="csv: the answers as CSV.")],
        responses={200: QUALIFICATIONS_SCHEMA, **openapi.errors()},
    )
    def get(self, request, slug: str):
        """The qualification test: how many participants passed, failed or are taking it, and
        one row per answer (the participant, the test's outcome and score, the item, whether
        the answer was correct, the seconds spent, the answers)."""
        from ..selectors import qualification

        campaign = campaign_for(request.user, slug)
        download = validated(self.FilterInput, request.query_params).get("download")
        rows = qualification.qualification_rows(campaign=campaign)
        if download:
            response = HttpResponse(qualification.qualification_csv(rows),
                                    content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = (
                f'attachment; filename="{campaign.slug}-qualification.csv"')
            return response
        return Response({"campaign": campaign.slug,
                         "counts": qualification.qualification_counts(campaign=campaign),
                         "answers": rows})
