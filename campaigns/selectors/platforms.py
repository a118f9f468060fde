"""Reads for running a campaign on a platform: places still to open, the study's URLs."""
from __future__ import annotations

import math
from dataclasses import dataclass
from urllib.parse import quote

from django.conf import settings
from django.db.models import F, Max, Sum
from django.urls import reverse
from django.utils import timezone

from ..models import Assignment, Campaign, Item
from ..work.completion import FAILED_CHECKS_TO_FLAG, PROLIFIC_COMPLETE_URL

__all__ = ["PROLIFIC_URL_PARAMETERS", "Places", "PlatformSetup", "campaign_places_to_open",
           "campaign_platform_setup", "platform_warnings"]

# What Prolific substitutes in a study URL ("URL parameters" in the study's setup).
PROLIFIC_URL_PARAMETERS = ("PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}"
                           "&SESSION_ID={{%SESSION_ID%}}")


@dataclass(frozen=True)
class Places:
    """How many more participants the campaign needs at its current assignment size."""

    places: int          # participants to open on the platform now
    free_slots: int      # annotations not handed out yet
    in_progress: int     # open assignments (each may finish, or expire and free its items)


def campaign_places_to_open(*, campaign: Campaign) -> Places:
    """Places to open: the free slots in assignments of `items_per_assignment` regular items,
    and never fewer than the most free slots of one item (a worker sees an item once)."""
    free = Item.objects.filter(campaign=campaign, control="").aggregate(
        total=Sum(F("slots_wanted") - F("slots_taken")),
        most=Max(F("slots_wanted") - F("slots_taken")))
    total, most = free["total"] or 0, free["most"] or 0
    places = max(math.ceil(total / campaign.items_per_assignment), most) if total else 0
    in_progress = Assignment.objects.filter(
        campaign=campaign, status=Assignment.Status.ACTIVE, deadline__gt=timezone.now()).count()
    return Places(places=places, free_slots=total, in_progress=in_progress)


@dataclass(frozen=True)
class PlatformSetup:
    """What to paste into the platform: the study URL and each outcome's completion URL."""

    study_url: str
    completion_urls: list[tuple[str, str, str]]  # (outcome, code, URL)
    warnings: list[str]


def campaign_platform_setup(*, campaign: Campaign) -> PlatformSetup:
    entry = f"{settings.SITE_URL}{reverse('campaigns:entry', args=[campaign.slug])}"
    template = campaign.completion_redirect_url or PROLIFIC_COMPLETE_URL
    outcomes = [("Completed", campaign.completion_code
                 if campaign.completion_mode == Campaign.CompletionMode.FIXED else ""),
                ("Failed attention checks", campaign.completion_code_failed_checks),
                ("No work available / returned", campaign.completion_code_no_work),
                ("Screened out", campaign.completion_code_screened_out)]
    urls = [(label, code, template.replace("{code}", quote(code)))
            for label, code in outcomes if code]
    return PlatformSetup(study_url=f"{entry}?{PROLIFIC_URL_PARAMETERS}", completion_urls=urls,
                         warnings=platform_warnings(campaign))


def platform_warnings(campaign: Campaign) -> list[str]:
    """What would make the platform's round trip fail, in words a researcher can act on."""
    warnings = []
    prolific = campaign.recruitment == Campaign.Recruitment.PROLIFIC
    if prolific and campaign.completion_mode == Campaign.CompletionMode.PER_ASSIGNMENT:
        warnings.append(
            "This Prolific campaign gives each participant a code of its own: Prolific does not "
            "know these codes, so every submission lands in manual review. Choose 'One fixed "
            "code' and enter the study's completion code.")
    if (campaign.completion_code_failed_checks
            and campaign.attention_checks_per_assignment < FAILED_CHECKS_TO_FLAG):
        warnings.append(f"A failed-attention-checks code is set, but it is given for "
                        f"{FAILED_CHECKS_TO_FLAG} or more failed checks and an assignment has "
                        f"{campaign.attention_checks_per_assignment}: nobody will get it.")
    return warnings
