"""Create a campaign from a starter template (the admin gallery, the API and new_campaign)."""
from __future__ import annotations

from django.db import transaction

from ..models import Campaign
from ..starters import starter_get
from .campaigns import campaign_create
from .items import items_import


@transaction.atomic
def campaign_create_from_starter(*, owner, template: str, slug: str, name: str = "",
                                 with_items: bool = False) -> Campaign:
    """A draft campaign with the template's schema, instructions, examples and settings.

    With `with_items`, the template's sample items are imported too (all or nothing, like any
    import). An unknown template is a 404, a taken slug a 409, both before anything is stored.
    """
    starter = starter_get(template)
    fields = starter.campaign_fields()
    if name:
        fields["name"] = name
    campaign = campaign_create(owner=owner, slug=slug, **fields)
    if with_items and starter.items:
        items_import(campaign=campaign, content=starter.items_jsonl().encode(),
                     filename=f"{starter.name}.jsonl")
    return campaign
