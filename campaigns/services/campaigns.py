"""Campaign writes: create with a validated schema, change settings, change status."""
from __future__ import annotations

from typing import Any

from django.db import transaction

from ..models import Campaign, Item
from ..schema import SchemaInvalid, SchemaIssue, parse_questions, parse_schema

CONFIG_FIELDS = (
    "name", "description", "status", "schema", "instructions", "examples", "consent_text",
    "intake_questions", "items_per_assignment", "annotations_per_item",
    "assignment_timeout_minutes", "max_assignments_per_worker",
    "attention_checks_per_assignment", "gold_items_per_assignment", "completion_mode",
    "completion_code", "completion_redirect_url", "source",
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
