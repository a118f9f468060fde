"""Campaign endpoints: list, create, read, update, change status."""
from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..errors import Conflict
from ..models import Campaign
from ..selectors.campaigns import campaigns_visible_to
from ..services.campaigns import CONFIG_FIELDS, campaign_create, campaign_update
from . import openapi
from .pagination import PAGE_PARAMETERS, NewestFirstPagination, paginated
from .permissions import campaign_for
from .serializers import StorableJSONField, StrictInput, validated

TEXT_MAX = 100_000
COUNT_MAX = 1_000_000


CREATE_EXAMPLE = OpenApiExample("A two-question rating task", request_only=True, value={
    "slug": "my-study", "name": "My study", "annotations_per_item": 3,
    "schema": {
        "display": [{"field": "prompt", "label": "Prompt"},
                    {"field": "completion", "label": "Continuation"}],
        "questions": [
            {"id": "coherence", "kind": "likert", "text": "Is the continuation coherent?",
             "points": [{"value": v, "label": str(v)} for v in range(1, 6)]},
            {"id": "sentiment", "kind": "likert", "text": "How positive is it?",
             "points": [{"value": v, "label": str(v)} for v in range(1, 6)]},
        ],
    },
})


class CampaignOutput(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    collaborators = serializers.SlugRelatedField(many=True, read_only=True, slug_field="username")
    schema = serializers.JSONField(help_text="The task schema (docs/schema.md).")
    intake_questions = serializers.JSONField(help_text="Questions asked once per worker.")
    # A plain string: empty when unset, which a "uri" format would deny.
    completion_redirect_url = serializers.CharField()

    class Meta:
        model = Campaign
        fields = ["id", "slug", "owner", "collaborators", *CONFIG_FIELDS, "created_at",
                  "updated_at"]
        read_only_fields = fields


class CampaignSettingsInput(StrictInput):
    """The settings a researcher may set; validated again, with JSON paths, by the service."""

    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, max_length=TEXT_MAX)
    schema = StorableJSONField(help_text="The task schema: display fields and questions.")
    instructions = serializers.CharField(required=False, allow_blank=True, max_length=TEXT_MAX)
    examples = serializers.CharField(required=False, allow_blank=True, max_length=TEXT_MAX)
    consent_text = serializers.CharField(required=False, allow_blank=True, max_length=TEXT_MAX)
    intake_questions = StorableJSONField(required=False, help_text="A list of questions.")
    items_per_assignment = serializers.IntegerField(required=False, min_value=1, max_value=1000)
    annotations_per_item = serializers.IntegerField(required=False, min_value=1, max_value=1000)
    assignment_timeout_minutes = serializers.IntegerField(required=False, min_value=1,
                                                          max_value=60 * 24 * 30)
    max_assignments_per_worker = serializers.IntegerField(required=False, allow_null=True,
                                                          min_value=1, max_value=COUNT_MAX)
    attention_checks_per_assignment = serializers.IntegerField(required=False, min_value=0,
                                                               max_value=100)
    gold_items_per_assignment = serializers.IntegerField(required=False, min_value=0,
                                                         max_value=100)
    completion_mode = serializers.ChoiceField(required=False,
                                              choices=Campaign.CompletionMode.choices)
    completion_code = serializers.CharField(required=False, allow_blank=True, max_length=100)
    completion_redirect_url = serializers.URLField(required=False, allow_blank=True,
                                                   max_length=500)
    recruitment = serializers.ChoiceField(required=False, choices=Campaign.Recruitment.choices)
    completion_code_failed_checks = serializers.CharField(required=False, allow_blank=True,
                                                          max_length=100)
    completion_code_no_work = serializers.CharField(required=False, allow_blank=True,
                                                    max_length=100)
    source = serializers.CharField(required=False, allow_blank=True, max_length=TEXT_MAX)


class CampaignCreateInput(CampaignSettingsInput):
    slug = serializers.SlugField(max_length=80, help_text="The campaign's URL name: /c/<slug>/.")


def _visible(user) -> QuerySet[Campaign]:
    return campaigns_visible_to(user).select_related("owner").prefetch_related("collaborators")


def _answer(request, campaign: Campaign, status_code: int = status.HTTP_200_OK) -> Response:
    """The campaign as the caller now sees it (re-read: owner and collaborators included)."""
    return Response(CampaignOutput(_visible(request.user).get(pk=campaign.pk)).data,
                    status=status_code)


class CampaignListCreateApi(APIView):
    @extend_schema(operation_id="campaigns_list", parameters=PAGE_PARAMETERS,
                   responses={200: paginated(CampaignOutput), **openapi.errors()})
    def get(self, request):
        paginator = NewestFirstPagination()
        page = paginator.paginate_queryset(_visible(request.user), request, view=self)
        return paginator.get_paginated_response(CampaignOutput(page, many=True).data)

    @extend_schema(operation_id="campaigns_create", request=CampaignCreateInput,
                   examples=[CREATE_EXAMPLE],
                   responses={201: CampaignOutput, **openapi.errors(openapi.WRITE)})
    def post(self, request):
        data = validated(CampaignCreateInput, request.data)
        if Campaign.objects.filter(slug=data["slug"]).exists():
            raise Conflict("A campaign with this slug already exists; choose another.",
                           extra={"field": "slug"})
        campaign = campaign_create(owner=request.user, **data)
        return _answer(request, campaign, status.HTTP_201_CREATED)


class CampaignDetailApi(APIView):
    @extend_schema(operation_id="campaigns_read",
                   responses={200: CampaignOutput, **openapi.errors()})
    def get(self, request, slug: str):
        campaign = campaign_for(request.user, slug)
        return _answer(request, campaign)

    @extend_schema(operation_id="campaigns_update", request=CampaignSettingsInput,
                   responses={200: CampaignOutput, **openapi.errors(openapi.WRITE)})
    def patch(self, request, slug: str):
        campaign = campaign_for(request.user, slug)
        data = validated(CampaignSettingsInput, request.data, partial=True)
        campaign_update(campaign=campaign, **data)
        return _answer(request, campaign)


class CampaignStatusApi(APIView):
    class CampaignStatusInput(StrictInput):
        status = serializers.ChoiceField(choices=Campaign.Status.choices)

    @extend_schema(operation_id="campaigns_status", request=CampaignStatusInput,
                   examples=[OpenApiExample("Open to workers", {"status": "live"},
                                            request_only=True)],
                   responses={200: CampaignOutput, **openapi.errors(openapi.WRITE)})
    def post(self, request, slug: str):
        """Change the status: draft, live (workers can start), paused, closed."""
        campaign = campaign_for(request.user, slug)
        data = validated(self.CampaignStatusInput, request.data)
        campaign_update(campaign=campaign, status=data["status"])
        return _answer(request, campaign)

