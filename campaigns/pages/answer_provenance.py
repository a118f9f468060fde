"""How a free-text answer came to be, as the item page records it (static/campaigns/provenance.js).

The page sends one hidden field, `provenance`: a JSON object keyed by the form field of each
free-text input the worker touched (a `text` answer, a `lines` follow-up, a pairwise reason, a
`flags` "other"; each kind says which of its inputs are: `free_text_input`), with

    typed   characters typed (key presses and input-method compositions that insert text)
    pasted  characters pasted or dropped in
    pastes  paste (and drop) events
    ms      milliseconds from the input's first focus to the save

The browser is never trusted: the field is parsed here, bounded, and a malformed one (not
JSON, a field that is no free-text input of the page, a count that is not a whole number of
0 or more) makes the save fail with its own message, nothing stored. Counts are clamped
(`LIMITS`), and each record gets `chars`, the length of the text the server received, which
the flags (analysis/answer_provenance.py) read instead of anything the page claims.
"""
from __future__ import annotations

import json
from typing import Any

from django.utils.translation import gettext_lazy

from ..schema import AnswerInvalid, TaskSchema
from ..schema.base import FIELD_PREFIX

__all__ = ["FIELD", "LIMITS", "provenance_from_post"]

FIELD = "provenance"
MAX_FIELD_CHARS = 64_000  # a record per line of a long `lines` question fits
LIMITS = {"typed": 1_000_000, "pasted": 1_000_000, "pastes": 10_000, "ms": 24 * 3600 * 1000}


def _malformed() -> AnswerInvalid:
    # Lazy: the save parses this before the view has switched to the campaign's language.
    return AnswerInvalid({FIELD: gettext_lazy(
        "This page sent a record of your typing that could not be read, so nothing was saved. "
        "Please reload the page and answer again.")})


def _question_and_suffix(schema: TaskSchema, name: str) -> tuple[Any, str] | None:
    """The question whose form field `name` is one of, and the rest of the name."""
    if not name.startswith(FIELD_PREFIX):
        return None
    rest = name[len(FIELD_PREFIX):]
    for question in schema.questions:
        if rest == question.id or rest.startswith((f"{question.id}.", f"{question.id}__")):
            return question, rest[len(question.id):]
    return None


def _counts(entry: Any) -> dict[str, int]:
    if not isinstance(entry, dict) or not set(entry) <= set(LIMITS):
        raise _malformed()
    counts = {}
    for key, limit in LIMITS.items():
        value = entry.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise _malformed()
        counts[key] = min(value, limit)
    return counts


def provenance_from_post(schema: TaskSchema, post) -> dict[str, dict[str, int]]:
    """The bounded provenance of the page's free-text answers, keyed `<question>[.<part>]`
    (a `flags` "other" as `<question>.other`); {} when the page sent none (no script).

    Raises AnswerInvalid (key `provenance`) when the field is malformed. A record of an input
    left empty is dropped: there is no text to describe.
    """
    raw = post.get(FIELD, "")
    if not raw:
        return {}
    if len(raw) > MAX_FIELD_CHARS:
        raise _malformed()
    try:
        records = json.loads(raw)
    except ValueError:
        raise _malformed() from None
    if not isinstance(records, dict):
        raise _malformed()
    out = {}
    for name, entry in records.items():
        found = _question_and_suffix(schema, name)
        if found is None or not found[0].free_text_input(found[1]):
            raise _malformed()
        counts = _counts(entry)
        text = post.get(name, "")
        if isinstance(text, str) and text.strip():
            key = name[len(FIELD_PREFIX):].replace("__", ".", 1)
            out[key] = {**counts, "chars": min(len(text.strip()), LIMITS["typed"])}
    return out
