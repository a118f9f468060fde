"""Admin forms: the campaign form (configuration checked by the service), item upload, export."""
from __future__ import annotations

import json

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.urls import reverse

from ..importing import FORMATS
from ..models import Annotation, Campaign, ExportJob
from ..schema import SchemaInvalid
from ..services.campaigns import campaign_check_config

MARKDOWN_FIELDS = ("instructions", "examples", "consent_text")
# Which form field a configuration problem belongs next to, by the first part of its path.
_ISSUE_FIELDS = ("schema", "intake_questions", "completion_code", "completion_redirect_url")


class PrettyJSONField(forms.JSONField):
    """JSON shown indented in a monospace textarea, so a schema can be read and edited."""

    def __init__(self, *args, rows: int = 20, **kwargs):
        kwargs.setdefault("widget", forms.Textarea(
            attrs={"rows": rows, "class": "vLargeTextField admin-json", "spellcheck": "false"}))
        super().__init__(*args, **kwargs)

    def prepare_value(self, value):
        if isinstance(value, forms.fields.InvalidJSONInput):
            return value
        return json.dumps(value, indent=2, ensure_ascii=False)


class CampaignAdminForm(forms.ModelForm):
    schema = PrettyJSONField(rows=24, help_text="The task schema: `display` and `questions` "
                             "(see docs/schema.md). Checked on save; problems are listed with "
                             "their path and nothing is saved.")
    intake_questions = PrettyJSONField(rows=8, required=False, help_text=(
        "Questions asked once per worker, in the schema's question format (a JSON list)."))
    completion_redirect_url = forms.URLField(
        required=False, max_length=500, assume_scheme="https", label="Completion redirect URL",
        help_text=Campaign._meta.get_field("completion_redirect_url").help_text)

    class Meta:
        model = Campaign
        fields = ("name", "slug", "owner", "collaborators", "description", "source", "schema",
                  "instructions", "examples", "consent_text", "intake_questions",
                  "items_per_assignment", "annotations_per_item", "assignment_timeout_minutes",
                  "max_assignments_per_worker", "attention_checks_per_assignment",
                  "gold_items_per_assignment", "completion_mode", "completion_code",
                  "completion_redirect_url")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "collaborators" in self.fields:
            self.fields["collaborators"].queryset = get_user_model().objects.filter(
                is_staff=True, is_active=True).order_by("username")
        if "owner" in self.fields:
            self.fields["owner"].queryset = get_user_model().objects.filter(is_staff=True)
        preview_url = reverse("admin:campaigns_campaign_markdown_preview")
        for name in MARKDOWN_FIELDS:  # static/campaigns/admin/markdown_preview.js adds a button
            if name in self.fields:
                self.fields[name].widget.attrs["data-markdown-preview"] = preview_url

    def clean_intake_questions(self):
        return self.cleaned_data.get("intake_questions") or []

    def clean(self):
        cleaned = super().clean()
        if "schema" not in cleaned:  # not JSON at all: the field already says so
            return cleaned
        try:
            campaign_check_config(
                schema=cleaned.get("schema"),
                intake_questions=cleaned.get("intake_questions"),
                completion_mode=cleaned.get("completion_mode") or "",
                completion_code=cleaned.get("completion_code") or "",
                completion_redirect_url=cleaned.get("completion_redirect_url") or "",
            )
        except SchemaInvalid as exc:
            for issue in exc.issues:
                head = issue.path.split(".", 1)[0].split("[", 1)[0]
                target = head if head in _ISSUE_FIELDS and head in self.fields else None
                self.add_error(target, str(issue))
        else:
            self._check_answered_questions_kept(cleaned["schema"])
        return cleaned

    def _check_answered_questions_kept(self, schema: dict) -> None:
        """Once workers answered, questions may be reworded but not removed, renamed or re-kinded:
        the stored answers (and every export of them) are keyed by question id and read by kind.
        """
        if not self.instance.pk or "schema" not in self.changed_data:
            return
        if not Annotation.objects.filter(campaign_id=self.instance.pk).exists():
            return
        before = {q["id"]: q["kind"] for q in self.instance.schema.get("questions", [])}
        after = {q["id"]: q["kind"] for q in schema.get("questions", [])}
        for qid, kind in before.items():
            if after.get(qid) != kind:
                change = "removed" if qid not in after else f"changed from {kind} to {after[qid]}"
                self.add_error("schema", (
                    f"schema.questions: {qid!r} already has answers and cannot be {change}; "
                    "duplicate the campaign to ask other questions."))


class ItemImportForm(forms.Form):
    file = forms.FileField(help_text="CSV, TSV, JSON (a list) or JSON lines; UTF-8. Every row is "
                           "checked first: one bad row rejects the file and nothing is stored.")
    format = forms.ChoiceField(
        required=False, choices=[("", "From the file name")] + [(f, f.upper()) for f in FORMATS])

    def clean_file(self):
        upload = self.cleaned_data["file"]
        limit = settings.IMPORT_MAX_BYTES
        if upload.size > limit:
            raise forms.ValidationError(
                f"The file is {upload.size:,} bytes; the limit is {limit:,} bytes.")
        return upload


class ExportRequestForm(forms.Form):
    format = forms.ChoiceField(choices=ExportJob.Format.choices, initial=ExportJob.Format.CSV)
    gzip = forms.BooleanField(required=False, label="Compress (gzip)")
    exclude_flagged = forms.BooleanField(required=False, label="Leave out flagged workers")
    worker_platform = forms.ChoiceField(
        required=False, label="Whose annotations", initial="human",
        choices=[("human", "People only"), ("llm", "LLM judges only"), ("all", "Both")])

