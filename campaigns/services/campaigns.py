"""Campaign writes: create with a validated schema, change settings, change status."""
from __future__ import annotations

from typing import Any

from django.db import transaction

from ..errors import Conflict, ServiceError
from ..models import Campaign, Item
from ..schema import SchemaInvalid, SchemaIssue, parse_questions, parse_schema

CONFIG_FIELDS = (
    "name", "description", "status", "schema", "instructions", "examples", "consent_text",
    "intake_questions", "items_per_assignment", "annotations_per_item",
    "assignment_timeout_minutes", "max_assignments_per_worker",
    "attention_checks_per_assignment", "gold_items_per_assignment", "completion_mode",
    "completion_code", "completion_redirect_url", "source",
    "recruitment", "completion_code_failed_checks", "completion_code_no_work",
)


def campaign_check_config(*, schema: Any, intake_questions: Any, completion_mode: str = "",
                          completion_code: str = "", completion_redirect_url: str = "") -> None:
    """Raise SchemaInvalid listing every problem of a campaign's task configuration."""
    issues: list[SchemaIssue] = []
    try:
        parse_schema(schema)
    except SchemaInvalid as exc:
        issues += [SchemaIssue(f"schema.{i.path}" if i.path else "schema", i.message)
                   for i in exc.issues]
    try:
        parse_questions(intake_questions or [], path="intake_questions")
    except SchemaInvalid as exc:
        issues += exc.issues
    if completion_mode == Campaign.CompletionMode.FIXED and not completion_code.strip():
        issues.append(SchemaIssue("completion_code", "a fixed completion code is required"))
    if completion_redirect_url and "{code}" not in completion_redirect_url:
        issues.append(SchemaIssue("completion_redirect_url", "must contain the {code} placeholder"))
    if issues:
        raise SchemaInvalid(issues)


def campaign_create(*, owner, slug: str, **fields: Any) -> Campaign:
    """Create a campaign after checking its schema and intake questions."""
    unknown = set(fields) - set(CONFIG_FIELDS)
    if unknown:
        raise TypeError(f"unknown campaign fields: {sorted(unknown)}")
    campaign = Campaign(owner=owner, slug=slug, **fields)
    campaign_check_config(
        schema=campaign.schema, intake_questions=campaign.intake_questions,
        completion_mode=campaign.completion_mode, completion_code=campaign.completion_code,
        completion_redirect_url=campaign.completion_redirect_url,
    )
    campaign.save()
    return campaign


@transaction.atomic
def campaign_update(*, campaign: Campaign, **fields: Any) -> Campaign:
    """Change a campaign's settings; a new k is applied to its regular items' slot targets."""
    unknown = set(fields) - set(CONFIG_FIELDS)
    if unknown:
        raise TypeError(f"unknown campaign fields: {sorted(unknown)}")
    for name, value in fields.items():
        setattr(campaign, name, value)
    campaign_check_config(
        schema=campaign.schema, intake_questions=campaign.intake_questions,
        completion_mode=campaign.completion_mode, completion_code=campaign.completion_code,
        completion_redirect_url=campaign.completion_redirect_url,
    )
    campaign.save()
    if "annotations_per_item" in fields:
        campaign_apply_redundancy(campaign=campaign)
    return campaign


def campaign_apply_redundancy(*, campaign: Campaign) -> int:
    """Set every regular item's slot target to the campaign's k (never below slots taken)."""
    from django.db.models import F
    from django.db.models.functions import Greatest

    return Item.objects.filter(campaign=campaign, control="").update(
        slots_wanted=Greatest(F("slots_taken"), campaign.annotations_per_item)
    )


# Status changes. Each is one conditional UPDATE whose row count is checked, so two researchers
# clicking at once cannot, say, publish a campaign that the other just closed.
_PUBLISHABLE = (Campaign.Status.DRAFT, Campaign.Status.PAUSED)


def _set_status(*, campaign: Campaign, to: str, allowed_from: tuple[str, ...],
                verb: str) -> Campaign:
    updated = Campaign.objects.filter(pk=campaign.pk, status__in=allowed_from).update(status=to)
    if not updated:
        campaign.refresh_from_db(fields=["status"])
        raise _refusal(campaign, verb)
    campaign.status = to
    return campaign


def _refusal(campaign: Campaign, verb: str) -> Conflict:
    return Conflict(
        f"“{campaign.name}” is {campaign.get_status_display().lower()}; it cannot be {verb}.",
        extra={"status": campaign.status},
    )


def campaign_publish(*, campaign: Campaign) -> Campaign:
    """Make a draft or paused campaign live; it needs a valid configuration and regular items."""
    if campaign.status not in _PUBLISHABLE:  # say so before listing what else is missing
        raise _refusal(campaign, "published")
    try:
        campaign_check_config(
            schema=campaign.schema, intake_questions=campaign.intake_questions,
            completion_mode=campaign.completion_mode, completion_code=campaign.completion_code,
            completion_redirect_url=campaign.completion_redirect_url,
        )
    except SchemaInvalid as exc:
        raise ServiceError(f"“{campaign.name}” cannot be published: {exc}",
                           code="config_invalid") from None
    if not Item.objects.filter(campaign=campaign, control="").exists():
        raise ServiceError(f"“{campaign.name}” has no items to annotate; import items first.",
                           code="no_items")
    return _set_status(campaign=campaign, to=Campaign.Status.LIVE, allowed_from=_PUBLISHABLE,
                       verb="published")


def campaign_pause(*, campaign: Campaign) -> Campaign:
    """Stop handing out new work; workers holding an assignment may still finish it."""
    return _set_status(campaign=campaign, to=Campaign.Status.PAUSED,
                       allowed_from=(Campaign.Status.LIVE,), verb="paused")


def campaign_close(*, campaign: Campaign) -> Campaign:
    """Close a campaign for good (results stay); duplicate it to run the study again."""
    return _set_status(
        campaign=campaign, to=Campaign.Status.CLOSED, verb="closed",
        allowed_from=(Campaign.Status.DRAFT, Campaign.Status.LIVE, Campaign.Status.PAUSED),
    )


@transaction.atomic
def campaign_duplicate(*, campaign: Campaign, owner, name: str | None = None,
                       slug: str | None = None) -> Campaign:
    """A new draft with the same schema and settings, no items or results, and a fresh slug.

    Collaborators are copied too: they worked on the original study.
    """
    fields = {f: getattr(campaign, f) for f in CONFIG_FIELDS}
    fields.update(status=Campaign.Status.DRAFT, name=name or f"{campaign.name} (copy)")
    slug = slug or _free_slug(f"{campaign.slug}-copy")
    if Campaign.objects.filter(slug=slug).exists():
        raise Conflict(f"the slug {slug!r} is already taken", extra={"slug": slug})
    copy = Campaign.objects.create(owner=owner, slug=slug, **fields)
    copy.collaborators.set(campaign.collaborators.all())
    return copy


def _free_slug(base: str) -> str:
    max_length = Campaign._meta.get_field("slug").max_length
    base = base[: max_length - 4]
    taken = set(Campaign.objects.filter(slug__startswith=base).values_list("slug", flat=True))
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"
