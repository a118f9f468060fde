"""Conversations in imported items: `chat` display fields and outputs that are conversations.

A conversation arrives as a list (JSON, JSONL), as a JSON-encoded cell (CSV, TSV), or in one of
the transcript shapes an import may name (`transcripts`): "hh-rlhf" (Anthropic HH-RLHF's
`\\n\\nHuman: ...\\n\\nAssistant: ...` strings) or "sharegpt" (`{"from", "value"}` turns). A
malformed turn is refused with its row, its field and the turn's number.
"""
from __future__ import annotations

from typing import Any

from ..schema import TaskSchema
from ..schema.conversations import TRANSCRIPTS, ConversationInvalid, read_conversation
from ..schema.outputs import OUTPUTS, read_outputs
from .records import Collector, ImportRejected, RowError, json_cell

# An HH-RLHF row: the conversation a crowdworker preferred and the other one.
HH_RLHF_OUTPUTS = ("chosen", "rejected")


def check_transcripts(transcripts: str) -> str:
    """The import option as given, or ImportRejected naming the ones there are."""
    transcripts = transcripts or "messages"
    if transcripts not in TRANSCRIPTS:
        raise ImportRejected([RowError(None, "", f"unknown transcripts {transcripts!r}; use "
                                                 f"one of {', '.join(TRANSCRIPTS)}")])
    return transcripts


def hh_rlhf_record(record: dict, row: int, transcripts: str) -> dict:
    """An HH-RLHF row as an item: its two transcripts become the outputs "chosen" and
    "rejected" (the page shows them in each assignment's own order), and a row without an id
    is given its row number (the published files carry none)."""
    if transcripts != "hh-rlhf" or OUTPUTS in record \
            or not all(key in record for key in HH_RLHF_OUTPUTS):
        return record
    item = {k: v for k, v in record.items() if k not in HH_RLHF_OUTPUTS}
    item.setdefault("id", f"hh-{row}")
    item[OUTPUTS] = [{"system": key, "messages": record[key]} for key in HH_RLHF_OUTPUTS]
    return item


def read_chat_fields(data: dict, row: int, line: int | None, schema: TaskSchema,
                     transcripts: str, out: Collector) -> None:
    """Replace each `chat` display field's value, and the outputs, by their stored form;
    report what cannot be read."""
    for d in schema.display:
        if d.format != "chat" or data.get(d.field) in (None, ""):
            continue
        try:
            data[d.field] = read_conversation(data[d.field], transcripts)
        except ConversationInvalid as exc:
            out.add(row, d.field, str(exc), line)
    if OUTPUTS not in data:
        return
    value = data[OUTPUTS]
    if isinstance(value, str) and value.lstrip().startswith("["):  # a JSON-encoded CSV cell
        value = json_cell(value, row, line, OUTPUTS, out)
        if value is None:
            return
    if schema.outputs_format == "chat" and isinstance(value, list):
        value = [_text_as_messages(o, transcripts) for o in value]
    value, problem = read_outputs(value, transcripts)
    if problem:
        out.add(row, OUTPUTS, problem, line)
    else:
        data[OUTPUTS] = value


def _text_as_messages(output: Any, transcripts: str) -> Any:
    """A chat campaign's output given as text (an `output:<system>` CSV cell) that holds a
    conversation: a JSON list, or a transcript in the shape the import names."""
    if not isinstance(output, dict) or not isinstance(output.get("text"), str):
        return output
    text = output["text"]
    if text.lstrip().startswith("[") or transcripts == "hh-rlhf":
        return {"system": output.get("system"), "messages": text}
    return output
