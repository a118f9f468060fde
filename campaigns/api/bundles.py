"""GET /api/campaigns/<slug>/report/bundle/: the evaluation report's paper bundle (ZIP)."""
from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..errors import ServiceError
from ..services.bundles import report_bundle
from ..services.statistics import Status
from . import openapi
from .permissions import campaign_for
from .serializers import validated
from .stats import PENDING_SCHEMA, REPORT_PARAMETERS, CampaignReportApi, _lists


class CampaignReportBundleApi(APIView):
    @extend_schema(
        operation_id="campaigns_report_bundle", tags=["statistics"],
        parameters=REPORT_PARAMETERS,
        responses={200: OpenApiResponse(OpenApiTypes.BINARY, description=(
            "application/zip: figures (PDF, SVG), tables (LaTeX, CSV), methods.tex and "
            "methods.txt, references.bib, datasheet.md, provenance.json, check.tex.")),
            202: PENDING_SCHEMA, **openapi.errors()},
    )
    def get(self, request, slug: str):
        """The paper bundle of the report for these options (the report's query parameters),
        from the cached report and the figures drawn with it; 202 while they are computed."""
        campaign = campaign_for(request.user, slug)
        options = validated(CampaignReportApi.ReportInput,
                            _lists(request.query_params, ("subset_by", "levels")))
        bundle = report_bundle(campaign=campaign, options=options)
        row = bundle.cached.row
        if bundle.content is None and row.status == Status.FAILED:
            raise ServiceError(f"Computing the report failed ({row.error}); POST to "
                               "/report/ to try again.", code="statistics_failed", status=409)
        if bundle.content is None:
            return Response({"status": row.status, "requested_at": row.queued_at,
                             "url": request.build_absolute_uri(),
                             "message": "The report and its figures are being computed: ask "
                                        "again in a few seconds."},
                            status=status.HTTP_202_ACCEPTED, headers={"Retry-After": "5"})
        response = HttpResponse(bundle.content, content_type="application/zip")
        response["Content-Disposition"] = f'attachment; filename="{bundle.filename}"'
        return response
