"""LLM judge endpoints: create and list judges, start runs (202), poll, cancel and resume them."""
from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import Judge, JudgeRun
from ..selectors.judges import judge_endpoint_problem
from ..services.judge_runs import judge_run_cancel, judge_run_resume, judge_run_start
from ..services.judges import judge_create
from . import openapi
from .permissions import campaign_for
from .serializers import StorableJSONField, StrictInput, validated


class JudgeInfoOutput(serializers.ModelSerializer):
    provider = serializers.CharField(help_text="The operator's provider the judge uses ('' "
                                     "for a base URL and key of your own).")
    base_url = serializers.CharField(help_text="Your own base URL ('' with a provider).")
    api_key_stored = serializers.SerializerMethodField(
        help_text="Whether a key of your own is stored (it is never shown).")
    problem = serializers.SerializerMethodField(
        help_text="Why the judge cannot run ('' when it can).")

    class Meta:
        model = Judge
        fields = ["name", "provider", "base_url", "model", "api_key_stored", "problem",
                  "parameters", "samples", "concurrency", "requests_per_minute", "max_attempts",
                  "response_format", "prompt_template", "price_input_per_million",
                  "price_output_per_million", "created_at"]
        read_only_fields = fields

    def get_api_key_stored(self, judge: Judge) -> bool:
        return bool(judge.api_key_encrypted)

    def get_problem(self, judge: Judge) -> str:
        return judge_endpoint_problem(judge)


class JudgeRunOutput(serializers.ModelSerializer):
    judge = serializers.CharField(source="judge.name")
    remaining = serializers.IntegerField()
    scope = serializers.JSONField()
    estimate = serializers.JSONField(help_text="Units, stored, to_request, prompt_tokens, "
                                     "completion_tokens and cost (null without prices), "
                                     "computed when the run was started.")

    class Meta:
        model = JudgeRun
        fields = ["id", "judge", "scope", "status", "total", "done", "failed", "remaining",
                  "requests", "prompt_tokens", "completion_tokens", "estimate", "error",
                  "waiting", "created_at", "started_at", "finished_at"]
        read_only_fields = fields


def _judge_for(user, slug: str, name: str) -> Judge:
    judge = Judge.objects.filter(campaign=campaign_for(user, slug), name=name).first()
    if judge is None:
        raise NotFound("No such judge in this campaign.")
    return judge


def _run_for(user, slug: str, name: str, run_id: int) -> JudgeRun:
    run = JudgeRun.objects.filter(judge=_judge_for(user, slug, name), pk=run_id).select_related(
        "judge").first()
    if run is None:
        raise NotFound("No such run of this judge.")
    return run


class JudgeListCreateApi(APIView):
    class JudgeCreateInput(StrictInput):
        name = serializers.CharField(max_length=200)
        provider = serializers.CharField(max_length=100, required=False, allow_blank=True,
                                         help_text="One of the operator's providers.")
        base_url = serializers.CharField(max_length=500, required=False, allow_blank=True,
                                         help_text="Your own https base URL (no provider).")
        api_key = serializers.CharField(
            max_length=500, required=False, allow_blank=True, write_only=True,
            help_text="Your own key for your own base URL: stored encrypted, never returned.")
        model = serializers.CharField(max_length=200)
        parameters = StorableJSONField(required=False)
        samples = serializers.IntegerField(required=False)
        concurrency = serializers.IntegerField(required=False)
        requests_per_minute = serializers.IntegerField(required=False)
        max_attempts = serializers.IntegerField(required=False)
        response_format = serializers.CharField(required=False)
        prompt_template = serializers.CharField(required=False, allow_blank=True,
                                                trim_whitespace=False)
        price_input_per_million = serializers.DecimalField(
            max_digits=12, decimal_places=4, min_value=0, required=False, allow_null=True)
        price_output_per_million = serializers.DecimalField(
            max_digits=12, decimal_places=4, min_value=0, required=False, allow_null=True)

    @extend_schema(operation_id="judges_list", tags=["judges"],
                   responses={200: JudgeInfoOutput(many=True), **openapi.errors()})
    def get(self, request, slug: str):
        """The campaign's judges with their endpoint, model and settings (never a key)."""
        judges = Judge.objects.filter(campaign=campaign_for(request.user, slug))
        return Response(JudgeInfoOutput(judges, many=True).data)

    @extend_schema(
        operation_id="judges_create", tags=["judges"], request=JudgeCreateInput,
        examples=[OpenApiExample("The operator's local provider", {
            "name": "llama3.1-8b", "provider": "local",
            "model": "llama3.1:8b", "parameters": {"temperature": 0, "max_tokens": 512},
            "samples": 1, "concurrency": 4, "requests_per_minute": 600}, request_only=True)],
        responses={201: JudgeInfoOutput, **openapi.errors(openapi.WRITE)},
    )
    def post(self, request, slug: str):
        """Create a judge: a `provider` of the operator's, or your own `base_url` and
        `api_key` (stored encrypted and never returned)."""
        campaign = campaign_for(request.user, slug)
        data = validated(self.JudgeCreateInput, request.data)
        judge = judge_create(campaign=campaign, **data)
        return Response(JudgeInfoOutput(judge).data, status=status.HTTP_201_CREATED)


class JudgeRunListCreateApi(APIView):
    class RunCreateInput(StrictInput):
        scope = serializers.CharField(required=False, help_text='"all"')
        system = serializers.CharField(required=False, help_text="Only this system's items.")
        sample = serializers.IntegerField(required=False,
                                          help_text="A fixed random sample of n items.")

    @extend_schema(operation_id="judge_runs_list", tags=["judges"],
                   responses={200: JudgeRunOutput(many=True), **openapi.errors()})
    def get(self, request, slug: str, name: str):
        """The judge's latest runs (at most 100), newest first, with their progress."""
        judge = _judge_for(request.user, slug, name)
        return Response(JudgeRunOutput(judge.runs.select_related("judge")[:100], many=True).data)

    @extend_schema(
        operation_id="judge_runs_create", tags=["judges"], request=RunCreateInput,
        examples=[OpenApiExample("Every item", {"scope": "all"}, request_only=True),
                  OpenApiExample("One system", {"system": "gpt-4"}, request_only=True),
                  OpenApiExample("A sample of 50 items", {"sample": 50}, request_only=True)],
        responses={202: JudgeRunOutput, **openapi.errors(openapi.WRITE)},
    )
    def post(self, request, slug: str, name: str):
        """Start a run (202); poll it until `status` is done, failed or cancelled."""
        judge = _judge_for(request.user, slug, name)
        scope = validated(self.RunCreateInput, request.data)
        run = judge_run_start(judge=judge, requested_by=request.user, scope=scope)
        run.refresh_from_db()
        return Response(JudgeRunOutput(run).data, status=status.HTTP_202_ACCEPTED)


class JudgeRunDetailApi(APIView):
    @extend_schema(operation_id="judge_runs_read", tags=["judges"],
                   responses={200: JudgeRunOutput, **openapi.errors()})
    def get(self, request, slug: str, name: str, run_id: int):
        """One run: its status and counts of done, failed and remaining outputs."""
        return Response(JudgeRunOutput(_run_for(request.user, slug, name, run_id)).data)


class JudgeRunCancelApi(APIView):
    @extend_schema(operation_id="judge_runs_cancel", tags=["judges"], request=None,
                   responses={200: JudgeRunOutput, **openapi.errors(openapi.WRITE)})
    def post(self, request, slug: str, name: str, run_id: int):
        """Stop a queued or running run (409 once it has ended)."""
        run = judge_run_cancel(run=_run_for(request.user, slug, name, run_id))
        return Response(JudgeRunOutput(run).data)


class JudgeRunResumeApi(APIView):
    @extend_schema(operation_id="judge_runs_resume", tags=["judges"], request=None,
                   responses={202: JudgeRunOutput, **openapi.errors(openapi.WRITE)})
    def post(self, request, slug: str, name: str, run_id: int):
        """Queue a cancelled or failed run again; stored outputs are not asked for again."""
        run = judge_run_resume(run=_run_for(request.user, slug, name, run_id))
        run.refresh_from_db()
        return Response(JudgeRunOutput(run).data, status=status.HTTP_202_ACCEPTED)


class JudgeRunRetryApi(JudgeRunResumeApi):
    @extend_schema(operation_id="judge_runs_retry", tags=["judges"], request=None,
                   responses={202: JudgeRunOutput, **openapi.errors(openapi.WRITE)})
    def post(self, request, slug: str, name: str, run_id: int):
        """The same as resume, under the name every other kind of job uses: queue a cancelled
        or failed run again (409 for one queued, running or done)."""
        return super().post(request, slug, name, run_id)
