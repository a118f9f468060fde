"""Judgment import: rows of (item id, judge or rater, raw output), all or nothing.

`platform` says whose judgments they are: `llm` (default) for an LLM judge, a human platform
(`account` for e.g. published expert scores) for past human ratings, which then count toward
the items' progress and k.
"""
from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ParseError
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.http.limits import takes_uploads

from ..importing import ImportRejected, RowError
from ..models import ImportJob, Worker
from ..services.imports import import_is_background, import_job_create
from ..services.judgments import (
    MAX_OUTPUT_CHARS,
    JudgmentRow,
    judgments_import,
    read_judgment_file,
)
from . import openapi
from .items import ImportJobDetailApi, ImportJobOutput, check_storable
from .parsers import BoundedJSONParser
from .permissions import campaign_for
from .serializers import StrictInput, reject_unstorable, validated


class JudgmentRowInput(StrictInput):
    item = serializers.CharField(max_length=200, help_text="The item's id (as imported).")
    judge = serializers.CharField(max_length=200, help_text="The judge's name, e.g. a model.")
    output = serializers.CharField(
        max_length=MAX_OUTPUT_CHARS, trim_whitespace=False,
        help_text="The judge's raw output; the {...} dictionary in it is parsed as a literal "
                  "(never evaluated) and checked against the task schema.")


def _rows_from_json(data) -> list[JudgmentRow]:
    """Check each row's shape; problems are reported with 1-based row numbers, like files."""
    if not isinstance(data, list):
        raise ParseError("Expected a JSON list of {item, judge, output} objects "
                         "(or a multipart upload with `file`).")
    reject_unstorable(data)
    rows, errors = [], []
    for number, record in enumerate(data, start=1):
        row = JudgmentRowInput(data=record)
        if not isinstance(record, dict):
            errors.append(RowError(number, "", "expected an object with item, judge and output"))
        elif not row.is_valid():
            errors += [RowError(number, field, str(messages[0]))
                       for field, messages in row.errors.items()]
        else:
            v = row.validated_data
            rows.append(JudgmentRow(number, v["item"].strip(), v["judge"].strip(), v["output"]))
    if errors:
        raise ImportRejected(errors)
    if not rows:
        raise ImportRejected([RowError(None, "", "no judgments given")])
    return rows


@takes_uploads
class JudgmentImportApi(APIView):
    parser_classes = [BoundedJSONParser, MultiPartParser]

    class JudgmentImportOutput(serializers.Serializer):
        created = serializers.IntegerField()
        updated = serializers.IntegerField(help_text="Re-imported (judge, item) pairs replaced.")
        judges = serializers.ListField(child=serializers.CharField())

    class JudgmentUploadInput(serializers.Serializer):
        file = serializers.FileField(help_text="CSV, TSV or JSONL: item, judge, output columns.")
        judge = serializers.CharField(required=False, max_length=200,
                                      help_text="The judge's name if the file has no judge column.")
        platform = serializers.ChoiceField(choices=Worker.Platform.values, required=False,
                                           default=Worker.Platform.LLM)

    class PlatformInput(serializers.Serializer):
        platform = serializers.ChoiceField(
            choices=Worker.Platform.values, required=False, default=Worker.Platform.LLM,
            help_text="llm for an LLM judge; a human platform (e.g. account) for past human "
                      "ratings: one worker per rater id, counted toward progress and k.")

    @extend_schema(
        operation_id="judgments_import", tags=["judgments"],
        request={"application/json": JudgmentRowInput(many=True),
                 "multipart/form-data": JudgmentUploadInput},
        examples=[OpenApiExample("A judge's raw outputs", request_only=True, value=[
            {"item": "r1", "judge": "gpt-4o", "output": "{'coherence': 4, 'sentiment': 3}"},
            {"item": "r2", "judge": "gpt-4o",
             "output": "Scores:\n```\n{\"coherence\": 2, \"sentiment\": 5}\n```"},
        ])],
        parameters=[OpenApiParameter("platform", str, enum=list(Worker.Platform.values),
                                     description=(
            "JSON body: whose judgments these are (default llm). A human platform (account, "
            "link, ...) imports past human ratings that count toward progress and k."))],
        responses={200: JudgmentImportOutput, 202: ImportJobOutput,
                   **openapi.errors(openapi.WRITE)},
    )
    def post(self, request, slug: str):
        """Store every judgment as a judge's annotation, or none (400 with row-numbered errors).
        Re-importing a judge's output for an item replaces it. An uploaded file larger than
        IMPORT_BACKGROUND_BYTES is imported by a background job instead: 202 with the job,
        whose `url` to poll tells its status, progress and outcome."""
        campaign = campaign_for(request.user, slug)
        if request.content_type.startswith("multipart/"):
            data = validated(self.JudgmentUploadInput, request.data)
            upload = data["file"]
            if import_is_background(size=upload.size):  # past a web request's time: a job
                job = import_job_create(
                    campaign=campaign, requested_by=request.user, upload=upload,
                    filename=upload.name or "", kind=ImportJob.Kind.JUDGMENTS,
                    options={"judge": data.get("judge") or "", "platform": data["platform"]})
                return Response(ImportJobOutput(job).data, status=status.HTTP_202_ACCEPTED)
            content = upload.read()
            check_storable(content)
            rows = read_judgment_file(content, data["file"].name or "", judge=data.get("judge"))
            platform = data["platform"]
        else:
            platform = validated(self.PlatformInput, request.query_params)["platform"]
            rows = _rows_from_json(request.data)
        result = judgments_import(campaign=campaign, rows=rows, platform=platform)
        return Response(self.JudgmentImportOutput(result).data)


class JudgmentImportJobDetailApi(ImportJobDetailApi):
    kind = ImportJob.Kind.JUDGMENTS

    @extend_schema(operation_id="judgments_import_job", tags=["judgments"],
                   responses={200: ImportJobOutput, **openapi.errors()})
    def get(self, request, slug: str, job_id: int):
        """A background judgments import: queued, running (with progress), done (with the
        counts and judges) or failed (with the row-numbered errors; nothing was imported)."""
        return super().get(request, slug, job_id)
