"""Each starter template's sample campaign with simulated answers, and its statistics: the
inputs every figure test draws from."""
from __future__ import annotations

import random

from campaigns.models import Campaign
from campaigns.services.items import items_import
from campaigns.starters import starter_get, starter_list
from tests.admin.simulate import simulate
from tests.factories import make_campaign

STARTERS = [s.name for s in starter_list()]


def sample_campaign(owner, template: str, *, workers: int = 6) -> Campaign:
    """The template's campaign with its sample items, live, answered by simulated workers."""
    starter = starter_get(template)
    fields = {**starter.campaign_fields(), "items_per_assignment": len(starter.items),
              "annotations_per_item": workers}
    campaign = make_campaign(owner=owner, slug=f"sample-{template}", **fields)
    items_import(campaign=campaign, content=starter.items_jsonl().encode(),
                 filename=f"{template}.jsonl")
    simulate(campaign, workers=workers, rng=random.Random(31))
    return campaign
