"""Starter templates: list them, read one (schema, instructions, sample items), start a campaign
from one; the same templates and service as the admin gallery and `manage.py new_campaign`."""
from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..services.starters import campaign_create_from_starter
from ..starters import starter_get, starter_list
from . import openapi
from .campaigns import CampaignOutput, _answer
from .serializers import StrictInput, validated


class TemplateListOutput(serializers.Serializer):
    name = serializers.CharField(help_text="Use it in `/api/templates/<name>/`.")
    title = serializers.CharField()
    description = serializers.CharField()
    kinds = serializers.ListField(child=serializers.CharField(),
                                  help_text="The question kinds the schema uses.")
    sample_items = serializers.IntegerField(source="item_count",
                                            help_text="How many sample items it ships.")


class TemplateDetailOutput(TemplateListOutput):
    source = serializers.CharField(help_text="Where the text and sample items come from.")
    schema = serializers.JSONField(help_text="The task schema (docs/schema.md).")
    instructions = serializers.CharField(help_text="Markdown.")
    examples = serializers.CharField(help_text="Markdown: the worked example.")
    settings = serializers.JSONField(help_text="Campaign settings it fills in.")
    items = serializers.JSONField(help_text="The sample items, as import rows.")


class TemplateListApi(APIView):
    @extend_schema(operation_id="templates_list", tags=["templates"],
                   responses={200: TemplateListOutput(many=True), **openapi.errors()})
    def get(self, request):
        """The starter templates: the five seed tasks, pairwise preference, best-worst scaling
        and the error-span designs (ESA, MQM)."""
        return Response(TemplateListOutput(starter_list(), many=True).data)


class TemplateDetailApi(APIView):
    @extend_schema(operation_id="templates_read", tags=["templates"],
                   responses={200: TemplateDetailOutput, **openapi.errors()})
    def get(self, request, name: str):
        """One template: its schema, instructions with a worked example, settings and sample
        items (an unknown name is a 404 listing the known ones)."""
        return Response(TemplateDetailOutput(starter_get(name)).data)


class TemplateCampaignCreateApi(APIView):
    class TemplateCampaignInput(StrictInput):
        slug = serializers.SlugField(max_length=80, help_text="The new campaign's URL name.")
        name = serializers.CharField(required=False, max_length=200,
                                     help_text="Default: the template's title.")
        with_sample_items = serializers.BooleanField(
            required=False, default=False, help_text="Also import the template's sample items.")

    @extend_schema(operation_id="templates_create_campaign", tags=["templates"],
                   request=TemplateCampaignInput,
                   examples=[OpenApiExample("A pairwise study", request_only=True, value={
                       "slug": "my-pairwise", "with_sample_items": True})],
                   responses={201: CampaignOutput, **openapi.errors(openapi.WRITE)})
    def post(self, request, name: str):
        """A draft campaign from the template, owned by you; a taken slug is a 409."""
        data = validated(self.TemplateCampaignInput, request.data)
        campaign = campaign_create_from_starter(
            owner=request.user, template=name, slug=data["slug"], name=data.get("name", ""),
            with_items=data["with_sample_items"])
        return _answer(request, campaign, status.HTTP_201_CREATED)
