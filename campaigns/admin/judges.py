"""LLM judges in the admin: configure a judge, preview its prompt for any item, start runs
(with the estimate first), watch and cancel them, read every output kept raw."""
from __future__ import annotations

import json

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from ..errors import ServiceError
from ..judging.prompts import NotJudgeable, PromptTemplateInvalid
from ..judging.providers import encrypt_key, providers
from ..models import Item, Judge, JudgeOutput, JudgeRun
from ..schema import SchemaInvalid
from ..selectors.judges import (
    judge_endpoint_problem,
    judge_prompt_preview,
    judge_run_estimate,
    judge_template_text,
)
from ..services.judge_runs import judge_run_start
from ..services.judges import JUDGE_FIELDS, judge_problems
from .jobs import JobListAdmin
from .scoping import CampaignScopedAdmin, ReadOnlyAdmin, campaign_is_visible


def _provider_choices():
    return [("", "None: my own base URL and key"), *((n, n) for n in providers())]


class JudgeForm(forms.ModelForm):
    provider = forms.TypedChoiceField(required=False, choices=_provider_choices,
                                      help_text=Judge._meta.get_field("provider").help_text)
    base_url = forms.URLField(required=False, max_length=500, assume_scheme="https",
                              help_text=Judge._meta.get_field("base_url").help_text)
    # Write-only: the widget never renders a stored value, and the key is kept encrypted.
    api_key = forms.CharField(
        required=False, strip=True, max_length=500, label="Your own API key",
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Only with a base URL of your own. Stored encrypted and never shown again; "
        "leave empty to keep the stored key.")
    forget_api_key = forms.BooleanField(required=False, label="Forget the stored key")

    class Meta:
        model = Judge
        fields = ("campaign", *JUDGE_FIELDS)

    def clean(self):
        cleaned = super().clean()
        for field, message in judge_problems({**cleaned}).items():
            name = field.split(".")[0]
            if name in self.fields and name not in self.errors:
                self.add_error(name, f"{field}: {message}" if "." in field else message)
        return cleaned

    def save(self, commit=True):
        judge = super().save(commit=False)
        if self.cleaned_data.get("api_key"):
            judge.api_key_encrypted = encrypt_key(self.cleaned_data["api_key"])
        elif self.cleaned_data.get("forget_api_key") or judge.provider:
            judge.api_key_encrypted = ""
        if commit:
            judge.save()
        return judge


class RunForm(forms.Form):
    scope = forms.ChoiceField(choices=[("all", "All items"), ("system", "One system's items"),
                                       ("sample", "A random sample")], initial="all")
    system = forms.CharField(required=False)
    sample = forms.IntegerField(required=False, min_value=1)

    def run_scope(self) -> dict:
        data = self.cleaned_data
        if data["scope"] == "system":
            return {"system": data.get("system") or ""}
        if data["scope"] == "sample":
            return {"sample": data.get("sample") or 0}
        return {"scope": "all"}


@admin.register(Judge)
class JudgeAdmin(CampaignScopedAdmin):
    form = JudgeForm
    list_display = ("name", "campaign", "model", "endpoint", "key", "samples", "runs_link")
    list_filter = (("campaign", admin.RelatedOnlyFieldListFilter),)
    list_select_related = ("campaign",)
    readonly_fields = ("endpoint", "key", "default_prompt", "actions_links")
    fieldsets = (
        (None, {"fields": ("campaign", "name", "actions_links")}),
        ("Endpoint", {"fields": ("provider", "base_url", "api_key", "forget_api_key", "key",
                                 "endpoint", "model", "response_format")}),
        ("Requests", {"fields": ("parameters", "samples", "max_attempts", "concurrency",
                                 "requests_per_minute", "price_input_per_million",
                                 "price_output_per_million")}),
        ("Prompt", {"fields": ("prompt_template", "default_prompt")}),
    )

    @admin.display(description="Can run")
    def endpoint(self, obj):
        if obj is None or obj.pk is None:
            return "-"
        return judge_endpoint_problem(obj) or (
            f"yes, with the provider {obj.provider}" if obj.provider else "yes, with your key")

    @admin.display(description="Stored key")
    def key(self, obj):
        if obj is not None and obj.provider:
            return "the operator's (the provider's)"
        return "stored (never shown)" if obj is not None and obj.api_key_encrypted else "none"

    @admin.display(description="Default template")
    def default_prompt(self, obj):
        if obj is None or obj.pk is None:
            return "Shown once the judge is saved."
        try:
            text = judge_template_text(Judge(campaign=obj.campaign))
        except SchemaInvalid as exc:
            return f"The campaign's schema is invalid: {exc}"
        return format_html("<pre class='judge-template'>{}</pre>", text)

    @admin.display(description="Runs")
    def runs_link(self, obj):
        url = reverse("admin:campaigns_judgerun_changelist")
        return format_html('<a href="{}?judge__id__exact={}">{} run(s)</a>', url, obj.pk,
                           obj.runs.count())

    @admin.display(description="")
    def actions_links(self, obj):
        if obj is None or obj.pk is None:
            return "-"
        return format_html(
            '<a class="button" href="{}">Preview the prompt</a> '
            '<a class="button" href="{}">Start a run</a>',
            reverse("admin:campaigns_judge_preview", args=[obj.pk]),
            reverse("admin:campaigns_judge_run", args=[obj.pk]))

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [path("<int:pk>/preview/", wrap(self.preview_view), name="campaigns_judge_preview"),
                path("<int:pk>/run/", wrap(self.run_view), name="campaigns_judge_run"),
                *super().get_urls()]

    def _judge(self, request: HttpRequest, pk: int, *, change: bool = False) -> Judge:
        judge = self.get_object(request, str(pk))
        allowed = (self.has_change_permission if change else self.has_view_permission)
        if not allowed(request, judge):
            raise PermissionDenied
        return judge

    def _context(self, request, judge, title, **extra):
        return {**self.admin_site.each_context(request), "opts": self.model._meta,
                "original": judge, "judge": judge, "title": title, **extra}

    def preview_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        judge = self._judge(request, pk)
        items = Item.objects.filter(campaign=judge.campaign).order_by("id")
        wanted = request.GET.get("item", "")
        item = items.filter(external_id=wanted).first() if wanted else items.first()
        preview, error = None, ""
        if item is not None:
            try:
                preview = judge_prompt_preview(judge, item)
            except (SchemaInvalid, PromptTemplateInvalid, NotJudgeable) as exc:
                error = str(exc)
        status = 404 if wanted and item is None else 400 if error else 200
        schema_json = json.dumps(preview.json_schema, indent=2) if preview else ""
        return TemplateResponse(request, "admin/campaigns/judge/preview.html", self._context(
            request, judge, f"Prompt of {judge.name}", item=item, preview=preview, error=error,
            schema_json=schema_json,
            item_ids=list(items.values_list("external_id", flat=True)[:500]), wanted=wanted),
            status=status)

    def run_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        judge = self._judge(request, pk, change=True)
        form = RunForm(request.POST or request.GET or None)
        estimate, error = None, ""
        if form.is_bound and form.is_valid():
            scope = form.run_scope()
            try:
                if request.method == "POST":
                    run = judge_run_start(judge=judge, requested_by=request.user, scope=scope)
                    messages.success(request, f"Run {run.pk} of {judge.name} is queued.")
                    return redirect(f"{reverse('admin:campaigns_judgerun_changelist')}"
                                    f"?judge__id__exact={judge.pk}")
                estimate = judge_run_estimate(judge, scope)
            except ServiceError as exc:
                error = exc.message
            except (SchemaInvalid, PromptTemplateInvalid, NotJudgeable) as exc:
                error = str(exc)
        return TemplateResponse(request, "admin/campaigns/judge/run.html", self._context(
            request, judge, f"Run {judge.name}", form=form, estimate=estimate, error=error),
            status=400 if error else 200)


@admin.register(JudgeRun)
class JudgeRunAdmin(JobListAdmin):
    campaign_lookup = "judge__campaign"
    list_display = ("id", "judge", "status", "progress", "requests", "tokens", "cost_estimate",
                    "created_at", "finished_at", "error_short")
    list_filter = ("status", ("judge", admin.RelatedOnlyFieldListFilter))
    list_select_related = ("judge",)
    readonly_fields = [f.name for f in JudgeRun._meta.fields]
    job_permission = "campaigns.change_judge"  # running a judge is changing it

    def _visible(self, request, obj) -> bool:
        return obj is None or campaign_is_visible(request, obj.judge.campaign_id)

    @admin.display(description="Done / failed / remaining")
    def progress(self, obj):
        return f"{obj.done:,} / {obj.failed:,} / {obj.remaining:,} of {obj.total:,}"

    @admin.display(description="Tokens (prompt + completion)")
    def tokens(self, obj):
        return f"{obj.prompt_tokens:,} + {obj.completion_tokens:,}"

    @admin.display(description="Estimated cost")
    def cost_estimate(self, obj):
        cost = (obj.estimate or {}).get("cost")
        return "-" if cost is None else f"{cost:.4f}"

    @admin.display(description="Error")
    def error_short(self, obj):
        return obj.error[:120]


@admin.register(JudgeOutput)
class JudgeOutputAdmin(ReadOnlyAdmin):
    campaign_lookup = "judge__campaign"
    list_display = ("id", "judge", "item", "sample", "attempt", "failed", "failure_reason",
                    "prompt_hash_short", "prompt_tokens", "completion_tokens", "created_at")
    list_filter = ("failed", ("judge", admin.RelatedOnlyFieldListFilter))
    list_select_related = ("judge", "item")
    search_fields = ("item__external_id", "prompt_hash")
    readonly_fields = [f.name for f in JudgeOutput._meta.fields]

    def _visible(self, request, obj) -> bool:
        return obj is None or campaign_is_visible(request, obj.judge.campaign_id)

    @admin.display(description="Prompt hash")
    def prompt_hash_short(self, obj):
        return obj.prompt_hash[:12]
