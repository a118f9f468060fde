"""Admin forms: the campaign form (configuration checked by the service), item upload, export."""
from __future__ import annotations

import json

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Q
from django.urls import reverse

from ..importing import FORMATS
from ..models import Campaign, ExportJob
from ..schema import SchemaInvalid
from ..services.campaigns import SETTINGS_FIELDS, SLUG_UNAVAILABLE, campaign_check_changes

MARKDOWN_FIELDS = ("instructions", "examples", "consent_text")
# Which form field a configuration problem belongs next to, by the first part of its path.
_ISSUE_FIELDS = ("schema", "intake_questions", "completion_code", "completion_redirect_url",
                 "min_seconds_per_item", "min_seconds_per_word", "language", "allocation",
                 "min_annotations_per_item", "max_annotations_per_item", "agreement_spread",
                 "stop_when", "qualification")


# The admin's plain explanation of the allocation settings (docs/analysis.md has the methods).
ALLOCATION_EXPLAINED = (
    "Where the budget of judgments goes. <b>Uniform</b> (the default): every item gets "
    "“annotations per item” (k) judgments, the least-annotated first. <b>Dynamic "
    "redundancy</b>: each item gets the minimum; when its raters disagree it gets one more at a "
    "time up to the maximum (numeric answers agree within the agreement spread). One item in "
    "five goes on to the maximum anyway, to check that agreement settles items; when it "
    "clearly does not, every item gets the maximum, as under uniform. <b>Adaptive "
    "ranking</b> (pairwise questions): after the minimum, the pairs of systems whose order is "
    "least certain get the next judgments, up to the maximum per item (a minimum of 0: no "
    "floor per item, the least certain pairs from the start). <b>Adaptive "
    "precision</b> (numeric ratings): after the minimum, items of the systems whose interval "
    "is widest get the next ratings. Priorities are recomputed every minute, off the workers' "
    "requests; each assignment records the strategy and its epoch, and a change of strategy "
    "on a live campaign is recorded. <b>Stop when</b> ends the hand-out of new work at a "
    "target (workers then see the no-work page and code); raise or clear the target to go on.")


def allocation_state_text(campaign: Campaign) -> str:
    """The allocation as it stands, in words: stopped and why, or running at which epoch."""
    if not campaign.pk:
        return "Available once saved."
    if campaign.allocation_stopped:
        state = f"Stopped at the target: {campaign.allocation_stopped}"
    else:
        state = (f"{campaign.get_allocation_display()}; priorities recomputed "
                 f"{campaign.allocation_epoch} time(s) so far.")
    return f"{state} {campaign.allocation_audit}".strip()


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


class CollaboratorsField(forms.Field):
    """Collaborators named by exact username or e-mail address, one per line.

    Nothing is listed: a researcher adds someone they know, and cannot browse who else has
    an account. A name that matches no active staff account is an error naming it.
    """

    widget = forms.Textarea(attrs={"rows": 3, "cols": 40})

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("help_text", "Researchers who may see and change this campaign: their "
                          "exact username or e-mail address, one per line.")
        super().__init__(**kwargs)

    @staticmethod
    def names(value) -> list[str]:
        if value is None:
            return []
        if isinstance(value, str):
            return [n for n in value.replace(",", "\n").split() if n]
        return [getattr(user, "username", str(user)) for user in value]

    def prepare_value(self, value):
        return "\n".join(self.names(value))

    def has_changed(self, initial, data):
        return set(self.names(initial)) != set(self.names(data))

    def clean(self, value):
        users, unknown = [], []
        model = get_user_model()
        for name in dict.fromkeys(self.names(value)):  # unique, in the order given
            matches = list(model.objects.filter(is_staff=True, is_active=True).filter(
                Q(username=name) | Q(email__iexact=name) if "@" in name else Q(username=name)
            )[:2])
            if len(matches) == 1:
                users.append(matches[0])
            else:
                unknown.append(name)
        if unknown:
            raise forms.ValidationError(
                "No single researcher account has the username or e-mail address: "
                + ", ".join(unknown) + ".")
        return users


class CampaignAdminForm(forms.ModelForm):
    collaborators = CollaboratorsField()
    schema = PrettyJSONField(rows=24, help_text=(
        "The task schema: <code>display</code> (item fields to show) and <code>questions</code> "
        "(each with an <code>id</code>, a <code>kind</code>: likert, choice, slider, lines, "
        "rubric, text or flags, and its <code>text</code>); the "
        "<a href=\"/help/schema/\">schema format</a> lists every kind's settings. Checked on "
        "save: problems are listed with their path and nothing is saved. Once questions have "
        "answers, reword them freely, but answered questions, options and criteria stay."))
    intake_questions = PrettyJSONField(rows=8, required=False, help_text=(
        "Questions asked once per worker, in the schema's question format (a JSON list)."))
    qualification = PrettyJSONField(rows=4, required=False, label="Qualification test",
                                    help_text=Campaign._meta.get_field("qualification").help_text)
    stop_when = PrettyJSONField(rows=3, required=False, label="Stop when",
                                help_text=Campaign._meta.get_field("stop_when").help_text)
    completion_redirect_url = forms.URLField(
        required=False, max_length=500, assume_scheme="https", label="Completion redirect URL",
        help_text=Campaign._meta.get_field("completion_redirect_url").help_text)

    class Meta:
        model = Campaign
        fields = ("name", "slug", "owner", "collaborators", "description", "source", "schema",
                  "instructions", "examples", "judge_instructions", "consent_text",
                  "intake_questions", "language", "language_from_browser",
                  "items_per_assignment", "annotations_per_item", "assignment_timeout_minutes",
                  "max_assignments_per_worker", "attention_checks_per_assignment",
                  "gold_items_per_assignment", "qualification", "completion_mode",
                  "completion_code",
                  "completion_redirect_url", "recruitment", "completion_code_failed_checks",
                  "completion_code_no_work", "completion_code_screened_out",
                  "bonus_per_item", "bonus_per_gold_correct",
                  "min_seconds_per_item", "min_seconds_per_word", "block_paste", "block_copy",
                  "allocation", "min_annotations_per_item", "max_annotations_per_item",
                  "agreement_spread", "stop_when")
        # Slugs are public URLs, unique across researchers: a taken one is not theirs to name.
        error_messages = {"slug": {"unique": SLUG_UNAVAILABLE}}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "owner" in self.fields:
            self.fields["owner"].queryset = get_user_model().objects.filter(is_staff=True)
        for name in ("bonus_per_item", "bonus_per_gold_correct"):
            if name in self.fields:
                self.fields[name].required = False
        # Left empty: the model's default.
        for name in ("recruitment", "language", "allocation", "agreement_spread"):
            if name in self.fields:
                self.fields[name].required = False
        preview_url = reverse("admin:campaigns_campaign_markdown_preview")
        for name in MARKDOWN_FIELDS:  # static/campaigns/admin/markdown_preview.js adds a button
            if name in self.fields:
                self.fields[name].widget.attrs["data-markdown-preview"] = preview_url

    def clean_qualification(self):  # left empty: no test
        return self.cleaned_data.get("qualification") or {}

    def clean_stop_when(self):  # left empty: no target
        return self.cleaned_data.get("stop_when") or {}

    def clean_allocation(self):
        return self.cleaned_data.get("allocation") or Campaign.Allocation.UNIFORM

    def clean_agreement_spread(self):
        spread = self.cleaned_data.get("agreement_spread")
        return Campaign._meta.get_field("agreement_spread").default if spread is None else spread

    # The bonus rule is optional: left empty, it is no bonus (0).
    def clean_bonus_per_item(self):
        return self.cleaned_data.get("bonus_per_item") or 0

    def clean_bonus_per_gold_correct(self):
        return self.cleaned_data.get("bonus_per_gold_correct") or 0

    def clean_recruitment(self):
        # Left out (a form posted before the field existed): a plain link, the model's default.
        return self.cleaned_data.get("recruitment") or Campaign.Recruitment.LINK

    def clean_language(self):
        # Left out (a form posted before the field existed): English, the model's default.
        return (self.cleaned_data.get("language") or "").strip() or "en"

    def clean_intake_questions(self):
        return self.cleaned_data.get("intake_questions") or []

    def clean(self):
        cleaned = super().clean()
        if "schema" not in cleaned:  # not JSON at all: the field already says so
            return cleaned
        fields = {f: cleaned[f] for f in SETTINGS_FIELDS if f in cleaned}
        if self.instance.pk and "schema" not in self.changed_data:
            fields.pop("schema")  # unchanged: nothing to check against the stored answers
        try:  # the rulebook's own check, so the admin refuses exactly what the service would
            campaign_check_changes(campaign=self.instance if self.instance.pk else None,
                                   fields=fields)
        except SchemaInvalid as exc:
            for issue in exc.issues:
                head = issue.path.split(".", 1)[0].split("[", 1)[0]
                target = head if head in _ISSUE_FIELDS and head in self.fields else None
                self.add_error(target, str(issue))
        return cleaned


class QuestionRenameForm(forms.Form):
    question = forms.ChoiceField(label="Question")
    value = forms.CharField(required=False, max_length=100, label="Option value", help_text=(
        "To rename one of the question's option values; leave empty to rename its id."))
    to = forms.CharField(max_length=100, label="New id or value", help_text=(
        "An id is a letter, then letters, digits, - or _. The stored answers and gold answers "
        "are rewritten in one step, and the change is recorded."))
    confirm = forms.BooleanField(label="Rewrite the stored answers")

    def __init__(self, *args, answered: dict[str, int], question_ids: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["question"].choices = [
            (qid, f"{qid} ({answered.get(qid, 0)} stored answers)") for qid in question_ids]


FORMAT_LABELS = {"tsv-raw": "TSV without quoting (double quotes are text)"}


class ItemImportForm(forms.Form):
    file = forms.FileField(help_text="CSV, TSV, JSON (a list) or JSON lines; UTF-8 (or UTF-16 "
                           "with a byte-order mark). Every row is checked first: one bad row "
                           "rejects the file and nothing is stored.")
    format = forms.ChoiceField(
        required=False, choices=[("", "From the file name")] + [
            (f, FORMAT_LABELS.get(f, f.upper())) for f in FORMATS])
    transcripts = forms.ChoiceField(
        required=False, initial="messages", label="Conversations written as",
        choices=[("messages", "OpenAI messages lists (role, content)"),
                 ("hh-rlhf", "HH-RLHF transcripts (Human: ... Assistant: ...); rows of "
                             "chosen/rejected become two outputs"),
                 ("sharegpt", "ShareGPT turns (from, value)")],
        help_text="How the file writes the conversations of chat fields and chat outputs.")

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

