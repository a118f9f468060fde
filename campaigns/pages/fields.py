"""The item page's fields: the questions laid out for their template partials, and the page
timer (seconds spent on an item, measured by the server).

`question_fields()` turns questions, current values and errors into what each kind's template
partial (its `template`, given the field as `f`) displays.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from django.core import signing
from django.utils.translation import gettext

from ..schema import BaseQuestion
from ..schema.base import dom_id, field_name
from .markdown import render_markdown

TIMER_SALT = "campaigns.item-page-timer"
MAX_SECONDS = 24 * 3600


# --- the page timer: seconds spent on an item, measured by the server -----------------------

def timer_start() -> str:
    """A signed page-load time for the hidden `started` field."""
    return signing.dumps(time.time(), salt=TIMER_SALT)


def timer_seconds(value: str | None) -> float | None:
    """Seconds since `timer_start()` made `value`; None when missing or tampered with."""
    if not value:
        return None
    try:
        started = float(signing.loads(value, salt=TIMER_SALT, max_age=MAX_SECONDS))
    except (signing.BadSignature, TypeError, ValueError):
        return None
    return round(max(0.0, time.time() - started), 3)


# --- laying questions out for the templates -------------------------------------------------

@dataclass
class QuestionField:
    """One question as a partial displays it: its name, current value and error messages."""

    question: BaseQuestion
    name: str
    dom_id: str
    template: str
    help_html: str
    errors: dict[str, str]  # part ("" for the whole question) -> message
    extra: dict[str, Any] = field(default_factory=dict)

    # A question asked once per output: one field per shown output (label, text, field).
    outputs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def error(self) -> str:
        return self.errors.get("", "")

    @property
    def error_id(self) -> str:
        return f"{self.dom_id}-error"

    @property
    def help_id(self) -> str:
        return f"{self.dom_id}-help"

    @property
    def describedby(self) -> str:
        ids = [self.help_id] if self.help_html else []
        return " ".join(ids + ([self.error_id] if self.error else []))


def split_errors(questions: list[BaseQuestion], errors: dict[str, str]) -> tuple[dict, list[str]]:
    """Errors per question id ({part: message}), and those that name no question."""
    by_question: dict[str, dict[str, str]] = {q.id: {} for q in questions}
    loose = []
    for key, message in errors.items():
        qid, _, part = key.partition(".")
        if qid in by_question:
            by_question[qid][part] = message
        else:
            loose.append(message)
    return by_question, loose


def question_fields(questions: list[BaseQuestion], *, values: dict | None = None,
                    errors: dict[str, str] | None = None,
                    item_data: dict | None = None, order_seed: str | None = None,
                    ) -> tuple[list[QuestionField], list[str]]:
    """The questions ready for their partials, and any error that names no question
    (options that shuffle in the order `order_seed` draws, as in the schema without one)."""
    values = values or {}
    by_question, loose = split_errors(questions, errors or {})
    fields = []
    for q in questions:
        q_errors = by_question[q.id]
        extra = q.widget(values.get(q.id), item_data, q_errors)
        if order_seed is not None and q.shuffles_options():
            extra = q.shown_widget(extra, order_seed)
        if q.part_errors:
            # Part errors sit next to their line or criterion; a summary goes on the fieldset.
            parts = [p for p in q_errors if p]
            if parts and "" not in q_errors:
                q_errors[""] = gettext("Please check the marked answers below.")
        fields.append(QuestionField(
            question=q, name=field_name(q.id), dom_id=dom_id(q.id),
            template=q.template,
            help_html=render_markdown(q.help) if q.help else "",
            errors=q_errors, extra=extra,
            outputs=_output_fields(q, extra) if q.for_each_output or q.for_each_turn else [],
        ))
    return fields, loose


def _output_fields(question: BaseQuestion, extra: dict) -> list[dict[str, Any]]:
    """A per-output question's fields: the wrapped kind's own partial once per shown output,
    named `<field>.o<position>` (what the question's form_value reads back)."""
    inner = question.inner
    rows = []
    for row in extra["outputs"]:
        position, label = row["position"], row["label"]
        sub = inner.model_copy(update={"text": f"{question.text} ({label})", "help": ""})
        errors = dict(row["errors"])
        if inner.part_errors and any(errors) and "" not in errors:
            errors[""] = gettext("Please check the marked answers below.")
        rows.append({"label": label, "text": row["text"], "html": row.get("html"),
                     "field": QuestionField(
            question=sub, name=f"{field_name(question.id)}.o{position}",
            dom_id=dom_id(question.id, f"o{position}"), template=inner.template,
            help_html="", errors=errors, extra=row["extra"])})
    return rows
