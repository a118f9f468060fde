"""Campaign endpoints: list, create, read, update, change status, duplicate, delete, rename a
question, erase a worker; each calls the rulebook's service (campaigns/services/campaigns.py)."""
from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import Campaign, Worker
from ..selectors.campaigns import campaigns_visible_to
from ..services.campaigns import (
    CONFIG_FIELDS,
    campaign_control_problems,
    campaign_create,
    campaign_delete,
    campaign_duplicate,
    campaign_set_status,
    campaign_update,
)
from ..services.privacy import worker_erase, worker_find
from ..services.schema_changes import answers_rename
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
    stop_when = serializers.JSONField(help_text="The stopping target ({} for none).")
    qualification = serializers.JSONField(help_text="The qualification test ({} for none).")
    allocation_stopped = serializers.CharField(
        help_text="Why the stopping target stopped the hand-out of new work (empty: it has not).")
    allocation_audit = serializers.CharField(
        help_text="What dynamic redundancy's audit of its premise found, in words (empty: "
        "nothing yet, or another strategy).")
    # A plain string: empty when unset, which a "uri" format would deny.
    completion_redirect_url = serializers.CharField()
    warnings = serializers.SerializerMethodField(
        help_text="Settings the items cannot honour yet (publishing refuses them).")

    class Meta:
        model = Campaign
        fields = ["id", "slug", "owner", "collaborators", *CONFIG_FIELDS, "allocation_epoch",
                  "allocation_stopped", "allocation_audit", "created_at", "updated_at", "warnings"]
        read_only_fields = fields

    def get_warnings(self, campaign) -> list[str]:
        return campaign_control_problems(campaign=campaign)


class CampaignListOutput(CampaignOutput):
    """A list row: everything but the warnings, which cost a count per campaign."""

    class Meta(CampaignOutput.Meta):
        fields = [f for f in CampaignOutput.Meta.fields if f != "warnings"]
        read_only_fields = fields


class CampaignSettingsInput(StrictInput):
    """The settings a researcher may set; validated again, with JSON paths, by the service."""

    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, max_length=TEXT_MAX)
    schema = StorableJSONField(help_text="The task schema: display fields and questions.")
    instructions = serializers.CharField(required=False, allow_blank=True, max_length=TEXT_MAX)
    examples = serializers.CharField(required=False, allow_blank=True, max_length=TEXT_MAX)
    judge_instructions = serializers.CharField(required=False, allow_blank=True,
                                               max_length=TEXT_MAX)
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
    completion_code_screened_out = serializers.CharField(required=False, allow_blank=True,
                                                         max_length=100)
    language = serializers.CharField(required=False, max_length=35,
                                     help_text="The worker pages' language (BCP 47).")
    language_from_browser = serializers.BooleanField(required=False)
    source = serializers.CharField(required=False, allow_blank=True, max_length=TEXT_MAX)
    min_seconds_per_item = serializers.FloatField(required=False, allow_null=True, min_value=0,
                                                  max_value=86_400)
    min_seconds_per_word = serializers.FloatField(required=False, allow_null=True, min_value=0,
                                                  max_value=3_600)
    block_paste = serializers.BooleanField(
        required=False, help_text=Campaign._meta.get_field("block_paste").help_text)
    block_copy = serializers.BooleanField(
        required=False, help_text=Campaign._meta.get_field("block_copy").help_text)
    allocation = serializers.ChoiceField(
        required=False, choices=Campaign.Allocation.choices,
        help_text=Campaign._meta.get_field("allocation").help_text)
    # 0 (no per-item floor) only under adaptive ranking: services/allocation.py says so.
    min_annotations_per_item = serializers.IntegerField(required=False, allow_null=True,
                                                        min_value=0, max_value=1000)
    max_annotations_per_item = serializers.IntegerField(required=False, allow_null=True,
                                                        min_value=1, max_value=1000)
    agreement_spread = serializers.FloatField(required=False, min_value=0, max_value=1e6)
    stop_when = StorableJSONField(required=False,
                                  help_text=Campaign._meta.get_field("stop_when").help_text)
    qualification = StorableJSONField(
        required=False, help_text=Campaign._meta.get_field("qualification").help_text)


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
                   responses={200: paginated(CampaignListOutput), **openapi.errors()})
    def get(self, request):
        """The campaigns you own or collaborate on, newest first."""
        paginator = NewestFirstPagination()
        page = paginator.paginate_queryset(_visible(request.user), request, view=self)
        return paginator.get_paginated_response(CampaignListOutput(page, many=True).data)

    @extend_schema(operation_id="campaigns_create", request=CampaignCreateInput,
                   examples=[CREATE_EXAMPLE],
                   responses={201: CampaignOutput, **openapi.errors(openapi.WRITE)})
    def post(self, request):
        """Create a draft campaign; the schema is checked and every problem named by its JSON
        path (400). A taken slug is a 409."""
        data = validated(CampaignCreateInput, request.data)
        campaign = campaign_create(owner=request.user, **data)
        return _answer(request, campaign, status.HTTP_201_CREATED)


class CampaignDetailApi(APIView):
    @extend_schema(operation_id="campaigns_read",
                   responses={200: CampaignOutput, **openapi.errors()})
    def get(self, request, slug: str):
        """One campaign's settings, schema and status; `warnings` lists settings its items
        cannot honour yet."""
        campaign = campaign_for(request.user, slug)
        return _answer(request, campaign)

    @extend_schema(operation_id="campaigns_update", request=CampaignSettingsInput,
                   responses={200: CampaignOutput, **openapi.errors(openapi.WRITE)})
    def patch(self, request, slug: str):
        """Change settings or the schema. Once questions have answers, a change that would hide
        them (removing or renaming a question, option or criterion with answers, a new required
        question) is a 400 naming each; reword labels instead, or rename a question with
        `questions/rename/`. The status changes only through `status/`."""
        campaign = campaign_for(request.user, slug)
        data = validated(CampaignSettingsInput, request.data, partial=True)
        campaign_update(campaign=campaign, **data)
        return _answer(request, campaign)


    @extend_schema(operation_id="campaigns_delete",
                   responses={204: None, **openapi.errors(openapi.WRITE)})
    def delete(self, request, slug: str):
        """Delete the campaign with its items, workers and results; only its owner may (403)."""
        campaign = campaign_for(request.user, slug)
        campaign_delete(campaign=campaign, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class CampaignStatusApi(APIView):
    class CampaignStatusInput(StrictInput):
        status = serializers.ChoiceField(choices=Campaign.Status.choices)

    @extend_schema(operation_id="campaigns_status", request=CampaignStatusInput,
                   examples=[OpenApiExample("Open to workers", {"status": "live"},
                                            request_only=True)],
                   responses={200: CampaignOutput, **openapi.errors(openapi.WRITE)})
    def post(self, request, slug: str):
        """Publish (`live`: needs items, and attention/gold items for the checks per
        assignment), pause (`paused`) or close (`closed`, for good). A closed campaign is never
        reopened and nothing goes back to `draft` (409)."""
        campaign = campaign_for(request.user, slug)
        data = validated(self.CampaignStatusInput, request.data)
        campaign_set_status(campaign=campaign, status=data["status"])
        return _answer(request, campaign)


class CampaignDuplicateApi(APIView):
    class CampaignDuplicateInput(StrictInput):
        slug = serializers.SlugField(required=False, max_length=80)
        name = serializers.CharField(required=False, max_length=200)

    @extend_schema(operation_id="campaigns_duplicate", request=CampaignDuplicateInput,
                   responses={201: CampaignOutput, **openapi.errors(openapi.WRITE)})
    def post(self, request, slug: str):
        """A new draft with this campaign's schema and settings, without items or results."""
        campaign = campaign_for(request.user, slug)
        data = validated(self.CampaignDuplicateInput, request.data)
        copy = campaign_duplicate(campaign=campaign, owner=request.user, **data)
        return _answer(request, copy, status.HTTP_201_CREATED)


class QuestionRenameApi(APIView):
    class QuestionRenameInput(StrictInput):
        question = serializers.CharField(max_length=64)
        value = serializers.CharField(required=False, max_length=100, help_text=(
            "An option value of the question to rename; without it, the question's id is."))
        to = serializers.CharField(max_length=100)

    class QuestionRenameOutput(serializers.Serializer):
        question = serializers.CharField()
        renamed_to = serializers.CharField()
        value = serializers.CharField()
        value_renamed_to = serializers.CharField()
        annotations_changed = serializers.IntegerField()
        gold_items_changed = serializers.IntegerField()

    @extend_schema(operation_id="campaigns_question_rename", request=QuestionRenameInput,
                   responses={200: QuestionRenameOutput, **openapi.errors(openapi.WRITE)})
    def post(self, request, slug: str):
        """Rename a question's id (or, with `value`, one of its option values) in the schema
        and in every stored and gold answer, in one transaction; the change is recorded and the
        numbers changed are returned."""
        campaign = campaign_for(request.user, slug)
        data = validated(self.QuestionRenameInput, request.data)
        record = answers_rename(campaign=campaign, question=data["question"], to=data["to"],
                                value=data.get("value") or "", user=request.user, via="api")
        return Response(self.QuestionRenameOutput(record).data)


class WorkerEraseApi(APIView):
    class WorkerEraseInput(StrictInput):
        platform = serializers.ChoiceField(choices=Worker.Platform.choices)
        platform_id = serializers.CharField(max_length=200)
        reason = serializers.CharField(required=False, allow_blank=True, max_length=1000)

    class WorkerEraseOutput(serializers.Serializer):
        pseudonym = serializers.CharField()
        annotations_deleted = serializers.IntegerField()
        assignments_deleted = serializers.IntegerField()
        already_erased = serializers.BooleanField()

    @extend_schema(operation_id="workers_erase", request=WorkerEraseInput,
                   responses={200: WorkerEraseOutput, **openapi.errors(openapi.WRITE)})
    def post(self, request, slug: str):
        """Delete one worker's data on their request (answers, assignments, intake, platform id)
        and record it; asking again returns the first record."""
        campaign = campaign_for(request.user, slug)
        data = validated(self.WorkerEraseInput, request.data)
        worker = worker_find(campaign=campaign, platform=data["platform"],
                             platform_id=data["platform_id"])
        result = worker_erase(worker=worker, requested_by=request.user, via="api",
                              reason=data.get("reason", ""))
        record = result.record
        return Response(self.WorkerEraseOutput({
            "pseudonym": record.pseudonym, "annotations_deleted": record.annotations_deleted,
            "assignments_deleted": record.assignments_deleted,
            "already_erased": result.already_erased}).data)

