"""The campaign's qualification setting: a short test of gold items before the main items.

    "qualification": {"items": ["q1", "q2", "q3"], "pass_mark": 0.67,
                      "feedback": true, "group": "summaries-2026"}

- `items`: the external ids of the campaign's gold items that make up the test, shown in
  this order (1 to 20 items; each is an imported item with `control` = gold and expected
  answers). They are kept out of the gold items mixed into assignments.
- `pass_mark`: the share of the test's items to answer correctly, from 0 (exclusive) to 1;
  a participant passes with at least `pass_mark` x the number of items correct.
- `feedback`: after each answer, show whether it was correct and the expected answer
  (default false).
- `group`: optional; campaigns of the same owner with the same group share outcomes, so a
  participant who passed (or failed) the test in one of them does not take it again.

`{}` (the default) means no qualification step. The shape is checked here for every route
that stores it (admin, API, commands); whether the items exist is checked against the
campaign's items (services/campaigns.py: warned at save, refused at publish).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from . import SchemaInvalid, SchemaIssue

__all__ = ["MAX_QUALIFICATION_ITEMS", "QualificationSettings", "parse_qualification"]

MAX_QUALIFICATION_ITEMS = 20
GROUP_SHAPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")
KEYS = ("items", "pass_mark", "feedback", "group")


@dataclass(frozen=True)
class QualificationSettings:
    items: tuple[str, ...]
    pass_mark: float
    feedback: bool = False
    group: str = ""

    def passes(self, correct: int, total: int) -> bool:
        """At least pass_mark x total correct (a hair of slack, so 0.8 x 5 asks for 4)."""
        return total > 0 and correct >= self.pass_mark * total - 1e-9


def parse_qualification(value: Any, path: str = "qualification") -> QualificationSettings | None:
    """The setting, or None when there is no qualification step; SchemaInvalid otherwise."""
    if value in (None, {}):
        return None
    if not isinstance(value, dict):
        raise SchemaInvalid([SchemaIssue(path, "expected an object such as "
                                         '{"items": ["q1", "q2"], "pass_mark": 0.5}')])
    issues = [SchemaIssue(f"{path}.{key}", "unknown setting; expected items, pass_mark, "
                                           "feedback or group")
              for key in value if key not in KEYS]
    items = value.get("items")
    if (not isinstance(items, list) or not items
            or not all(isinstance(i, str) and i.strip() for i in items)):
        issues.append(SchemaIssue(f"{path}.items", "expected a list of the external ids of "
                                                   "gold items"))
        items = []
    elif len(items) > MAX_QUALIFICATION_ITEMS:
        issues.append(SchemaIssue(f"{path}.items",
                                  f"at most {MAX_QUALIFICATION_ITEMS} items in a test"))
    elif len(set(items)) != len(items):
        issues.append(SchemaIssue(f"{path}.items", "an item is listed twice"))
    mark = value.get("pass_mark")
    if (isinstance(mark, bool) or not isinstance(mark, int | float)
            or not 0 < mark <= 1):
        issues.append(SchemaIssue(f"{path}.pass_mark", "expected the share of items to answer "
                                                       "correctly, above 0 and at most 1"))
        mark = 1.0
    feedback = value.get("feedback", False)
    if not isinstance(feedback, bool):
        issues.append(SchemaIssue(f"{path}.feedback", "expected true or false"))
    group = value.get("group", "")
    if not isinstance(group, str) or (group and not GROUP_SHAPE.fullmatch(group)):
        issues.append(SchemaIssue(f"{path}.group", "expected a name of letters, digits, '.', "
                                                   "'_' and '-' (at most 80 characters)"))
    if issues:
        raise SchemaInvalid(issues)
    return QualificationSettings(items=tuple(i.strip() for i in items), pass_mark=float(mark),
                                 feedback=feedback, group=group)
