"""What the worker pages share: the item page's context, cached Markdown, message pages."""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from ..models import Campaign, Item
from ..schema import BaseQuestion, TaskSchema, campaign_schema
from ..schema.images import image_src
from ..schema.kinds.lines import split_segments
from ..schema.outputs import shown_data
from .conversations import chat_html, present_outputs
from .fields import QuestionField, question_fields, timer_start
from .markdown import render_item_markdown, render_markdown
from .skeleton import Same, filled


@lru_cache(maxsize=128)
def markdown_cached(text: str) -> SafeString:
    """Researcher Markdown rendered once per distinct text (instructions are long)."""
    return render_markdown(text)


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return str(value)


def display_rows(schema: TaskSchema, data: dict) -> list[dict]:
    """The item's fields as the schema shows them: plain text (escaped later), or Markdown and
    conversations as sanitised HTML."""
    rows = []
    for d in schema.display:
        value = data.get(d.field)
        row = {"field": d.field, "label": d.label, "format": d.format, "help": d.help,
               "prefix": d.prefix, "suffix": d.suffix}
        if d.format == "lines":
            row["lines"] = split_segments(value, d.split)
        elif d.format == "markdown":
            row["html"] = render_item_markdown(_as_text(value))
        elif d.format == "chat":
            row["html"] = chat_html(value if isinstance(value, list) else [], schema,
                                    scroll_label=f"{d.label or d.field} (scrolls)")
        elif d.format == "image":
            row["src"] = image_src(value)
            row["alt"] = _as_text(data.get(d.alt_field)) if d.alt_field else d.label
        else:
            row["value"] = _as_text(value)
        rows.append(row)
    return rows


def campaign_texts(campaign: Campaign) -> dict:
    return {
        "instructions_html": markdown_cached(campaign.instructions or ""),
        "examples_html": markdown_cached(campaign.examples or ""),
    }


# (id(question), language) -> HTML: the partial's own words are in the page's language.
_BLANK_WIDGETS: dict[tuple[int, str], tuple[BaseQuestion, SafeString]] = {}
_BLANK_WIDGETS_MAX = 1024


def blank_widget_html(field: QuestionField, value: Any) -> SafeString | str:
    """A question's partial rendered once per process while unanswered and without errors.

    The partial (escaped as usual) reads nothing but the field, and an unanswered field
    without errors is the same on every item, so its HTML is kept with the parsed question
    (cached per schema); "" means: render the partial as usual.
    """
    question = field.question
    if value is not None or field.errors or question.widget_reads_item \
            or question.shuffles_options():
        return ""
    key = (id(question), get_language() or "")
    cached = _BLANK_WIDGETS.get(key)
    if cached is None or cached[0] is not question:
        if len(_BLANK_WIDGETS) >= _BLANK_WIDGETS_MAX:
            _BLANK_WIDGETS.clear()
        cached = (question, render_to_string(field.template, {"f": field}))
        _BLANK_WIDGETS[key] = cached
    return cached[1]


PLAIN_FORMATS = frozenset({"text", "pre"})  # a value printed as it is, escaped


def display_html(schema: TaskSchema, item: Item, order_seed: str | None = None, *,
                 outputs_context: SafeString | None | bool = False) -> SafeString:
    """The item's fields as the page shows them above the questions (and the conversation
    its outputs share, `outputs_context` when the caller has it), rendered by
    templates/campaigns/_display.html; fields shown as plain text fill in the schema's layout
    (pages.skeleton) instead."""
    if outputs_context is False:
        _, outputs_context = present_outputs(shown_data(item.data, order_seed), schema)
    rows = display_rows(schema, item.data or {})

    def render(values) -> str:
        for n, row in enumerate(rows):
            if f"v{n}" in values:
                row["value"] = values[f"v{n}"]
        return render_to_string("campaigns/_display.html", {
            "display": rows, "outputs_context_html": outputs_context,
            "text_dir": schema.text_direction})

    if outputs_context or not all(d.format in PLAIN_FORMATS for d in schema.display):
        return mark_safe(render({}))  # noqa: S308 (the template escaped every value)
    return mark_safe(filled(("display", Same(schema)), render,  # noqa: S308 (as above)
                            {f"v{n}": row["value"] for n, row in enumerate(rows)}))


def blank_page_cacheable(schema: TaskSchema) -> bool:
    """Is an unanswered item's page the same for every item but its fields (display_html)?
    Not when a question's widget reads the item or shuffles its options."""
    return not any(q.widget_reads_item or q.shuffles_options() for q in schema.questions)


def item_context(*, campaign: Campaign, item: Item, position: int, total: int,
                 values: dict | None = None, errors: dict | None = None,
                 preview: bool = False, order_seed: str | None = None) -> dict:
    """Everything templates/campaigns/item.html needs for one item of an assignment
    (its several outputs, and shuffled options, in the order `order_seed` draws; as stored
    without one)."""
    schema = campaign_schema(campaign)
    item_data, outputs_context = present_outputs(shown_data(item.data, order_seed), schema)
    fields, loose = question_fields(schema.questions, values=values, errors=errors,
                                    order_seed=order_seed, item_data=item_data)
    for f in fields:
        f.html = blank_widget_html(f, (values or {}).get(f.question.id))
    return {
        "campaign": campaign,
        "position": position,
        "total": total,
        "display_html": display_html(schema, item, outputs_context=outputs_context),
        "fields": fields,
        "fields_with_errors": [f for f in fields if f.errors],
        "loose_errors": loose,
        "kind_scripts": sorted({q.script for q in schema.questions} - {""}),
        "started": timer_start(),
        "preview": preview,
        "text_dir": schema.text_direction,
        **campaign_texts(campaign),
    }


def message_page(request: HttpRequest, *, heading: str, message: str, status: int = 200,
                 campaign: Campaign | None = None, link_url: str = "",
                 link_text: str = "") -> HttpResponse:
    """A clear page for the cases that are not errors of the worker (closed, expired, ...)."""
    return render(request, "campaigns/message.html",
                  {"heading": heading, "message": message, "campaign": campaign,
                   "link_url": link_url, "link_text": link_text}, status=status)


def form_expired(request: HttpRequest, campaign: Campaign | None = None) -> HttpResponse:
    """A worker form whose key does not match (an old page, or a page on another site)."""
    return message_page(request, heading=_("This page has expired"), status=403,
                        campaign=campaign,
                        message=_("The form could not be checked, so nothing was saved. "
                                  "Please go back, reload the page and try again."))
