"""`"for_each_turn": "assistant" | "user"`: a question that rates one text, asked once per turn
of one role of a conversation; `"turn": "last"` asks about the final assistant turn only.

The conversation is the item field `chat_field` (default `messages`): a list of
`{"role": "system" | "user" | "assistant" | "tool", "content": "..."}` (the OpenAI messages
format). The answer is stored by turn index (the turn's position in that list, from 0):

    {"turns": ["1", "3"], "by_turn": {"1": 4, "3": 2}}

Everything else is per_output.PerOutput's (the page, validation per turn, the judge's labels,
the exports): only what the question is asked of differs. The analysis reads each turn's
answer as a rating of the item's system, each turn its own unit of agreement; csv-long has one
row per turn (`part` = the turn index, then the wrapped kind's part).
"""
from __future__ import annotations

from typing import Any, ClassVar

from django.utils.translation import gettext

from .base import AnswerInvalid
from .contract import Capability
from .per_output import ADDED, PerOutput

TURNS, BY_TURN = "turns", "by_turn"
ROLE_LABELS = {"assistant": "Assistant", "user": "User"}


def chat_turns(value: Any) -> list[dict]:
    """The messages of a conversation value ([] when it is not a list of messages)."""
    if not isinstance(value, list):
        return []
    return [m for m in value if isinstance(m, dict)]


class PerTurn(PerOutput):
    """The per-turn behaviour, mixed in before the kind's class (per_output.repeated_class)."""

    added: ClassVar[frozenset[Capability]] = ADDED - {Capability.JUDGES_OUTPUTS}
    by_key: ClassVar[str] = BY_TURN
    order_key: ClassVar[str] = TURNS
    key_part: ClassVar[str] = "turn"
    keys_are_systems: ClassVar[bool] = False

    def page_label(self, position: int, key: str, label: str) -> str:
        n = int(key) + 1
        if self.for_each_turn == "assistant":
            return gettext("Assistant turn %(n)s") % {"n": n}
        if self.for_each_turn == "user":
            return gettext("User turn %(n)s") % {"n": n}
        return label

    def targets(self, item_data: dict | None) -> list[tuple[str, str, str]]:
        messages = (item_data or {}).get(self.chat_field)
        turns = [(str(i), m) for i, m in enumerate(messages if isinstance(messages, list) else [])
                 if isinstance(m, dict) and m.get("role") == self.for_each_turn]
        if self.turn == "last":
            turns = turns[-1:]
        role = ROLE_LABELS.get(self.for_each_turn, str(self.for_each_turn))
        return [(key, f"{role} turn {int(key) + 1}", str(m.get("content") or ""))
                for key, m in turns]

    def target_order(self, raw: dict, item_data: dict | None) -> list[str]:
        keys = [key for key, _, _ in self.targets(item_data)]
        if not keys:
            what = "final assistant turn" if self.turn == "last" else f"{self.for_each_turn} turn"
            raise AnswerInvalid({self.id: f"This item's {self.chat_field!r} has no {what} to "
                                          "rate."})
        turns = raw.get(TURNS, keys)
        if not isinstance(turns, list) or [str(t) for t in turns] != keys:
            raise AnswerInvalid({f"{self.id}.turns": "The turns must be the conversation's "
                                                     f"{self.for_each_turn} turns, in order."})
        return keys

    def validate_answer(self, raw: Any, item_data: dict | None) -> dict:
        if isinstance(raw, dict) and isinstance(raw.get("by_position"), list):
            # The page's fields are by position; a turn's position is fixed by the item.
            keys = [key for key, _, _ in self.targets(item_data)]
            positions = raw["by_position"]
            if len(positions) > len(keys):
                raise AnswerInvalid({self.id: gettext("An answer was given for a turn not shown.")})
            raw = {BY_TURN: {k: v for k, v in zip(keys, positions, strict=False)
                             if v is not None}}
        return super().validate_answer(raw, item_data)

    def record_order(self, raw: Any, systems: list[str]) -> Any:
        return raw  # turns are in the conversation's order: nothing shown is shuffled

    def item_fields(self) -> list[str]:
        return [self.chat_field, *[f for f in self.inner.item_fields() if f != "output"]]

    def prepare_item(self, data: dict) -> dict[str, str]:
        value = data.get(self.chat_field)
        if value is None:
            return {}  # a missing field is reported with the other required fields
        if not isinstance(value, list):
            return {self.chat_field: 'expected a list of {"role": ..., "content": ...} turns'}
        for i, message in enumerate(value):
            if not isinstance(message, dict) or not isinstance(message.get("role"), str) \
                    or not isinstance(message.get("content"), str):
                return {self.chat_field: f'turn {i}: expected {{"role": ..., "content": ...}} '
                                         "with text values"}
        return {}
