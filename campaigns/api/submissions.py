"""The submissions list over the API: JSON rows, or one of its CSV files with ?download=."""
from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from . import openapi
from .permissions import campaign_for
from .serializers import validated

SUBMISSIONS_SCHEMA = {
    "type": "object",
    "properties": {
        "campaign": {"type": "string"},
        "submissions": {"type": "array", "items": {"type": "object", "additionalProperties": {}}},
    },
    "required": ["campaign", "submissions"],
}
FILES = ("csv", "approve", "bonus")


class SubmissionListApi(APIView):
    class FilterInput(serializers.Serializer):
        download = serializers.ChoiceField(choices=FILES, required=False)

    @extend_schema(
        operation_id="campaigns_submissions", tags=["submissions"],
        parameters=[OpenApiParameter("download", str, enum=list(FILES), description=(
            "csv: the list as CSV; approve: Prolific submissions to approve; bonus: Prolific's "
            "bulk bonus lines `<participant_id>,<amount>`."))],
        responses={200: SUBMISSIONS_SCHEMA, **openapi.errors()},
    )
    def get(self, request, slug: str):
        """Every handed-in assignment with platform ids, completion code, time taken, quality
        checks, the suggested action (approve / review / reject with Prolific's category) and
        the bonus from the campaign's rule."""
        from ..selectors import approvals

        campaign = campaign_for(request.user, slug)
        download = validated(self.FilterInput, request.query_params).get("download")
        rows = approvals.campaign_submissions(campaign=campaign)
        if download:
            content = {"csv": approvals.submissions_csv, "approve": approvals.prolific_approve_list,
                       "bonus": approvals.prolific_bonus_csv}[download](rows)
            response = HttpResponse(content, content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = (
                f'attachment; filename="{campaign.slug}-{download}.csv"')
            return response
        return Response({"campaign": campaign.slug, "submissions": rows})
