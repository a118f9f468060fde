"""Item endpoints: import a file or a JSON list (all or nothing), list with cursor pagination."""
from __future__ import annotations

import json
import re

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ParseError
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.http.limits import takes_uploads

from ..importing import FORMATS, TRANSCRIPTS, ImportRejected, RowError, decode
from ..models import ImportJob, Item
from ..services.imports import import_is_background, import_job_create, import_job_progress
from ..services.items import items_import
from . import openapi
from .pagination import PAGE_PARAMETERS, ApiCursorPagination, paginated
from .parsers import BoundedJSONParser
from .permissions import campaign_for
from .serializers import reject_unstorable, validated

# PostgreSQL cannot store NUL characters or unpaired surrogates, raw or as JSON escapes
# (a surrogate *pair* such as "\ud83d\ude00", an escaped emoji, is fine).
_HIGH, _LOW = rb"\\u[dD][89abAB][0-9a-fA-F]{2}", rb"\\u[dD][c-fC-F][0-9a-fA-F]{2}"
_UNSTORABLE = re.compile(rb"\x00|\\u0000|" + _HIGH + rb"(?!" + _LOW + rb")|(?<!" + _HIGH + rb")"
                         + _LOW)

ITEMS_JSON_SCHEMA = {
    "type": "array",
    "description": "Items as objects: `id`, optional `system`, `control`, `gold`, "
                   "`gold_tolerance`, and the fields the schema displays.",
    "items": {"type": "object", "additionalProperties": {}},
}


class ItemOutput(serializers.ModelSerializer):
    data = serializers.JSONField()
    gold = serializers.JSONField(allow_null=True)

    class Meta:
        model = Item
        fields = ["id", "external_id", "system", "control", "data", "gold", "gold_tolerance",
                  "slots_wanted", "slots_taken", "annotations_done", "created_at"]
        read_only_fields = fields


def check_storable(content: bytes) -> None:
    """Refuse a file PostgreSQL could not store, naming what is wrong: an encoding or a
    compression the import cannot read (UTF-16 is not "NUL characters"), or unstorable
    characters written as JSON escapes."""
    text = decode(content)
    if _UNSTORABLE.search(text.encode("utf-8", "surrogatepass")):
        raise ImportRejected([RowError(None, "", "the data contains NUL characters or unpaired "
                                       "surrogates, which cannot be stored")])


class ImportJobOutput(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()

    class Meta:
        model = ImportJob
        fields = ["id", "kind", "url", "status", "progress", "filename", "size", "created",
                  "updated", "control_items", "judges", "error", "errors", "error_total",
                  "waiting", "created_at", "started_at", "finished_at"]
        read_only_fields = fields

    def get_url(self, job) -> str:
        return reverse(f"api:{job.kind}-import-job", args=[job.campaign.slug, job.pk])

    def get_progress(self, job) -> str:
        return import_job_progress(job=job)


class ImportJobDetailApi(APIView):
    kind = ImportJob.Kind.ITEMS

    @extend_schema(operation_id="items_import_job", tags=["items"],
                   responses={200: ImportJobOutput, **openapi.errors()})
    def get(self, request, slug: str, job_id: int):
        """A background item import: queued, running (with progress), done (with the count)
        or failed (with the row-numbered errors; nothing was imported)."""
        return Response(ImportJobOutput(import_job_for(request.user, slug, job_id,
                                                       kind=self.kind)).data)


def import_job_for(user, slug: str, job_id: int, *, kind: str = ImportJob.Kind.ITEMS
                   ) -> ImportJob:
    """One of the campaign's import jobs of this kind (404 otherwise)."""
    return get_object_or_404(ImportJob.objects.select_related("campaign"),
                             campaign=campaign_for(user, slug), kind=kind, pk=job_id)


@takes_uploads
class ItemImportApi(APIView):
    parser_classes = [BoundedJSONParser, MultiPartParser]

    class ItemImportOutput(serializers.Serializer):
        created = serializers.IntegerField()
        control_items = serializers.IntegerField(help_text="Attention-check and gold items.")

    class ItemImportUploadInput(serializers.Serializer):
        file = serializers.FileField(help_text="A .csv, .tsv, .json or .jsonl file (UTF-8).")
        format = serializers.ChoiceField(choices=FORMATS, required=False,
                                         help_text="Default: from the file name's extension.")
        transcripts = serializers.ChoiceField(
            choices=TRANSCRIPTS, required=False, default="messages",
            help_text="How conversations (chat fields, chat outputs) are written: OpenAI "
                      "messages lists, HH-RLHF transcripts (rows of chosen/rejected become "
                      "two outputs) or ShareGPT turns. A JSON body gives it as the query "
                      "parameter `transcripts`.")

    @extend_schema(
        operation_id="items_import", tags=["items"],
        parameters=[OpenApiParameter(
            "transcripts", str, enum=list(TRANSCRIPTS), required=False,
            description="With a JSON body: how its conversations are written (default "
                        "`messages`; see the upload's `transcripts`).")],
        request={"application/json": ITEMS_JSON_SCHEMA,
                 "multipart/form-data": ItemImportUploadInput},
        examples=[OpenApiExample("Two items of two systems", request_only=True, value=[
            {"id": "r3", "system": "model-a", "prompt": "The film opens", "completion": "slowly."},
            {"id": "r4", "system": "model-b", "prompt": "The film opens", "completion": "well."},
        ])],
        responses={201: ItemImportOutput, 202: ImportJobOutput,
                   **openapi.errors(openapi.WRITE)},
    )
    def post(self, request, slug: str):
        """Import items: every row or none. A bad row rejects the request with 400 and
        `extra.errors` listing each problem with its row (1-based) and field. An uploaded
        file larger than IMPORT_BACKGROUND_BYTES is imported by a background job instead:
        202 with the job, whose `url` to poll tells its status, progress and outcome."""
        campaign = campaign_for(request.user, slug)
        if request.content_type.startswith("multipart/"):
            data = validated(self.ItemImportUploadInput, request.data)
            upload = data["file"]
            if import_is_background(size=upload.size):  # past a web request's time: a job
                job = import_job_create(campaign=campaign, requested_by=request.user,
                                        upload=upload, filename=upload.name or "",
                                        fmt=data.get("format"),
                                        options={"transcripts": data["transcripts"]})
                return Response(ImportJobOutput(job, context={"request": request}).data,
                                status=status.HTTP_202_ACCEPTED)
            content, filename, fmt = upload.read(), upload.name or "", data.get("format")
            transcripts = data["transcripts"]
        else:
            content, filename, fmt = self._json_content(request.data), "items.json", "json"
            transcripts = request.query_params.get("transcripts") or "messages"
        check_storable(content)
        result = items_import(campaign=campaign, content=content, filename=filename, fmt=fmt,
                              transcripts=transcripts)
        body = self.ItemImportOutput({"created": result.created,
                                      "control_items": result.control_items})
        return Response(body.data, status=status.HTTP_201_CREATED)

    @staticmethod
    def _json_content(data) -> bytes:
        if isinstance(data, dict) and isinstance(data.get("items"), list):
            data = data["items"]
        if not isinstance(data, list):
            raise ParseError("Expected a JSON list of items (or a multipart upload with `file`).")
        reject_unstorable(data)
        return json.dumps(data).encode()


class ItemListApi(APIView):
    class ItemFilterInput(serializers.Serializer):
        system = serializers.CharField(required=False, max_length=200)
        control = serializers.ChoiceField(required=False, choices=Item.Control.choices)

    @extend_schema(
        operation_id="items_list", tags=["items"],
        parameters=[OpenApiParameter("system", str, description="Only this system's items."),
                    OpenApiParameter("control", str, enum=[c.value for c in Item.Control],
                                     description="'' regular, 'attention' or 'gold'."),
                    *PAGE_PARAMETERS],
        responses={200: paginated(ItemOutput), **openapi.errors()},
    )
    def get(self, request, slug: str):
        """The campaign's items with their data, control kind and slot counts; filter by
        system or control kind, and follow `next`."""
        campaign = campaign_for(request.user, slug)
        filters = validated(self.ItemFilterInput, request.query_params)
        items = Item.objects.filter(campaign=campaign, **filters)
        paginator = ApiCursorPagination()
        page = paginator.paginate_queryset(items, request, view=self)
        return paginator.get_paginated_response(ItemOutput(page, many=True).data)
