"""LLM judges, their runs and every output they gave."""
from django.conf import settings
from django.db import models
from django.db.models import Q

from .campaigns import Campaign, Item
from .jobs import BackgroundJob
from .work import Annotation


class Judge(models.Model):
    """An LLM judge of one campaign: an OpenAI-compatible endpoint, a model and its settings.

    The endpoint is one of the operator's providers (settings.LLM_PROVIDERS), named by
    `provider`: its URL and key are the operator's and never stored here. Or it is the
    researcher's own `base_url` on a host the operator allows, with the researcher's own key
    stored encrypted (never shown again). Its answers are stored as annotations of the
    Worker of platform "llm" whose platform id is the judge's name.
    """

    class ResponseFormat(models.TextChoices):
        JSON_SCHEMA = "json_schema", "JSON Schema (response_format json_schema)"
        JSON_OBJECT = "json_object", "Any JSON object (response_format json_object)"
        NONE = "none", "Plain instruction only"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="judges")
    name = models.CharField(max_length=200, help_text="Shown as the judge in statistics.")
    provider = models.CharField(
        max_length=100, blank=True,
        help_text="One of the operator's LLM providers (their URL and key stay the operator's)."
        " Empty: your own base URL and key.")
    base_url = models.URLField(
        max_length=500, blank=True,
        help_text="Your own OpenAI-compatible https base URL, on a host this instance allows "
        "for your own key. Empty when the judge uses a provider.")
    model = models.CharField(max_length=200)
    api_key_encrypted = models.TextField(
        blank=True, editable=False,
        help_text="The researcher's own key, encrypted with JUDGE_KEY_SECRET; never shown.")
    parameters = models.JSONField(default=dict, blank=True,
                                  help_text='{"temperature": 0, "max_tokens": 512, "seed": 1}')
    samples = models.PositiveIntegerField(default=1, help_text="Answers per item.")
    concurrency = models.PositiveIntegerField(default=4, help_text="Requests in flight at once.")
    requests_per_minute = models.PositiveIntegerField(default=600)
    max_attempts = models.PositiveIntegerField(
        default=3, help_text="Requests per item and sample before an invalid output is final.")
    response_format = models.CharField(max_length=20, choices=ResponseFormat.choices,
                                       default=ResponseFormat.JSON_SCHEMA)
    prompt_template = models.TextField(
        blank=True, help_text="Django template over {{ item.<field> }}, {{ display }}, "
        "{{ questions }}, {{ answer_format }}, {{ campaign.instructions }}. Empty: the default "
        "generated from the schema.")
    price_input_per_million = models.DecimalField(
        max_digits=12, decimal_places=4, null=True, blank=True,
        help_text="Price per million prompt tokens, for the estimate before a run.")
    price_output_per_million = models.DecimalField(
        max_digits=12, decimal_places=4, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "name"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "name"], name="judge_unique_name"),
            models.CheckConstraint(condition=Q(samples__gte=1) & Q(samples__lte=20),
                                   name="judge_samples_1_20"),
            models.CheckConstraint(condition=Q(concurrency__gte=1) & Q(concurrency__lte=64),
                                   name="judge_concurrency_1_64"),
            models.CheckConstraint(condition=Q(requests_per_minute__gte=1),
                                   name="judge_rpm_gte_1"),
            models.CheckConstraint(condition=Q(max_attempts__gte=1) & Q(max_attempts__lte=10),
                                   name="judge_max_attempts_1_10"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.model})"


class JudgeRun(BackgroundJob):
    """One run of a judge over a scope of items; its state lives here (a Celery job runs it)."""

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="runs")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    scope = models.JSONField(default=dict, help_text='{"scope": "all"}, {"system": ...} or '
                             '{"sample": n}')
    total = models.PositiveIntegerField(default=0, help_text="Items x samples in scope.")
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    requests = models.PositiveIntegerField(default=0, help_text="Requests this run sent.")
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    estimate = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"judge run {self.pk} ({self.status})"

    @property
    def remaining(self) -> int:
        return max(0, self.total - self.done - self.failed)


class JudgeOutput(models.Model):
    """One response of a judge for one item and sample, kept raw whether valid or not.

    Keyed by (judge, item, prompt hash, sample, attempt): a run never asks again for what is
    stored, so a cancelled or crashed run resumes without paying twice. A valid output
    becomes (or updates) the judge's annotation of the item; a failed one never does.
    """

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="outputs")
    run = models.ForeignKey(JudgeRun, null=True, on_delete=models.SET_NULL, related_name="outputs")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="judge_outputs")
    prompt_hash = models.CharField(max_length=64, help_text="sha256 of the exact prompt text.")
    sample = models.PositiveIntegerField(default=0)
    attempt = models.PositiveIntegerField(default=1)
    model = models.CharField(max_length=200)
    raw_output = models.TextField(blank=True)
    failed = models.BooleanField(default=False)
    failure_reason = models.TextField(blank=True)
    answers = models.JSONField(null=True, blank=True, help_text="The validated answers.")
    annotation = models.ForeignKey(Annotation, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="judge_outputs")
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    usage = models.JSONField(default=dict, blank=True, help_text="The endpoint's usage report.")
    seconds = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "item", "prompt_hash", "sample", "attempt"],
                                    name="judgeoutput_unique_attempt"),
            models.CheckConstraint(condition=Q(failed=True) | ~Q(failure_reason__gt=""),
                                   name="judgeoutput_reason_only_when_failed"),
        ]
        indexes = [models.Index(fields=["judge", "prompt_hash"], name="judgeoutput_judge_prompt")]

    def __str__(self) -> str:
        return f"judge output {self.pk} ({'failed' if self.failed else 'ok'})"
