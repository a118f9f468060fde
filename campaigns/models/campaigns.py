"""Campaigns, their items and their workers (people, or LLM judges, as a campaign sees them)."""
import secrets

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Q


def new_token() -> str:
    """An unguessable assignment token: the worker's only credential (~192 bits)."""
    return secrets.token_urlsafe(24)


class Campaign(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        LIVE = "live", "Live"
        PAUSED = "paused", "Paused"
        CLOSED = "closed", "Closed"

    class CompletionMode(models.TextChoices):
        PER_ASSIGNMENT = "per_assignment", "A verifiable code per assignment"
        FIXED = "fixed", "One fixed code for everyone (e.g. a Prolific study code)"

    class Allocation(models.TextChoices):
        UNIFORM = "uniform", "Uniform: every item gets k annotations, least-filled first"
        DYNAMIC_REDUNDANCY = "dynamic_redundancy", (
            "Dynamic redundancy: the minimum per item when its raters agree, more up to the "
            "maximum when they do not")
        ADAPTIVE_RANKING = "adaptive_ranking", (
            "Adaptive ranking: more judgments for the system pairs whose order is least certain")
        ADAPTIVE_PRECISION = "adaptive_precision", (
            "Adaptive precision: more ratings for the systems whose interval is widest")

    class Recruitment(models.TextChoices):
        LINK = "link", "A plain link (anyone with the link)"
        PROLIFIC = "prolific", "Prolific (the link needs PROLIFIC_PID)"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="owned_campaigns"
    )
    collaborators = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="shared_campaigns"
    )
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    description = models.TextField(blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)

    schema = models.JSONField(default=dict, help_text="Task schema: display and questions.")
    instructions = models.TextField(blank=True, help_text="Markdown, rendered safely.")
    examples = models.TextField(blank=True, help_text="Worked examples (Markdown).")
    judge_instructions = models.TextField(
        blank=True, help_text="What LLM judges read instead of the instructions (no "
                              "recruitment or payment sentences); empty: the instructions.")
    consent_text = models.TextField(blank=True, help_text="Markdown; empty means no consent step.")
    intake_questions = models.JSONField(
        default=list, blank=True, help_text="Questions asked once per worker (schema format)."
    )
    # The worker pages' language (campaigns/pages/language.py); the researcher's own texts
    # (instructions, questions) are shown as written.
    language = models.CharField(
        max_length=35, default="en",
        help_text="The worker pages' language, a BCP 47 code such as de, ar or zh-Hans. "
        "Buttons, progress and messages are translated for en, de, es, fr, zh-Hans, ja and ar; "
        "your instructions and questions are shown as you wrote them.")
    language_from_browser = models.BooleanField(
        default=False,
        help_text="Let each participant's browser choose among the translated languages "
        "(the campaign's language when it prefers none of them).")

    items_per_assignment = models.PositiveIntegerField(default=1)
    annotations_per_item = models.PositiveIntegerField(default=3)
    assignment_timeout_minutes = models.PositiveIntegerField(default=60)
    max_assignments_per_worker = models.PositiveIntegerField(
        null=True, blank=True, help_text="Empty means no limit."
    )
    attention_checks_per_assignment = models.PositiveIntegerField(default=0)
    gold_items_per_assignment = models.PositiveIntegerField(default=0)
    # A short test of gold items before the main items (campaigns/schema/qualification.py).
    qualification = models.JSONField(
        default=dict, blank=True, help_text='A short test before the main items: '
        '{"items": ["q1", "q2", "q3"], "pass_mark": 0.67, "feedback": true, "group": "name"}. '
        "items: the external ids of gold items (with expected answers) making up the test; "
        "pass_mark: the share to answer correctly (a participant below it is screened out "
        "with the failed-checks code); feedback: show the expected answer after each one; "
        "group (optional): your campaigns with the same group share the outcome, so a "
        "participant takes the test once. Empty: no test.")

    completion_mode = models.CharField(
        max_length=20, choices=CompletionMode.choices, default=CompletionMode.PER_ASSIGNMENT
    )
    completion_code = models.CharField(
        max_length=100, blank=True, help_text="The shared code when the mode is 'fixed'."
    )
    completion_redirect_url = models.URLField(
        max_length=500,
        blank=True,
        help_text="Where to send the worker when done; {code} is replaced by the code, e.g. "
        "https://app.prolific.com/submissions/complete?cc={code}",
    )
    source = models.TextField(blank=True, help_text="Where the items come from (attribution).")
    # The bonus rule of the submissions list, in the study's currency (0: no bonus).
    bonus_per_item = models.DecimalField(
        max_digits=8, decimal_places=2, default=0,
        validators=[MinValueValidator(0)], help_text="Bonus per regular item answered.")
    bonus_per_gold_correct = models.DecimalField(
        max_digits=8, decimal_places=2, default=0,
        validators=[MinValueValidator(0)], help_text="Bonus per gold item answered correctly.")
    # Quality control's absolute speed floors, beside its relative rule (analysis/quality.py).
    min_seconds_per_item = models.FloatField(
        null=True, blank=True, help_text="Flag workers whose median time per item is below this "
        "many seconds. Empty: only the relative rule (a quarter of the typical worker's time).")
    min_seconds_per_word = models.FloatField(
        null=True, blank=True, help_text="Flag workers whose median time per item is below this "
        "many seconds per word of the item's displayed text. Empty: the default reading floor, "
        "0.06 s per word (1,000 words per minute); 0 switches the per-word floor off.")
    # Free-text answers (campaigns/pages/answer_provenance.py): the pages always record how
    # each text came to be; these switch on refusing a paste into it, or a copy of the item.
    block_paste = models.BooleanField(
        default=False, help_text="Refuse pasting (and dropping text) into free-text answers; "
        "the participant is told that pasting is turned off for this study.")
    block_copy = models.BooleanField(
        default=False, help_text="Refuse copying or cutting the item's text on the item pages "
        "(a hindrance, not a barrier: a determined participant can still retype or screenshot it).")
    # Prolific studies: where participants come from, and the study's code for each outcome.
    recruitment = models.CharField(
        max_length=10, choices=Recruitment.choices, default=Recruitment.LINK,
        help_text="Prolific: a link without a participant id gets a page asking to open the "
        "study from Prolific, and the done page sends participants back automatically.")
    completion_code_failed_checks = models.CharField(
        max_length=100, blank=True,
        help_text="The study's code for a participant who failed two or more attention checks "
        "(empty: they get the completion code).")
    completion_code_no_work = models.CharField(
        max_length=100, blank=True,
        help_text="The study's code for a participant who finds no work to do (empty: they are "
        "asked to return the study).")
    completion_code_screened_out = models.CharField(
        max_length=100, blank=True,
        help_text="The study's screened-out code (Prolific: a completion code whose action is "
        "the fixed screen-out payment), given to a participant whose intake answers make them "
        "ineligible or whose quota is full (empty: they are asked to return the study).")

    # Where the budget goes (campaigns/services/allocation.py; docs/analysis.md, adaptive designs).
    allocation = models.CharField(
        max_length=20, choices=Allocation.choices, default=Allocation.UNIFORM,
        help_text="How work is handed out. Uniform: every item gets k annotations. The "
        "adaptive strategies spend more where the answer is still open, recomputed every "
        "minute from the answers so far.")
    min_annotations_per_item = models.PositiveIntegerField(
        null=True, blank=True, help_text="Adaptive strategies: every item gets at least this "
        "many annotations before any gets more (empty: k; 0, adaptive ranking only: no "
        "per-item floor, the pairs' order uncertainty alone decides).")
    max_annotations_per_item = models.PositiveIntegerField(
        null=True, blank=True, help_text="Adaptive strategies: no item gets more than this "
        "many annotations (empty: k).")
    agreement_spread = models.FloatField(
        default=1.0, help_text="Dynamic redundancy: numeric answers agree when their spread "
        "(highest minus lowest) is at most this; categorical ones when they are all the same.")
    stop_when = models.JSONField(
        default=dict, blank=True, help_text='Stop handing out work at a target: '
        '{"half_width": 0.2} (every system\'s 95% interval of the mean rating no wider than '
        '± this), {"ranks_separated": true} (every two adjacent systems\' strengths differ '
        'significantly) or {"max_annotations": 5000} (a budget). Empty: until every item is full.')
    # Bumped by every recomputation of the priorities; each assignment records the epoch and
    # strategy it was handed out under, so an analysis can say what design it assumes.
    allocation_epoch = models.PositiveIntegerField(default=0, editable=False)
    # Why the stopping rule stopped handing out work (empty: it has not).
    allocation_stopped = models.TextField(blank=True, editable=False)
    # What the allocation job last found about its own design: dynamic redundancy's audit of
    # its premise (empty: nothing to say).
    allocation_audit = models.TextField(blank=True, editable=False)

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(items_per_assignment__gte=1), name="campaign_items_per_assignment_gte_1"
            ),
            models.CheckConstraint(
                condition=Q(annotations_per_item__gte=1), name="campaign_annotations_per_item_gte_1"
            ),
            models.CheckConstraint(
                condition=Q(assignment_timeout_minutes__gte=1), name="campaign_timeout_gte_1"
            ),
            models.CheckConstraint(
                condition=Q(bonus_per_item__gte=0) & Q(bonus_per_gold_correct__gte=0),
                name="campaign_bonus_rule_gte_0",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_live(self) -> bool:
        return self.status == self.Status.LIVE


class Item(models.Model):
    """One thing to judge. `slots_taken` counts assignments holding it (active or submitted)."""

    class Control(models.TextChoices):
        NONE = "", "Regular item"
        ATTENTION = "attention", "Attention check"
        GOLD = "gold", "Gold item (expected answers)"

    # No index of its own: item_campaign_control and the external-id constraint lead with it.
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="items",
                                 db_index=False)
    external_id = models.CharField(max_length=200)
    system = models.CharField(max_length=200, blank=True, db_index=True)
    data = models.JSONField(default=dict)
    control = models.CharField(max_length=10, choices=Control.choices, default="", blank=True)
    gold = models.JSONField(null=True, blank=True, help_text="Expected answers {question: answer}.")
    gold_tolerance = models.FloatField(null=True, blank=True)
    # Redundancy bookkeeping. `slots_wanted` is the campaign's k for regular items, 0 for control
    # items (they never count toward k). The checks make over-assignment impossible even if a
    # service has a bug: 0 <= annotations_done <= slots_taken <= slots_wanted.
    slots_wanted = models.PositiveIntegerField(default=0)
    slots_taken = models.IntegerField(default=0)
    annotations_done = models.IntegerField(default=0)
    # Higher first: written by the allocation job (services/allocation.py), 0 under uniform
    # allocation, where the pick is least-filled first.
    priority = models.FloatField(default=0.0, db_default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "external_id"], name="item_unique_external_id_per_campaign"
            ),
            models.CheckConstraint(condition=Q(slots_taken__gte=0), name="item_slots_taken_gte_0"),
            models.CheckConstraint(
                condition=Q(slots_taken__lte=F("slots_wanted")), name="item_slots_taken_lte_wanted"
            ),
            models.CheckConstraint(
                condition=Q(annotations_done__gte=0), name="item_annotations_done_gte_0"
            ),
            models.CheckConstraint(
                condition=Q(annotations_done__lte=F("slots_taken")),
                name="item_annotations_done_lte_taken",
            ),
            models.CheckConstraint(
                condition=Q(control__in=["", "attention", "gold"]), name="item_control_valid"
            ),
        ]
        indexes = [
            # Handing out work: the open regular items of a campaign by priority (all 0
            # under uniform allocation), least-filled first within a priority.
            models.Index(
                "campaign", F("priority").desc(), "slots_taken", "id",
                name="item_open_by_priority",
                condition=Q(control="") & Q(slots_taken__lt=F("slots_wanted")),
            ),
            models.Index(fields=["campaign", "control"], name="item_campaign_control"),
        ]

    def __str__(self) -> str:
        return f"{self.campaign.slug}:{self.external_id}"


class Worker(models.Model):
    """A person (or an LLM judge) as seen by one campaign."""

    class Platform(models.TextChoices):
        PROLIFIC = "prolific", "Prolific"
        MTURK = "mturk", "Amazon Mechanical Turk"
        LINK = "link", "Plain link"
        ACCOUNT = "account", "Site account"
        LLM = "llm", "LLM judge"

    # No index of its own: worker_unique_per_campaign leads with it.
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="workers",
                                 db_index=False)
    platform = models.CharField(max_length=10, choices=Platform.choices)
    platform_id = models.CharField(max_length=200)
    intake = models.JSONField(null=True, blank=True, help_text="Answers to the intake questions.")
    consented_at = models.DateTimeField(null=True, blank=True)
    # Screened out by the intake's rules (campaigns/schema/screening.py): no work, ever, on
    # this campaign; the reason names the rule ("ineligible:<question id>" or
    # "quota:<question id>").
    screened_out_at = models.DateTimeField(null=True, blank=True)
    screened_out_reason = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    erased_at = models.DateTimeField(
        null=True, blank=True, help_text="When this worker's data was deleted on request."
    )

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "platform", "platform_id"], name="worker_unique_per_campaign"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.platform}:{self.platform_id}"
