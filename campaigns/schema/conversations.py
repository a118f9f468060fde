"""Conversations: the "chat" display format's values and outputs that continue a conversation.

A conversation is a list of turns in the OpenAI messages format, `{"role": "system" | "user" |
"assistant" | "tool", "content": "..."}`. Imports may also give it as a JSON-encoded CSV cell,
as an Anthropic HH-RLHF transcript (`\\n\\nHuman: ...\\n\\nAssistant: ...`) or as ShareGPT turns
(`{"from": "human" | "gpt", "value": ...}`); `read_conversation` turns each into the stored list
or says, naming the turn, why it cannot.
"""
from __future__ import annotations

import json
import re
from typing import Any

ROLES = ("system", "user", "assistant", "tool")
DEFAULT_ROLE_LABELS = {"system": "System", "user": "User", "assistant": "Assistant",
                       "tool": "Tool"}
# How an import reads conversations: OpenAI messages (the default), HH-RLHF transcripts, or
# ShareGPT turns.
TRANSCRIPTS = ("messages", "hh-rlhf", "sharegpt")
OPTIONAL_KEYS = ("name",)
MAX_TURNS = 500
_HH_TURN = re.compile(r"\n\n(Human|Assistant): ?")
_HH_ROLES = {"Human": "user", "Assistant": "assistant"}
_SHAREGPT_ROLES = {"human": "user", "user": "user", "gpt": "assistant", "chatgpt": "assistant",
                   "assistant": "assistant", "system": "system", "tool": "tool",
                   "function": "tool"}


class ConversationInvalid(ValueError):
    """A conversation that cannot be stored; the message names the turn at fault."""


def read_conversation(value: Any, transcripts: str = "messages") -> list[dict]:
    """The stored turns of one imported conversation, or ConversationInvalid."""
    if isinstance(value, str):
        value = _from_text(value, transcripts)
    if not isinstance(value, list) or not value:
        raise ConversationInvalid('expected a non-empty list of {"role", "content"} turns')
    if len(value) > MAX_TURNS:
        raise ConversationInvalid(f"{len(value)} turns; at most {MAX_TURNS}")
    if transcripts == "sharegpt":
        value = [_from_sharegpt(turn, n) for n, turn in enumerate(value, start=1)]
    return [_checked_turn(turn, n) for n, turn in enumerate(value, start=1)]


def _from_text(text: str, transcripts: str) -> Any:
    if transcripts == "hh-rlhf":
        return hh_rlhf_turns(text)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        hint = (" (an HH-RLHF transcript? import with transcripts hh-rlhf)"
                if _HH_TURN.search("\n\n" + text.lstrip("\n")) else "")
        raise ConversationInvalid("expected a list of turns; in a CSV or TSV cell, the list "
                                  f"written as JSON{hint}") from None


def hh_rlhf_turns(text: str) -> list[dict]:
    """An HH-RLHF transcript's turns. A turn starts only at a blank line followed by
    "Human: " or "Assistant: ", so those words inside a turn stay text."""
    parts = _HH_TURN.split("\n\n" + text.lstrip("\n"))
    if parts[0].strip():
        raise ConversationInvalid('an HH-RLHF transcript starts with "Human:" or "Assistant:"')
    return [{"role": _HH_ROLES[speaker], "content": content.strip()}
            for speaker, content in zip(parts[1::2], parts[2::2], strict=True)]


def _from_sharegpt(turn: Any, n: int) -> Any:
    if not isinstance(turn, dict) or set(turn) - {"from", "value", "name"}:
        raise ConversationInvalid(f'turn {n}: expected a ShareGPT turn {{"from", "value"}}')
    speaker = turn.get("from")
    if speaker not in _SHAREGPT_ROLES:
        raise ConversationInvalid(f"turn {n}: from {speaker!r} is not one of "
                                  f"{', '.join(_SHAREGPT_ROLES)}")
    return {"role": _SHAREGPT_ROLES[speaker], "content": turn.get("value"),
            **({"name": turn["name"]} if "name" in turn else {})}


def _checked_turn(turn: Any, n: int) -> dict:
    if not isinstance(turn, dict):
        raise ConversationInvalid(f'turn {n}: expected an object {{"role", "content"}}')
    if "from" in turn and "role" not in turn:
        raise ConversationInvalid(f'turn {n}: a ShareGPT turn ("from"); import with '
                                  "transcripts sharegpt")
    unknown = sorted(set(turn) - {"role", "content", *OPTIONAL_KEYS})
    if unknown:
        raise ConversationInvalid(f"turn {n}: unknown key {unknown[0]!r} (a turn has role, "
                                  "content and optionally name)")
    if turn.get("role") not in ROLES:
        raise ConversationInvalid(f"turn {n}: role {turn.get('role')!r} is not one of "
                                  f"{', '.join(ROLES)}")
    if not isinstance(turn.get("content"), str):
        raise ConversationInvalid(f"turn {n}: content must be text")
    if "name" in turn and not isinstance(turn["name"], str):
        raise ConversationInvalid(f"turn {n}: name must be text")
    return {key: turn[key] for key in ("role", "content", *OPTIONAL_KEYS) if key in turn}


def shared_turns(conversations: list[list[dict]]) -> int:
    """How many leading turns every conversation has in common (shown once, above the
    replies); each conversation keeps at least one turn of its own."""
    if len(conversations) < 2 or not all(conversations):
        return 0
    limit = min(len(c) for c in conversations) - 1
    n = 0
    while n < limit and all(c[n] == conversations[0][n] for c in conversations[1:]):
        n += 1
    return n


def role_label(turn: dict, labels: dict | None = None) -> str:
    role = turn.get("role", "")
    label = (labels or DEFAULT_ROLE_LABELS).get(role) or DEFAULT_ROLE_LABELS.get(role, role)
    return f"{label} ({turn['name']})" if turn.get("name") else label


def transcript(turns: list[dict], labels: dict | None = None) -> str:
    """The turns as readable text, each under its role label (what an LLM judge reads)."""
    return "\n\n".join(f"{role_label(t, labels)}: {t.get('content', '')}" for t in turns)
