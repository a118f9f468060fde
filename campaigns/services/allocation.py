"""Adaptive allocation: the campaign settings' rules, the periodic job that writes per-item
priorities and wanted counts, and the stopping rule.

The job runs off the request path (Celery beat, `campaigns.update_allocations`, every
ALLOCATION_SECONDS) and writes two columns of each regular item: `priority` (the claim picks
the highest first, least-filled first within a priority) and `slots_wanted` (within the
campaign's minimum and maximum, never below the slots already taken). The claim itself is
unchanged in its locks, so k, no repeats, caps and control items hold under every strategy
(campaigns/work/README.md). The statistics are campaigns/analysis/allocation.py.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db import connection, transaction
from django.db.models import F, Sum

from ..models import AllocationChange, Annotation, Campaign, Item, ItemTally
from ..schema import SchemaInvalid, SchemaIssue, parse_schema
from ..schema.contract import Capability
from ..schema.outputs import item_systems

ALLOCATION_FIELDS = ("allocation", "min_annotations_per_item", "max_annotations_per_item",
                     "agreement_spread", "stop_when")
STOP_KEYS = {"half_width": "a positive number (the 95% interval's half-width of each "
                           "system's mean rating)",
             "ranks_separated": "true (every two adjacent systems differ significantly)",
             "max_annotations": "a positive whole number (a budget of annotations)"}
# What each strategy needs of the schema: a question kind with this capability.
NEEDS = {Campaign.Allocation.DYNAMIC_REDUNDANCY: (Capability.AGREEMENT, "an agreement level"),
         Campaign.Allocation.ADAPTIVE_RANKING: (Capability.PREFERENCES,
                                                "preferences between outputs (pairwise)"),
         Campaign.Allocation.ADAPTIVE_PRECISION: (Capability.TALLIED, "numeric ratings")}
MAX_PER_ITEM = 1000
# A minimum of 0 (no per-item exploration floor) only where the priority itself explores:
# under adaptive ranking a pair of systems compared seldom has a wide interval and so a
# wrong-order probability near one half, the highest there is; within a pair the claim still
# fills the least-filled item first. With a floor of one per item, a ranking of few systems
# over many items spends its first pass on pairs already settled (bench/README.md).
NO_FLOOR_ONLY = " (0, no per-item floor, only under adaptive_ranking)"
WRITE_CHUNK = 500  # items written per transaction by the allocation job


def allocation_issues(merged: dict[str, Any]) -> list[SchemaIssue]:
    """Every problem of a campaign's allocation settings (merged: its settings after the
    change), each with its field and a plain reason."""
    issues: list[SchemaIssue] = []
    allocation = merged.get("allocation") or Campaign.Allocation.UNIFORM
    if allocation not in Campaign.Allocation.values:
        names = ", ".join(Campaign.Allocation.values)
        issues.append(SchemaIssue("allocation", f"must be one of {names}"))
    low, high = merged.get("min_annotations_per_item"), merged.get("max_annotations_per_item")
    for name, value in (("min_annotations_per_item", low), ("max_annotations_per_item", high)):
        lowest = 0 if (name, allocation) == ("min_annotations_per_item",
                                             Campaign.Allocation.ADAPTIVE_RANKING) else 1
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                  or not lowest <= value <= MAX_PER_ITEM):
            issues.append(SchemaIssue(name, f"must be a whole number from {lowest} to "
                                      f"{MAX_PER_ITEM}" + (NO_FLOOR_ONLY if lowest else "")))
    if not issues and (low or 0) > (high or MAX_PER_ITEM):
        issues.append(SchemaIssue("max_annotations_per_item",
                                  f"must be at least the minimum ({low})"))
    spread = merged.get("agreement_spread", 1.0)
    if not isinstance(spread, int | float) or isinstance(spread, bool) or spread < 0:
        issues.append(SchemaIssue("agreement_spread", "must be a number, 0 or more"))
    issues += _stop_issues(merged.get("stop_when"))
    need = NEEDS.get(allocation)
    if need and not any(q.supports(need[0]) for q in _questions(merged.get("schema"))):
        issues.append(SchemaIssue("allocation", f"'{allocation}' needs a question with "
                                  f"{need[1]}; this schema has none"))
    return issues


def _stop_issues(stop: Any) -> list[SchemaIssue]:
    if stop in (None, {}):
        return []
    if not isinstance(stop, dict) or len(stop) != 1 or next(iter(stop)) not in STOP_KEYS:
        return [SchemaIssue("stop_when", "must be empty or one of " + ", ".join(
            f'{{"{key}": ...}}' for key in STOP_KEYS))]
    key, value = next(iter(stop.items()))
    number = isinstance(value, int | float) and not isinstance(value, bool)
    valid = {"half_width": number and value > 0, "ranks_separated": value is True,
             "max_annotations": number and value >= 1 and float(value).is_integer()}[key]
    return [] if valid else [SchemaIssue(f"stop_when.{key}", f"must be {STOP_KEYS[key]}")]


def _questions(schema: Any) -> list:
    try:
        return list(parse_schema(schema).questions)
    except SchemaInvalid:
        return []


def allocation_record_change(*, campaign: Campaign, before: dict[str, Any],
                             k_changed: bool = False) -> None:
    """Record a change of strategy or target (allowed on a live campaign with answers) and
    apply any change of the allocation settings at once: a new epoch, fresh priorities and
    wanted counts, and the stopping rule checked again (a raised target reopens the work)."""
    if (before["allocation"], before["stop_when"]) == (campaign.allocation, campaign.stop_when):
        if k_changed or any(before[f] != getattr(campaign, f) for f in ALLOCATION_FIELDS):
            campaign_allocate(campaign=campaign)
        return
    AllocationChange.objects.create(
        campaign=campaign, allocation_before=before["allocation"],
        allocation_after=campaign.allocation, stop_when_before=before["stop_when"] or {},
        stop_when_after=campaign.stop_when or {}, epoch=campaign.allocation_epoch + 1,
        annotations_before=Annotation.objects.filter(campaign=campaign).count())
    campaign_allocate(campaign=campaign)


def allocations_update() -> int:
    """Periodic: recompute every live adaptive (or targeted) campaign; how many there were."""
    campaigns = Campaign.objects.filter(status=Campaign.Status.LIVE).exclude(
        allocation=Campaign.Allocation.UNIFORM, stop_when={})
    done = 0
    for campaign in campaigns:
        campaign_allocate(campaign=campaign)
        done += 1
    return done


def bounds(campaign: Campaign) -> tuple[int, int]:
    """The campaign's (minimum, maximum) annotations per item; k where not set."""
    k = campaign.annotations_per_item
    low = campaign.min_annotations_per_item
    if low is None:
        low = min(k, campaign.max_annotations_per_item or k)
    return low, max(low, campaign.max_annotations_per_item or k)


def campaign_allocate(*, campaign: Campaign) -> str:
    """Write the items' priorities and wanted counts for the campaign's strategy, bump its
    epoch, record what the strategy found about its premise, and apply the stopping rule;
    the reason it stopped ('' while it goes on)."""
    priority, wanted, audit = _plan(campaign)
    _write(priority, wanted)
    with transaction.atomic():
        stopped = stop_reason(campaign)
        Campaign.objects.filter(pk=campaign.pk).update(
            allocation_epoch=F("allocation_epoch") + 1, allocation_stopped=stopped,
            allocation_audit=audit)
    campaign.refresh_from_db(fields=["allocation_epoch", "allocation_stopped",
                                     "allocation_audit"])
    return stopped


def _plan(campaign: Campaign) -> tuple[dict[int, float], dict[int, int], str]:
    """(priority, wanted) per regular item for the campaign's strategy, and what its audit
    found in words ('' for strategies without one)."""
    from ..analysis import allocation as stats  # numpy: only the jobs load it, not the web

    low, high = bounds(campaign)
    items = Item.objects.filter(campaign=campaign, control="")
    done = dict(items.values_list("id", "annotations_done"))
    if campaign.allocation == Campaign.Allocation.UNIFORM:
        return (dict.fromkeys(done, 0.0), dict.fromkeys(done, campaign.annotations_per_item),
                "")
    if campaign.allocation == Campaign.Allocation.DYNAMIC_REDUNDANCY:
        spread = campaign.agreement_spread
        priority, wanted, audit = stats.redundancy_plan(
            _answer_parts(campaign), done, minimum=low, maximum=high, spread=spread)
        return priority, wanted, audit.text(spread)
    if campaign.allocation == Campaign.Allocation.ADAPTIVE_RANKING:
        pairs = {pk: tuple(item_systems(data)) for pk, data in items.values_list("id", "data")}
        pairs = {pk: p for pk, p in pairs.items() if len(p) == 2}
        strengths = stats.bradley_terry_strengths(_preferences(campaign), pairs.values())
        priority = stats.ranking_priorities(pairs, done, strengths, minimum=low)
    else:
        systems = dict(items.values_list("id", "system"))
        widths = stats.system_half_widths(_tallies(campaign))
        target = float((campaign.stop_when or {}).get("half_width") or 1.0)
        priority = stats.precision_priorities(systems, done, widths, target=target,
                                              minimum=low)
    return ({pk: priority.get(pk, 0.0) for pk in done}, dict.fromkeys(done, high), "")


def _write(priority: dict[int, float], wanted: dict[int, int]) -> None:
    """Lock the items whose priority or wanted count changes in id order (as the claim's
    fallback and expiry do, so none waits on another in a cycle), then write them; never a
    wanted count below the slots taken."""
    current = Item.objects.filter(pk__in=list(priority)).values_list(
        "id", "priority", "slots_wanted", "slots_taken")
    changed = sorted(pk for pk, p, w, taken in current
                     if p != priority[pk] or w != max(taken, wanted[pk]))
    for start in range(0, len(changed), WRITE_CHUNK):
        _write_chunk(changed[start:start + WRITE_CHUNK], priority, wanted)


def _write_chunk(ids: list[int], priority: dict[int, float], wanted: dict[int, int]) -> None:
    # A transaction per chunk: claims skip the rows it locks (SKIP LOCKED), so short holds
    # keep the pick from passing over the items that matter most for long.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT id FROM campaigns_item WHERE id = ANY(%s) ORDER BY id "
                       "FOR NO KEY UPDATE", [ids])
        cursor.execute(
            "UPDATE campaigns_item i SET priority = v.p, "
            "slots_wanted = GREATEST(i.slots_taken, v.w) "
            "FROM unnest(%s::bigint[], %s::double precision[], %s::integer[]) AS v(id, p, w) "
            "WHERE i.id = v.id AND (i.priority <> v.p "
            "OR i.slots_wanted <> GREATEST(i.slots_taken, v.w))",
            [ids, [priority[i] for i in ids], [wanted[i] for i in ids]])


def stop_reason(campaign: Campaign) -> str:
    """Why the campaign's target is met, in words ('' when it is not, or there is none)."""
    from ..analysis import allocation as stats  # numpy: only the jobs load it, not the web

    stop = campaign.stop_when or {}
    if "max_annotations" in stop:
        taken = Item.objects.filter(campaign=campaign, control="").aggregate(
            n=Sum("slots_taken"))["n"] or 0
        budget = int(stop["max_annotations"])
        return (f"The budget of {budget} annotations is spent ({taken} handed out)."
                if taken >= budget else "")
    if "half_width" in stop:
        widths = stats.system_half_widths(_tallies(campaign))
        target = float(stop["half_width"])
        if widths and max(widths.values()) <= target:
            return (f"Every system's 95% interval of the mean rating is within ±{target:g} "
                    f"(the widest is ±{max(widths.values()):.3g}).")
        return ""
    if stop.get("ranks_separated"):
        pairs = [tuple(item_systems(d)) for d in Item.objects.filter(
            campaign=campaign, control="").values_list("data", flat=True)]
        strengths = stats.bradley_terry_strengths(_preferences(campaign),
                                                  [p for p in pairs if len(p) == 2])
        separated, closest = stats.ranks_separated(strengths)
        return (f"Every two adjacent systems' strengths differ significantly (the closest: "
                f"{closest})." if separated else "")
    return ""


def _human_annotations(campaign: Campaign):
    return Annotation.objects.filter(campaign=campaign, item__control="").exclude(
        worker__platform="llm")


def _answer_parts(campaign: Campaign) -> dict[int, list[dict[str, Any]]]:
    """Per item, each human annotation's agreement parts {"question/part": value}, in the
    order the annotations came (the audit compares the first raters with the whole panel)."""
    questions = [q for q in _questions(campaign.schema) if q.supports(Capability.AGREEMENT)]
    out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for item, answers in _human_annotations(campaign).order_by("created_at", "id").values_list(
            "item_id", "answers"):
        parts = {}
        for q in questions:
            if answers.get(q.id) is not None:
                parts.update({f"{q.id}/{part}": value for part, value in q.atoms(answers[q.id])
                              if not q.is_free_text(part)})
        out[item].append(parts)
    return out


def _preferences(campaign: Campaign) -> list[tuple[str, str, float]]:
    questions = [q for q in _questions(campaign.schema) if q.supports(Capability.PREFERENCES)]
    return [pref for answers in _human_annotations(campaign).values_list("answers", flat=True)
            for q in questions if answers.get(q.id) is not None
            for pref in q.preferences(answers[q.id])]


def _tallies(campaign: Campaign):
    """(system, tally counts) per regular item: the per-item tallies PostgreSQL keeps."""
    return ItemTally.objects.filter(campaign=campaign).values_list("item__system", "counts")
