"""The "Add campaign" gallery of starter templates, their sample items, and the schema preview
(the worker's page for the schema in the form, before anything is saved)."""
from __future__ import annotations

import json

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from ..errors import ServiceError
from ..importing import ImportRejected
from ..models import Campaign, Item
from ..schema import SchemaInvalid, SchemaIssue, parse_schema
from ..selectors.starters import schema_sample_item
from ..services.items import items_import
from ..starters import Starter, starter_get, starter_list

STARTER_PARAM = "template"
IMPORT_PARAM = "import_sample_items"


def chosen_starter(request: HttpRequest) -> Starter | None:
    """The template named by ?template= (GET) or the form's hidden field (POST), if any."""
    name = request.GET.get(STARTER_PARAM) or request.POST.get(STARTER_PARAM) or ""
    if not name:
        return None
    try:
        return starter_get(name)
    except ServiceError:
        return None


def starter_initial(request: HttpRequest) -> dict:
    """The add form's initial values from the chosen template ({} without one)."""
    starter = chosen_starter(request)
    return {"intake_questions": [], **starter.campaign_fields()} if starter else {}


def import_sample_items(model_admin, request: HttpRequest, campaign: Campaign) -> None:
    """After "Save" on a form filled from a template with "also import" ticked: its sample items
    (all or none; items that no longer fit an edited schema are reported, the campaign kept)."""
    starter = chosen_starter(request)
    if starter is None or not request.POST.get(IMPORT_PARAM) or not starter.items:
        return
    try:
        result = items_import(campaign=campaign, content=starter.items_jsonl().encode(),
                              filename=f"{starter.name}.jsonl")
    except ImportRejected as exc:
        model_admin.message_user(request, "The sample items were not imported (they do not fit "
                                 f"the schema as edited): {exc.errors[0]}", messages.WARNING)
    else:
        model_admin.message_user(request, f"Imported the template's {result.created} sample "
                                 "items.", messages.SUCCESS)


def gallery_context(request: HttpRequest) -> dict:
    return {"starters": starter_list(), "chosen_starter": chosen_starter(request),
            "starter_param": STARTER_PARAM, "import_param": IMPORT_PARAM}


def sample_items_view(model_admin, request: HttpRequest, name: str) -> HttpResponse:
    """A template's sample items as a JSON-lines file, ready for "Import items"."""
    starter = starter_get(name)  # StarterNotFound: a ServiceError, shown as a 404 by the caller
    response = HttpResponse(starter.items_jsonl(), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="{starter.name}-items.jsonl"'
    return response


def _posted_json(request: HttpRequest, field: str) -> object:
    try:
        return json.loads(request.POST.get(field, ""))
    except ValueError as exc:
        raise SchemaInvalid([SchemaIssue(field, f"not valid JSON: {exc}")]) from None


def schema_preview_view(model_admin, request: HttpRequest) -> HttpResponse:
    """POST (the campaign form itself): its schema, instructions and examples as the worker's
    item page, on the chosen template's first sample item or on placeholder text. Nothing is
    saved; an invalid schema lists its problems by JSON path."""
    from ..pages import render_item_preview  # the worker pages' renderer, recording nothing

    try:
        raw = _posted_json(request, "schema")
        schema = parse_schema(raw)
    except SchemaInvalid as exc:
        return TemplateResponse(
            request, "admin/campaigns/campaign/schema_preview_invalid.html",
            {**model_admin.admin_site.each_context(request), "opts": model_admin.model._meta,
             "title": "The schema cannot be previewed", "issues": exc.issues}, status=400)
    campaign = Campaign(name=request.POST.get("name", "") or "Preview",
                        schema=raw,
                        instructions=request.POST.get("instructions", ""),
                        examples=request.POST.get("examples", ""))
    item = Item(campaign=campaign, external_id="preview",
                data=schema_sample_item(schema=schema, starter=chosen_starter(request)))
    return render_item_preview(request, campaign, item)
