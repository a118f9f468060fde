"""The campaign rulebook: every state change of a campaign is one function here.

Create, edit (settings and schema), publish, pause, close, duplicate and delete; item import is
campaigns/services/items.py, a worker's erasure campaigns/services/privacy.py, and a recorded
rename of an answered question campaigns/services/schema_changes.py. The admin, the API and
the management commands only adapt their input and call these, so they cannot disagree; the
rules and their errors are tabled in docs/rules.md.

Lifecycle: draft -> live <-> paused -> closed. Closing is for good on every route (there is
no reopen); duplicate a closed campaign to run the study again.
"""
from __future__ import annotations

import re
from typing import Any

from django.db import transaction
from django.db.models import Count, Q

from ..errors import Conflict, ServiceError
from ..models import Campaign, Item
from ..schema import SchemaInvalid, SchemaIssue, parse_questions, parse_schema
from ..schema.qualification import parse_qualification
from ..work.qualification import qualification_item_ids, qualification_of
from .allocation import (
    ALLOCATION_FIELDS,
    allocation_issues,
    allocation_record_change,
)
from .schema_changes import schema_change_issues

CONFIG_FIELDS = (
    "name", "description", "status", "schema", "instructions", "examples", "judge_instructions",
    "consent_text", "intake_questions", "language", "language_from_browser",
    "items_per_assignment", "annotations_per_item",
    "assignment_timeout_minutes", "max_assignments_per_worker",
    "attention_checks_per_assignment", "gold_items_per_assignment", "completion_mode",
    "completion_code", "completion_redirect_url", "source",
    "min_seconds_per_item", "min_seconds_per_word", "block_paste", "block_copy",
    "recruitment", "completion_code_failed_checks", "completion_code_no_work",
    "completion_code_screened_out", "qualification",
    *ALLOCATION_FIELDS,
)
# What create and update accept: the status changes only through publish, pause and close.
SETTINGS_FIELDS = tuple(f for f in CONFIG_FIELDS if f != "status")
# A BCP 47 tag's shape: a language, then optional script, region and variant subtags.
BCP47_SHAPE = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z]{4})?(-([A-Za-z]{2}|[0-9]{3}))?"
                         r"(-([A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*")


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


def campaign_check_changes(*, campaign: Campaign | None, fields: dict[str, Any]) -> None:
    """Raise SchemaInvalid listing every problem of these settings on this campaign (None: new).

    The configuration must be valid, and a schema change must keep every stored answer
    readable (schema_change_issues). The admin form calls this too, to show the problems next
    to their fields before anything is saved.
    """
    current = {f: getattr(campaign, f) for f in SETTINGS_FIELDS} if campaign else {}
    merged = {**current, **fields}
    issues: list[SchemaIssue] = []
    try:
        campaign_check_config(
            schema=merged.get("schema"), intake_questions=merged.get("intake_questions"),
            completion_mode=merged.get("completion_mode") or "",
            completion_code=merged.get("completion_code") or "",
            completion_redirect_url=merged.get("completion_redirect_url") or "",
        )
    except SchemaInvalid as exc:
        issues += exc.issues
    if "language" in merged and not BCP47_SHAPE.fullmatch(str(merged["language"] or "")):
        issues.append(SchemaIssue("language", "expected a BCP 47 language code such as de, "
                                              "ar or zh-Hans"))
    for name in ("min_seconds_per_item", "min_seconds_per_word"):
        if merged.get(name) is not None and merged[name] < 0:
            issues.append(SchemaIssue(name, "must be 0 or more seconds"))
    try:
        parse_qualification(merged.get("qualification"))
    except SchemaInvalid as exc:
        issues += exc.issues
    for name in ("block_paste", "block_copy"):
        if name in fields and not isinstance(fields[name], bool):
            issues.append(SchemaIssue(name, "must be true or false"))
    issues += allocation_issues(merged)
    if not issues and campaign is not None and "schema" in fields:
        issues += schema_change_issues(campaign=campaign, schema=fields["schema"])
    if issues:
        raise SchemaInvalid(issues)


def _check_field_names(fields: dict[str, Any]) -> None:
    if "status" in fields:
        raise ServiceError("The status changes only by publishing, pausing or closing.",
                           code="status_not_a_setting", extra={"field": "status"})
    unknown = set(fields) - set(SETTINGS_FIELDS)
    if unknown:
        raise TypeError(f"unknown campaign fields: {sorted(unknown)}")


SLUG_UNAVAILABLE = "This slug is not available; choose another."


def _check_slug_available(slug: str) -> None:
    """A slug is the campaign's public URL (/c/<slug>/), so it is unique across researchers.
    A taken one is a 409 worded the same whoever holds it (the caller or another researcher)
    and whatever its state: it says nothing about a campaign the caller cannot see."""
    if Campaign.objects.filter(slug=slug).exists():
        raise Conflict(SLUG_UNAVAILABLE, extra={"field": "slug"})


def campaign_create(*, owner, slug: str, **fields: Any) -> Campaign:
    """Create a draft campaign after checking its configuration; a taken slug is a 409."""
    _check_field_names(fields)
    _check_slug_available(slug)
    campaign_check_changes(campaign=None, fields=fields)
    campaign = Campaign(owner=owner, slug=slug, status=Campaign.Status.DRAFT, **fields)
    campaign.save()
    return campaign


@transaction.atomic
def campaign_update(*, campaign: Campaign, **fields: Any) -> Campaign:
    """Change a campaign's settings and schema; a new k is applied to its items' slot targets.

    A change of allocation strategy or stopping target is allowed at any time, recorded
    (AllocationChange) and applied at once (services/allocation.py).

    A schema change that would hide stored answers is refused (schema_change_issues).
    """
    _check_field_names(fields)
    # Checked against the stored row, locked, so that two editors cannot each pass the
    # answered-questions check on a stale copy.
    stored = Campaign.objects.select_for_update().get(pk=campaign.pk)
    campaign_check_changes(campaign=stored, fields=fields)
    before = {name: getattr(stored, name) for name in ALLOCATION_FIELDS}
    for name, value in fields.items():
        setattr(campaign, name, value)
    campaign.save()
    if "annotations_per_item" in fields and campaign.allocation == Campaign.Allocation.UNIFORM:
        campaign_apply_redundancy(campaign=campaign)
    if "annotations_per_item" in fields or any(name in fields for name in ALLOCATION_FIELDS):
        allocation_record_change(campaign=campaign, before=before,
                                 k_changed="annotations_per_item" in fields)
    return campaign


def campaign_apply_redundancy(*, campaign: Campaign) -> int:
    """Set every regular item's slot target to the campaign's k (never below slots taken)."""
    from django.db.models import F
    from django.db.models.functions import Greatest

    return Item.objects.filter(campaign=campaign, control="").update(
        slots_wanted=Greatest(F("slots_taken"), campaign.annotations_per_item)
    )


def _control_counts(campaign: Campaign) -> dict[str, int]:
    counts = Item.objects.filter(campaign=campaign).aggregate(
        regular=Count("pk", filter=Q(control="")),
        attention=Count("pk", filter=Q(control=Item.Control.ATTENTION)),
        gold=Count("pk", filter=Q(control=Item.Control.GOLD)),
    )
    return counts


def campaign_control_problems(*, campaign: Campaign) -> list[str]:
    """Checks per assignment that the campaign's items cannot supply (warned at save,
    refused at publish): workers would silently get fewer checks than the settings promise."""
    counts = _control_counts(campaign)
    problems = qualification_problems(campaign=campaign)
    counts[Item.Control.GOLD] -= len(qualification_item_ids(campaign))  # not mixed in
    for setting, control in (("attention_checks_per_assignment", Item.Control.ATTENTION),
                             ("gold_items_per_assignment", Item.Control.GOLD)):
        wanted = getattr(campaign, setting)
        if wanted > counts[control]:
            problems.append(
                f"{setting.replace('_', ' ').capitalize()} is {wanted}, but the campaign has "
                f"{counts[control]} {control} item(s); import {control} items "
                f"(control = {control}) or lower the setting.")
    return problems


def qualification_problems(*, campaign: Campaign) -> list[str]:
    """Test items the campaign's items cannot supply: each listed id must be a gold item with
    expected answers (warned at save, refused at publish)."""
    settings = qualification_of(campaign)
    if settings is None:
        return []
    usable = set(Item.objects.filter(campaign=campaign, control=Item.Control.GOLD,
                                     gold__isnull=False, external_id__in=settings.items)
                 .values_list("external_id", flat=True))
    missing = [e for e in settings.items if e not in usable]
    if not missing:
        return []
    return [f"The qualification test lists {len(missing)} item(s) that are not gold items with "
            f"expected answers in this campaign ({', '.join(missing[:5])}"
            f"{', ...' if len(missing) > 5 else ''}); import them with control = gold and "
            "their gold answers, or change the list."]


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
    if campaign.status == Campaign.Status.CLOSED:
        return Conflict(
            f"“{campaign.name}” is closed, and closing is for good; it cannot be {verb}. "
            "Duplicate it to run the study again.",
            code="campaign_closed", extra={"status": campaign.status},
        )
    return Conflict(
        f"“{campaign.name}” is {campaign.get_status_display().lower()}; it cannot be {verb}.",
        code="status_conflict", extra={"status": campaign.status},
    )


def campaign_publish(*, campaign: Campaign) -> Campaign:
    """Make a draft or paused campaign live: it needs a valid configuration, regular items,
    and as many attention and gold items as one assignment asks for."""
    campaign.refresh_from_db()
    if campaign.status not in _PUBLISHABLE:  # say so before listing what else is missing
        raise _refusal(campaign, "published")
    try:
        campaign_check_changes(campaign=None, fields={f: getattr(campaign, f)
                                                      for f in SETTINGS_FIELDS})
    except SchemaInvalid as exc:
        raise ServiceError(f"“{campaign.name}” cannot be published: {exc}",
                           code="config_invalid") from None
    if not Item.objects.filter(campaign=campaign, control="").exists():
        raise ServiceError(f"“{campaign.name}” has no items to annotate; import items first.",
                           code="no_items")
    problems = campaign_control_problems(campaign=campaign)
    if problems:
        raise ServiceError(f"“{campaign.name}” cannot be published: {' '.join(problems)}",
                           code="control_items_missing")
    return _set_status(campaign=campaign, to=Campaign.Status.LIVE, allowed_from=_PUBLISHABLE,
                       verb="published")


def campaign_pause(*, campaign: Campaign) -> Campaign:
    """Stop handing out new work; workers holding an assignment may still finish it."""
    return _set_status(campaign=campaign, to=Campaign.Status.PAUSED,
                       allowed_from=(Campaign.Status.LIVE,), verb="paused")


CLOSE_EXPLAINED = ("Closing is for good: no worker can start new work, workers who hold an "
                   "assignment can still hand it in, results and exports stay, and the campaign "
                   "cannot be published again (duplicate it to run the study again).")


def campaign_close(*, campaign: Campaign) -> Campaign:
    """Close a campaign for good (results stay); duplicate it to run the study again."""
    return _set_status(
        campaign=campaign, to=Campaign.Status.CLOSED, verb="closed",
        allowed_from=(Campaign.Status.DRAFT, Campaign.Status.LIVE, Campaign.Status.PAUSED),
    )


def campaign_set_status(*, campaign: Campaign, status: str) -> Campaign:
    """The status a route asks for, through the one service that may set it."""
    services = {Campaign.Status.LIVE: campaign_publish, Campaign.Status.PAUSED: campaign_pause,
                Campaign.Status.CLOSED: campaign_close}
    if status not in services:
        raise Conflict(f"A campaign never goes back to {status!r}; publish, pause or close it.",
                       code="status_conflict", extra={"status": campaign.status})
    return services[status](campaign=campaign)


@transaction.atomic
def campaign_duplicate(*, campaign: Campaign, owner, name: str | None = None,
                       slug: str | None = None) -> Campaign:
    """A new draft with the same schema and settings, no items or results, and a fresh slug.

    Collaborators are copied too: they worked on the original study.
    """
    fields = {f: getattr(campaign, f) for f in CONFIG_FIELDS}
    fields.update(status=Campaign.Status.DRAFT, name=name or f"{campaign.name} (copy)")
    slug = slug or _free_slug(f"{campaign.slug}-copy")
    _check_slug_available(slug)
    copy = Campaign.objects.create(owner=owner, slug=slug, **fields)
    copy.collaborators.set(campaign.collaborators.all())
    return copy


def campaign_may_delete(*, campaign: Campaign, user) -> bool:
    """Collaborators may change a study; only its owner (or a superuser) may delete it."""
    return bool(user.is_superuser or campaign.owner_id == user.pk)


@transaction.atomic
def campaign_delete(*, campaign: Campaign, user) -> dict[str, int]:
    """Delete a campaign with its items, workers and results; only its owner may."""
    if not campaign_may_delete(campaign=campaign, user=user):
        raise ServiceError("Only the campaign's owner may delete it (and its results).",
                           code="not_owner", status=403)
    _, counts = campaign.delete()
    return counts


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
