"""Export job endpoints: create (202), list, poll status and progress, download when done."""
from __future__ import annotations

from pathlib import PurePosixPath

from django.core.files.storage import storages
from django.http import FileResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from ..errors import Conflict
from ..models import ExportJob
from ..services.exports import export_job_create
from . import openapi
from .pagination import PAGE_PARAMETERS, NewestFirstPagination, paginated
from .permissions import campaign_for
from .serializers import StrictInput, validated


class ExportOptionsInput(StrictInput):
    gzip = serializers.BooleanField(required=False, help_text="Compress the file.")
    raw_worker_ids = serializers.BooleanField(
        required=False, help_text="Platform ids instead of pseudonyms (personal data!).")
    exclude_flagged = serializers.BooleanField(
        required=False, help_text="Leave out workers flagged by the quality checks.")
    worker_platform = serializers.ChoiceField(
        choices=("human", "llm", "all"), required=False,
        help_text="Whose annotations: people (default), LLM judges, or all of them.")


class ExportJobOutput(serializers.ModelSerializer):
    requested_by = serializers.CharField(source="requested_by.username", allow_null=True,
                                         default=None)
    options = serializers.JSONField()
    progress = serializers.SerializerMethodField(help_text="rows_written / rows_total (0..1), "
                                                 "null while the total is unknown.")
    download_url = serializers.SerializerMethodField(help_text="Set once the job is done.")

    class Meta:
        model = ExportJob
        fields = ["id", "format", "options", "status", "rows_written", "rows_total", "progress",
                  "error", "waiting", "requested_by", "created_at", "started_at", "finished_at",
                  "download_url"]
        read_only_fields = fields

    def get_progress(self, job: ExportJob) -> float | None:
        if job.status == ExportJob.Status.DONE:
            return 1.0
        if not job.rows_total:
            return None
        return min(1.0, round(job.rows_written / job.rows_total, 4))

    def get_download_url(self, job: ExportJob) -> str | None:
        if job.status != ExportJob.Status.DONE:
            return None
        url = reverse("api:exports-download", args=[job.campaign.slug, job.pk])
        request = self.context.get("request")
        return request.build_absolute_uri(url) if request else url


def job_for(user, slug: str, job_id: int) -> ExportJob:
    campaign = campaign_for(user, slug)
    job = (ExportJob.objects.filter(campaign=campaign, pk=job_id)
           .select_related("campaign", "requested_by").first())
    if job is None:
        raise NotFound("No such export job in this campaign.")
    return job


class ExportListCreateApi(APIView):
    class ExportCreateInput(StrictInput):
        format = serializers.ChoiceField(choices=ExportJob.Format.choices,
                                         default=ExportJob.Format.CSV)
        options = ExportOptionsInput(required=False)

    @extend_schema(operation_id="exports_list", tags=["exports"], parameters=PAGE_PARAMETERS,
                   responses={200: paginated(ExportJobOutput), **openapi.errors()})
    def get(self, request, slug: str):
        """The campaign's export jobs, newest first, with their status and download links."""
        campaign = campaign_for(request.user, slug)
        jobs = ExportJob.objects.filter(campaign=campaign).select_related("campaign",
                                                                          "requested_by")
        paginator = NewestFirstPagination()
        page = paginator.paginate_queryset(jobs, request, view=self)
        data = ExportJobOutput(page, many=True, context={"request": request}).data
        return paginator.get_paginated_response(data)

    @extend_schema(
        operation_id="exports_create", tags=["exports"], request=ExportCreateInput,
        examples=[OpenApiExample("Compressed CSV", {"format": "csv", "options": {"gzip": True}},
                                 request_only=True)],
        responses={202: ExportJobOutput, **openapi.errors(openapi.WRITE)},
    )
    def post(self, request, slug: str):
        """Start an export; poll the returned job until `status` is done, then download."""
        campaign = campaign_for(request.user, slug)
        data = validated(self.ExportCreateInput, request.data)
        job = export_job_create(campaign=campaign, requested_by=request.user,
                                fmt=data["format"], options=data.get("options") or {})
        job = job_for(request.user, slug, job.pk)
        return Response(ExportJobOutput(job, context={"request": request}).data,
                        status=status.HTTP_202_ACCEPTED)


class ExportDetailApi(APIView):
    @extend_schema(operation_id="exports_read", tags=["exports"],
                   responses={200: ExportJobOutput, **openapi.errors()})
    def get(self, request, slug: str, job_id: int):
        """One export job: its status, rows written so far and, once done, the download link."""
        job = job_for(request.user, slug, job_id)
        return Response(ExportJobOutput(job, context={"request": request}).data)


# The media type of an export file, by the file name's last suffix.
CONTENT_TYPES = {".csv": "text/csv", ".jsonl": "application/x-ndjson",
                 ".json": "application/json", ".zip": "application/zip",
                 ".gz": "application/gzip"}
_FILE = OpenApiResponse(OpenApiTypes.BINARY, description="The export file.")


class ExportDownloadApi(APIView):
    def perform_content_negotiation(self, request, force=False):
        # The answer is a file, not rendered JSON: never refuse an Accept header with 406.
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(
        operation_id="exports_download", tags=["exports"],
        responses={**{(200, t): _FILE for t in [*CONTENT_TYPES.values(),
                                                "application/octet-stream"]},
                   **openapi.errors((*openapi.READ, 409))},
    )
    def get(self, request, slug: str, job_id: int):
        """The finished export file (409 while the job is still queued or running)."""
        job = job_for(request.user, slug, job_id)
        if job.status != ExportJob.Status.DONE or not job.file:
            raise Conflict(f"The export is {job.status}, not done; poll the job until it is.",
                           extra={"status": job.status})
        name = PurePosixPath(job.file).name
        content_type = CONTENT_TYPES.get(PurePosixPath(name).suffix, "application/octet-stream")
        try:
            handle = storages["exports"].open(job.file, "rb")
        except FileNotFoundError:
            raise Conflict("The export file is no longer stored; start a new export.",
                           extra={"status": job.status}) from None
        return FileResponse(handle, as_attachment=True, filename=name, content_type=content_type)
