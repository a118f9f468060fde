"""Conversations and rich outputs as the item page shows them: a `chat` field's turns, and an
item's outputs formatted as the schema's `outputs_format` says (Markdown, or conversations whose
shared turns are shown once, above the replies).

Markdown is rendered once per distinct text (pages/markdown.py); this module lays the rendered
turns out.
"""
from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import SafeString
from django.utils.translation import gettext

from ..schema import TaskSchema
from ..schema.conversations import role_label, shared_turns
from ..schema.outputs import OUTPUTS
from .markdown import render_item_markdown

CHAT_TEMPLATE = "campaigns/_chat.html"


def chat_turns(turns: Any, labels: dict) -> list[dict]:
    """Each turn with its role label and its content as safe HTML (system prompts marked: the
    page folds them away)."""
    if not isinstance(turns, list):
        return []
    return [{"role": t.get("role", ""), "label": role_label(t, labels),
             "system": t.get("role") == "system",
             "html": render_item_markdown(str(t.get("content", "")))}
            for t in turns if isinstance(t, dict)]


def chat_html(turns: list, schema: TaskSchema, *, scroll_label: str = "") -> SafeString:
    """A conversation as HTML; with `scroll_label`, in a box of bounded height that opens
    scrolled to its last turn (a named region, so a keyboard user can scroll it)."""
    return render_to_string(CHAT_TEMPLATE, {
        "turns": chat_turns(turns, schema.role_labels.model_dump()),
        "dir": schema.text_direction, "scroll_label": scroll_label})


def present_outputs(data: dict, schema: TaskSchema) -> tuple[dict, SafeString | None]:
    """The item's data with each output's `html` for the kinds' widgets (None: shown as plain
    text), and the turns its conversation outputs share as HTML (shown once, above every
    question; None when they share none)."""
    outputs = data.get(OUTPUTS)
    if not isinstance(outputs, list) or not all(isinstance(o, dict) for o in outputs):
        return data, None
    conversations = [o.get("messages") for o in outputs]
    if schema.outputs_format == "text" and not any(isinstance(c, list) for c in conversations):
        return data, None
    shared = shared_turns(conversations) \
        if all(isinstance(c, list) for c in conversations) else 0
    scroll_label = gettext("The conversation so far (scrolls)")
    context = chat_html(conversations[0][:shared], schema,
                        scroll_label=scroll_label) if shared else None
    shown = []
    for output in outputs:
        if isinstance(output.get("messages"), list):
            html = chat_html(output["messages"][shared:], schema)
        elif schema.outputs_format == "chat":
            html = chat_html([{"role": "assistant", "content": output.get("text", "")}], schema)
        else:
            html = render_item_markdown(str(output.get("text", "")))
        shown.append({**output, "html": html})
    return {**data, OUTPUTS: shown}, context
