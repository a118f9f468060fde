"""A judge's response as answers: parse the JSON object, then the same validation as humans'."""
from __future__ import annotations

import json
import re
from typing import Any

from ..schema import AnswerInvalid, TaskSchema
from ..schema.scoring import answer_values

MAX_OUTPUT_CHARS = 50_000
FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


class OutputInvalid(ValueError):
    """The response gives no valid answers; the message is the failure reason stored."""


def parse_output(content: str | None) -> dict:
    """The JSON object in a response: the whole text, else a ``` fence, else the outermost
    {...}; anything else (prose, a list, a truncated object) is invalid."""
    if not content or not content.strip():
        raise OutputInvalid("the response is empty")
    if len(content) > MAX_OUTPUT_CHARS:
        raise OutputInvalid(f"the response is longer than {MAX_OUTPUT_CHARS} characters")
    candidates = [content]
    fenced = FENCE.search(content)
    if fenced:
        candidates.append(fenced.group(1))
    start, end = content.find("{"), content.rfind("}")
    if 0 <= start < end:
        candidates.append(content[start:end + 1])
    error = None
    for text in candidates:
        try:
            parsed = json.loads(text)
        except ValueError as exc:
            error = error or exc
            continue
        if not isinstance(parsed, dict):
            raise OutputInvalid("the response is JSON but not an object")
        return parsed
    raise OutputInvalid(f"the response is not valid JSON ({error})")


def output_answers(schema: TaskSchema, item: Any, content: str | None) -> dict[str, Any]:
    """The annotation values (validated answers, control outcome) of a response, or
    OutputInvalid naming every problem, as a worker's page would show them."""
    parsed = parse_output(content)
    try:
        return answer_values(schema, item, parsed, None)
    except AnswerInvalid as exc:
        problems = "; ".join(f"{path}: {message}" if path else message
                             for path, message in exc.errors.items())
        raise OutputInvalid(f"the answers break the schema: {problems}") from None
