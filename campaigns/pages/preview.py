"""The item page for researchers (admin "preview"): rendered like a worker's, recording nothing."""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from ..models import Campaign, Item
from .item import item_context


def render_item_preview(request: HttpRequest, campaign: Campaign, item: Item, *,
                        values: dict | None = None) -> HttpResponse:
    """The worker's page for `item`, read-only: no form action, the save button disabled.

    Nothing is claimed or stored. The caller checks that the user may see the campaign.
    `values` optionally pre-fills answers (e.g. to show a stored annotation).
    """
    context = item_context(campaign=campaign, item=item, position=1, total=1, values=values,
                           preview=True)
    context["back_url"] = ""
    return render(request, "campaigns/item.html", context)
