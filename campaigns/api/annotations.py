"""Annotation endpoint: list with cursor pagination, filtered by system, worker, time."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.views import APIView

from ..exporting.pseudonyms import worker_pseudonym
from ..models import Annotation, Campaign, Worker
from . import openapi
from .pagination import PAGE_PARAMETERS, ApiCursorPagination, paginated
from .permissions import campaign_for
from .serializers import validated


class AnnotationOutput(serializers.ModelSerializer):
    item = serializers.CharField(source="item.external_id", help_text="The item's id.")
    system = serializers.CharField(source="item.system")
    worker = serializers.SerializerMethodField(help_text="The worker's pseudonym in this campaign.")
    platform = serializers.CharField(source="worker.platform")
    answers = serializers.JSONField()
    provenance = serializers.JSONField(help_text=(
        "How each free-text answer came to be: {answer path: {typed, pasted, pastes, ms, "
        "chars}} (docs/exports.md); {} when the page recorded none."))
    submitted_at = serializers.DateTimeField(source="updated_at",
                                             help_text="The last submit of these answers.")
    allocation = serializers.CharField(
        source="assignment.allocation",
        help_text="The allocation strategy its assignment was handed out under (empty when no "
                  "claim handed it out: judges, imports).")
    allocation_epoch = serializers.IntegerField(
        source="assignment.allocation_epoch", allow_null=True,
        help_text="The campaign's priority epoch at that claim (null when unknown).")

    class Meta:
        model = Annotation
        fields = ["id", "item_id", "item", "system", "worker", "platform", "answers",
                  "provenance", "seconds_spent", "seconds_first", "control_passed", "created_at",
                  "submitted_at", "allocation", "allocation_epoch"]
        read_only_fields = fields

    def get_worker(self, annotation: Annotation) -> str:
        w = annotation.worker
        return worker_pseudonym(campaign_id=annotation.campaign_id, platform=w.platform,
                                platform_id=w.platform_id)


def _worker_ids(campaign: Campaign, pseudonym: str) -> list[int]:
    """Workers whose pseudonym is `pseudonym`: the pseudonym is a keyed hash, so compute it."""
    rows = Worker.objects.filter(campaign=campaign).values_list("id", "platform", "platform_id")
    return [pk for pk, platform, platform_id in rows
            if worker_pseudonym(campaign_id=campaign.pk, platform=platform,
                                platform_id=platform_id) == pseudonym]


class AnnotationListApi(APIView):
    class AnnotationFilterInput(serializers.Serializer):
        system = serializers.CharField(required=False, max_length=200)
        worker = serializers.RegexField(r"^w_[0-9a-f]{16}$", required=False, max_length=18)
        submitted_after = serializers.DateTimeField(required=False)

    @extend_schema(
        operation_id="annotations_list", tags=["annotations"],
        parameters=[
            OpenApiParameter("system", str, description="Only annotations of this system's items."),
            OpenApiParameter("worker", str, pattern=r"^w_[0-9a-f]{16}$",
                             description="Only this worker's (pseudonym, as in exports)."),
            OpenApiParameter("submitted_after", OpenApiTypes.DATETIME,
                             description="Only annotations submitted (or resubmitted) after this "
                                         "ISO 8601 time."),
            *PAGE_PARAMETERS,
        ],
        responses={200: paginated(AnnotationOutput), **openapi.errors()},
    )
    def get(self, request, slug: str):
        """The campaign's stored annotations (answers, worker pseudonym, time), oldest first;
        filter by system, worker or submission time, and follow `next`."""
        campaign = campaign_for(request.user, slug)
        filters = validated(self.AnnotationFilterInput, request.query_params)
        annotations = Annotation.objects.filter(campaign=campaign).select_related(
            "item", "worker", "assignment")
        if "system" in filters:
            annotations = annotations.filter(item__system=filters["system"])
        if "worker" in filters:
            annotations = annotations.filter(worker_id__in=_worker_ids(campaign, filters["worker"]))
        if "submitted_after" in filters:
            annotations = annotations.filter(updated_at__gt=filters["submitted_after"])
        paginator = ApiCursorPagination()
        page = paginator.paginate_queryset(annotations, request, view=self)
        return paginator.get_paginated_response(AnnotationOutput(page, many=True).data)
