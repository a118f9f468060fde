"""An answer's stored values: the validated answers, the time spent and, for an
attention-check or gold item, whether it matches the expected answers. One rule for every
source of answers: the worker's save (campaigns/work), a judge's output and an imported
judgment."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import TaskSchema, validate_answers

if TYPE_CHECKING:
    from ..models import Item

__all__ = ["answer_values", "control_passed"]


def answer_values(schema: TaskSchema, item: Item, answers: dict,
                  seconds_spent: float | None) -> dict:
    """The annotation's stored values: the validated answers (AnswerInvalid otherwise), the
    time spent and, for an attention-check or gold item, whether it was passed."""
    cleaned = validate_answers(schema, answers, item.data)
    passed = control_passed(schema, item, cleaned) if item.control else None
    # The first save's time is also the total so far; a repeat save adds to the total only
    # (campaigns_save_answer).
    return {"answers": cleaned, "seconds_spent": seconds_spent, "seconds_first": seconds_spent,
            "control_passed": passed}


def control_passed(schema: TaskSchema, item: Item, answers: dict) -> bool | None:
    """Whether cleaned answers match an attention-check or gold item's expected answers.

    Every atomic part named in `item.gold` must match: numbers within `item.gold_tolerance`
    (exact without one), text ignoring case and surrounding spaces. None when the item has
    no expected answers.
    """
    if not item.gold:
        return None
    tolerance = item.gold_tolerance or 0.0
    for question_id, expected in item.gold.items():
        try:
            question = schema.question(question_id)
        except KeyError:
            continue  # a question removed from the schema after import checks nothing
        given = answers.get(question_id)
        if given is None:
            return False
        got = dict(question.atoms(given))
        for part, value in question.atoms(expected):
            if value in (None, "") and part:
                continue  # parts the gold answer leaves open (e.g. no rewrite expected)
            if not _same(value, got.get(part), tolerance):
                return False
    return True


def _same(expected: Any, given: Any, tolerance: float) -> bool:
    if _is_number(expected) and _is_number(given):
        return abs(float(expected) - float(given)) <= tolerance + 1e-9
    if isinstance(expected, str) and isinstance(given, str):
        return expected.strip().casefold() == given.strip().casefold()
    return expected == given


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
