"""What the qualification test's feedback shows: each checked question's expected answer beside
the participant's, as the item page words them (an option's or point's label, not its value)."""
from __future__ import annotations

from typing import Any

from ..models import Item
from ..schema import BaseQuestion, TaskSchema

__all__ = ["feedback_rows"]


def _label(question: BaseQuestion, value: Any) -> str:
    for choice in (getattr(question, "options", None) or getattr(question, "points", None)
                   or []):
        if str(choice.value) == str(value):
            return choice.label
    if isinstance(value, dict) and "value" in value:  # a choice stored with its shown order
        return _label(question, value["value"])
    return "" if value is None else str(value)


def _shown(question: BaseQuestion, answer: Any) -> str:
    if answer is None:
        return ""
    parts = []
    for part, value in question.atoms(answer):
        if part and value in (None, ""):
            continue  # parts the expected answer leaves open
        text = _label(question, value)
        parts.append(f"{part}: {text}" if part else text)
    return "; ".join(parts)


def feedback_rows(schema: TaskSchema, item: Item, answers: dict) -> list[dict]:
    """[{question, expected, given}] for every question the item's expected answers check."""
    rows = []
    for question_id, expected in (item.gold or {}).items():
        try:
            question = schema.question(question_id)
        except KeyError:
            continue  # removed from the schema: checks nothing (schema/scoring.py)
        rows.append({"question": question.text, "expected": _shown(question, expected),
                     "given": _shown(question, answers.get(question_id))})
    return rows
