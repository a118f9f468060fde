"""Load the seed campaigns shipped in fixtures/ (one folder per campaign), and the demo's
campaigns made from starter templates."""
from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.db import transaction

from ..models import Campaign, Worker
from ..work import DEMO_PARTICIPANT_ID, worker_get_or_create
from .campaigns import SETTINGS_FIELDS, campaign_create, campaign_publish
from .items import items_import
from .starters import campaign_create_from_starter

FIXTURES_DIR = Path(settings.BASE_DIR) / "fixtures"
SEED_SLUGS = (
    "movie-continuation",
    "summary-consistency",
    "story-rating",
    "comparative-rubric",
    "translation-acceptability",
)
# The starter templates `make demo` adds as live campaigns (slug = template name): a design
# for LLM chat assistants next to the five seed tasks.
DEMO_STARTERS = ("arena-side-by-side",)


def seed_campaigns_load(*, owner, directory: Path = FIXTURES_DIR,
                        slugs: tuple[str, ...] = SEED_SLUGS) -> list[tuple[Campaign, bool]]:
    """Create each seed campaign with its demo items; existing slugs are left as they are.

    Returns (campaign, created) pairs, so running it twice changes nothing.
    """
    loaded = []
    for slug in slugs:
        existing = Campaign.objects.filter(slug=slug).first()
        if existing:
            loaded.append((existing, False))
            continue
        loaded.append((_load_one(owner=owner, folder=directory / slug), True))
    return loaded


def starter_campaigns_load(*, owner, templates: tuple[str, ...] = DEMO_STARTERS
                           ) -> list[tuple[Campaign, bool]]:
    """Create a live campaign from each template, with its sample items; existing slugs are
    left as they are (so running it twice changes nothing). Returns (campaign, created)."""
    loaded = []
    for name in templates:
        existing = Campaign.objects.filter(slug=name).first()
        if existing:
            loaded.append((existing, False))
            continue
        with transaction.atomic():
            campaign = campaign_create_from_starter(owner=owner, template=name, slug=name,
                                                    with_items=True)
            loaded.append((campaign_publish(campaign=campaign), True))
    return loaded


@transaction.atomic
def _load_one(*, owner, folder: Path) -> Campaign:
    config = json.loads((folder / "campaign.json").read_text(encoding="utf-8"))
    fields = {k: v for k, v in config.items() if k in SETTINGS_FIELDS}
    campaign = campaign_create(owner=owner, slug=config["slug"], **fields)
    items_file = folder / "items.jsonl"
    items_import(campaign=campaign, content=items_file.read_bytes(), filename=items_file.name)
    if config.get("status") == Campaign.Status.LIVE:  # through the rulebook, like any route
        campaign_publish(campaign=campaign)
    return campaign


def demo_participant_register(*, campaign: Campaign) -> Worker:
    """The demo's Prolific participant on this campaign: its study link then opens as-is with
    PROLIFIC_PID=demo-participant, which every other campaign refuses."""
    return worker_get_or_create(campaign=campaign, platform=Worker.Platform.PROLIFIC,
                                platform_id=DEMO_PARTICIPANT_ID)
