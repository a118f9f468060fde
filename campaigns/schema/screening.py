"""Screening rules on intake questions: which answers are eligible, and quotas per answer.

An intake question may carry, beside its kind's settings:

- `"eligible": [values]`: only these answers may take part (each must be a valid answer to
  the question, e.g. an option value of a `choice`, a point of a `likert`);
- `"eligible_min"` / `"eligible_max"`: bounds on a numeric answer (a `slider`, a `likert`),
  both inclusive;
- `"quota": {"<value>": max}`: at most `max` participants with that answer (the hot path
  counts them under a lock, campaigns/work/screening.py).

An answer outside the rules screens the participant out (`screening_failure`); an unanswered
optional question screens nobody out. The rules are parsed here, once, for every route that
stores intake questions (admin, API, commands), with JSON-path errors.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

from .base import AnswerInvalid, BaseQuestion

__all__ = ["SCREENING_KEYS", "ScreeningRule", "answer_key", "has_quotas",
           "screening_failure", "split_screening"]

SCREENING_KEYS = ("eligible", "eligible_min", "eligible_max", "quota")


@dataclass(frozen=True)
class ScreeningRule:
    """One intake question's rules (None / empty: no rule of that kind)."""

    question_id: str
    eligible: tuple[str, ...] | None = None  # answer keys (answer_key)
    eligible_min: float | None = None
    eligible_max: float | None = None
    quota: dict[str, int] = field(default_factory=dict)  # answer key -> most participants

    def admits(self, answer: Any) -> bool:
        """Whether this answer passes the eligibility rules (quotas are counted elsewhere)."""
        if answer is None:
            return True
        if self.eligible is not None and answer_key(answer) not in self.eligible:
            return False
        value = _number(answer)
        if self.eligible_min is not None and (value is None or value < self.eligible_min):
            return False
        return not (self.eligible_max is not None
                    and (value is None or value > self.eligible_max))


def answer_key(answer: Any) -> str:
    """The text an answer is compared by: a choice's value (also when its order is stored),
    a number without a trailing .0 (so the likert point 3 is "3")."""
    if isinstance(answer, dict) and "value" in answer:
        answer = answer["value"]
    if isinstance(answer, float) and answer.is_integer():
        answer = int(answer)
    return str(answer)


def _number(answer: Any) -> float | None:
    if isinstance(answer, dict):
        answer = answer.get("value")
    if isinstance(answer, bool) or not isinstance(answer, int | float):
        return None
    return float(answer)


def screening_failure(rules: list[ScreeningRule], answers: dict) -> str | None:
    """The id of the first question whose answer makes the participant ineligible, or None."""
    for rule in rules:
        if not rule.admits((answers or {}).get(rule.question_id)):
            return rule.question_id
    return None


def has_quotas(rules: list[ScreeningRule]) -> bool:
    return any(rule.quota for rule in rules)


def split_screening(data: list) -> tuple[list, dict[int, dict]]:
    """The question dicts without their screening keys, and those keys per position."""
    questions, taken = [], {}
    for i, entry in enumerate(data):
        if isinstance(entry, dict) and any(k in entry for k in SCREENING_KEYS):
            taken[i] = {k: entry[k] for k in SCREENING_KEYS if k in entry}
            entry = {k: v for k, v in entry.items() if k not in SCREENING_KEYS}
        questions.append(entry)
    return questions, taken


def parse_rule(question: BaseQuestion, settings: dict, path: str
               ) -> tuple[ScreeningRule | None, list[tuple[str, str]]]:
    """The question's rule from its screening settings, or the problems (path, message)."""
    problems: list[tuple[str, str]] = []
    eligible = _eligible(question, settings.get("eligible"), f"{path}.eligible", problems)
    bounds = [_bound(question, settings, name, f"{path}.{name}", problems)
              for name in ("eligible_min", "eligible_max")]
    if None not in bounds and bounds[0] > bounds[1]:
        problems.append((f"{path}.eligible_min", "must not be above eligible_max"))
    quota = _quota(question, settings.get("quota"), f"{path}.quota", problems)
    if problems:
        return None, problems
    return ScreeningRule(question.id, eligible, bounds[0], bounds[1], quota), []


def _valid_key(question: BaseQuestion, value: Any) -> str | None:
    """The answer key of `value` if it is a valid answer to the question, else None."""
    try:
        return answer_key(question.validate_answer(value, None))
    except (AnswerInvalid, TypeError, ValueError):
        return None


def _eligible(question, values, path, problems) -> tuple[str, ...] | None:
    if values is None:
        return None
    if not isinstance(values, list) or not values:
        problems.append((path, "expected a non-empty list of answers"))
        return None
    keys = []
    for i, value in enumerate(values):
        key = _valid_key(question, value)
        if key is None:
            problems.append((f"{path}[{i}]", f"{value!r} is not an answer to this question"))
        keys.append(key)
    return tuple(k for k in keys if k is not None)


def _answers_with_numbers(question: BaseQuestion) -> bool:
    """Whether the question's answers are numbers (its kind's own example answer says so)."""
    return _number(question.example_answer(None, random.Random(0))) is not None


def _bound(question, settings, name, path, problems) -> float | None:
    value = settings.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        problems.append((path, "expected a number"))
        return None
    if not _answers_with_numbers(question):
        problems.append((path, f"a {question.kind} question's answers are not numbers"))
        return None
    return float(value)


def _quota(question, quota, path, problems) -> dict[str, int]:
    if quota is None:
        return {}
    if not isinstance(quota, dict) or not quota:
        problems.append((path, 'expected an object {"<answer>": most participants}'))
        return {}
    out = {}
    for value, most in quota.items():
        key = _valid_key(question, value)
        if key is None and _answers_with_numbers(question):
            key = _valid_key(question, _as_number(value))
        if key is None:
            problems.append((f"{path}.{value}", f"{value!r} is not an answer to this question"))
        elif isinstance(most, bool) or not isinstance(most, int) or most < 0:
            problems.append((f"{path}.{value}", "expected a whole number of participants, 0 "
                                                "or more"))
        else:
            out[key] = most
    return out


def _as_number(text: str) -> float | int | str:
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if number.is_integer() else number
