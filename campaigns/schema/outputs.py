"""Items with several system outputs: reading them, and the order one assignment shows them in.

An item may carry `outputs: [{"system": ..., "text": ...}, ...]` (several systems' outputs for
one input); an output may instead carry `"messages"`, a conversation (its continuation of a
shared context, see conversations.py). Each assignment shows them in its own order, drawn from
a seed made of the assignment's stored token and the item's id, so the order a worker saw can
be recomputed; the kinds that judge outputs also store that order in every answer.
"""
from __future__ import annotations

import hashlib
import random
from typing import Any

from .base import AnswerInvalid
from .contract import Capability
from .conversations import ConversationInvalid, read_conversation, shared_turns, transcript

OUTPUTS = "outputs"
CSV_PREFIX = "output:"
MAX_OUTPUTS = 20


def check_outputs(value: Any) -> str | None:
    """What is wrong with an item's `outputs` value, or None when it is usable."""
    return read_outputs(value)[1]


def read_outputs(value: Any, transcripts: str = "messages") -> tuple[Any, str | None]:
    """An imported `outputs` value as stored (conversations read as `transcripts` says), and
    what is wrong with it (None when it is usable)."""
    if not isinstance(value, list) or not value:
        return value, 'expected a list of {"system": ..., "text": ...} objects'
    if len(value) > MAX_OUTPUTS:
        return value, f"at most {MAX_OUTPUTS} outputs per item"
    systems, stored = [], []
    for i, output in enumerate(value, start=1):
        if not isinstance(output, dict) or set(output) not in ({"system", "text"},
                                                               {"system", "messages"}):
            return value, (f'output {i}: expected exactly the keys "system" and "text" (or '
                           '"system" and "messages")')
        system = output["system"]
        if not isinstance(system, str) or not system.strip() or len(system) > 200:
            return value, f"output {i}: the system must be a name of 1 to 200 characters"
        if "messages" in output:
            try:
                output = {"system": system, "messages": read_conversation(output["messages"],
                                                                          transcripts)}
            except ConversationInvalid as exc:
                return value, f"output {i}: messages: {exc}"
        elif not isinstance(output["text"], str) or not output["text"].strip():
            return value, f"output {i}: the text must be non-empty text"
        systems.append(system.strip())
        stored.append(output)
    repeated = sorted({s for s in systems if systems.count(s) > 1})
    if repeated:
        return value, f"systems must be distinct per item; repeated: {', '.join(repeated)}"
    return stored, None


def output_text(output: Any, labels: dict | None = None) -> str:
    """One output as plain text: its text, or its conversation as a role-labelled transcript."""
    if not isinstance(output, dict):
        return ""
    if isinstance(output.get("messages"), list):
        return transcript(output["messages"], labels)
    return str(output.get("text", ""))


def outputs_prompt(outputs: list, labels: list[str]) -> str:
    """Outputs as a judge reads them, each under the label the worker page gives it; the turns
    conversations share are written once, before them (role labels: an output's
    `role_labels`, which the judge's prompt adds as the campaign names them)."""
    conversations = [o.get("messages") if isinstance(o, dict) else None for o in outputs]
    roles = next((o.get("role_labels") for o in outputs if isinstance(o, dict)), None)
    shared = shared_turns(conversations) if all(isinstance(c, list) for c in conversations) else 0
    parts = []
    if shared:
        parts.append(f"The conversation so far:\n{transcript(conversations[0][:shared], roles)}")
    for label, output in zip(labels, outputs, strict=False):
        if shared:
            parts.append(f"{label} (how the conversation continues):\n"
                         f"{transcript(output['messages'][shared:], roles)}")
        else:
            parts.append(f"{label}:\n{output_text(output, roles)}")
    return "\n\n".join(parts)


def outputs_from_columns(record: dict) -> dict:
    """A flat (CSV) record's `output:<system>` columns folded into `outputs`, in column order.

    Empty cells are left out (an item need not carry every system); the record is returned
    unchanged when it has no such column.
    """
    columns = [k for k in record if isinstance(k, str) and k.startswith(CSV_PREFIX)]
    if not columns:
        return record
    folded = {k: v for k, v in record.items() if k not in columns}
    folded[OUTPUTS] = [
        {"system": k[len(CSV_PREFIX):].strip(), "text": record[k]} for k in columns
        if record[k] is not None and str(record[k]).strip()]
    return folded


def item_systems(data: dict | None) -> list[str]:
    """The systems of an item's outputs, in the stored order ([] without outputs)."""
    outputs = (data or {}).get(OUTPUTS)
    if not isinstance(outputs, list):
        return []
    return [o["system"] for o in outputs if isinstance(o, dict) and "system" in o]


def order_seed(token: str, item_id: Any) -> str:
    """The seed of one assignment's order for one item (recomputable from stored rows)."""
    return f"{token}:{item_id}"


def shuffled(n: int, seed: str) -> list[int]:
    """A permutation of range(n) drawn from `seed` (the same seed, the same permutation)."""
    rng = random.Random(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big"))
    order = list(range(n))
    rng.shuffle(order)
    return order


def options_order(n: int, seed: str, question_id: str) -> list[int]:
    """The positions of a question's n options as one assignment shows them (questions that
    shuffle their options; each question of a page gets its own order)."""
    return shuffled(n, f"{seed}:{question_id}")


class ShuffledOptions:
    """What a question kind with `options` and a `shuffle_options` setting shares: the order one
    assignment shows its options in, the widget in that order, and the check of a stored order."""

    def shuffles_options(self) -> bool:
        return self.shuffle_options

    def option_order(self, seed: str) -> list[int]:
        """The options' positions as this seed shows them (the same seed, the same order)."""
        return options_order(len(self.options), seed, self.id)

    def shown_widget(self, extra: dict, seed: str) -> dict:
        return {**extra, "choices": [extra["choices"][i] for i in self.option_order(seed)]}

    def shown_values(self, seed: str) -> list[str]:
        return [self.options[i].value for i in self.option_order(seed)]

    def clean_order(self, order: Any, values: list[str], noun: str) -> list[str]:
        """A posted order: each of the question's values once, else AnswerInvalid."""
        if not isinstance(order, list) or sorted(map(str, order)) != sorted(values):
            raise AnswerInvalid({f"{self.id}.order": f"The order must list each {noun} once."})
        return [str(v) for v in order]


def shown_data(data: dict | None, seed: str | None) -> dict:
    """The item's data with its outputs in the order this seed shows them (as stored: None)."""
    data = dict(data or {})
    outputs = data.get(OUTPUTS)
    if seed is None or not isinstance(outputs, list):
        return data
    data[OUTPUTS] = [outputs[i] for i in shuffled(len(outputs), seed)]
    return data


def shown_answers(schema: Any, answers: dict, item: Any, token: str) -> dict:
    """Raw answers with what this assignment showed recorded by each question: the outputs'
    order (questions that judge outputs) and the options' order (questions that shuffle them).
    The server's order: whatever the browser posted for it is replaced."""
    seed = order_seed(token, item.pk)
    systems = item_systems(shown_data(item.data, seed))
    by_id = {q.id: q for q in schema.questions}
    shown = {}
    for qid, raw in answers.items():
        question = by_id.get(qid)
        if question is not None and systems and question.supports(Capability.JUDGES_OUTPUTS):
            raw = question.record_order(raw, systems)
        if question is not None and question.shuffles_options():
            raw = question.record_shown(raw, seed)
        shown[qid] = raw
    return shown


def judged_answers(schema: Any, answers: dict, item_data: dict | None) -> dict:
    """A judge's answers with what its prompt showed recorded as a worker's page would: the
    outputs in the item's stored order (the prompt's), whatever order the judge named; a
    question asked once per output takes the judge's answers keyed by response label."""
    systems = item_systems(item_data)
    by_id = {q.id: q for q in schema.questions}
    judged = {}
    for qid, raw in answers.items():
        question = by_id.get(qid)
        if question is not None and systems and question.supports(Capability.JUDGES_OUTPUTS):
            raw = (question.from_judge(raw, systems) if question.for_each_output
                   else question.record_order(raw, systems))
        judged[qid] = raw
    return judged


def needs_shown_answers(schema: Any) -> bool:
    """Whether answers to this schema record what the page showed (see shown_answers)."""
    return any(q.supports(Capability.JUDGES_OUTPUTS) or q.shuffles_options()
               for q in schema.questions)
