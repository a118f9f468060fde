"""A judge's response as answers: parse the JSON object, then the same validation as humans'."""
from __future__ import annotations

import json
import re
from typing import Any

from ..schema import AnswerInvalid, TaskSchema
from ..schema.outputs import judged_answers
from ..schema.scoring import answer_values

MAX_OUTPUT_CHARS = 50_000
FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


class OutputInvalid(ValueError):
    """The response gives no valid answers; the message is the failure reason stored."""


def storable_text(text: str | None) -> str:
    """A response as stored: NUL characters (the database refuses them) written as \\0, and
    no more than MAX_OUTPUT_CHARS (the output is failed for its length before that)."""
    text = (text or "")[:MAX_OUTPUT_CHARS].replace("\x00", "\\0")
    return text.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate becomes "?"


def parse_output(content: str | None) -> dict:
    """The JSON object in a response: the whole text, else a ``` fence, else the outermost
    {...}; anything else (prose, a list, a truncated object, nesting deeper than Python
    parses, a NUL character anywhere) is invalid."""
    if not content or not content.strip():
        raise OutputInvalid("the response is empty")
    if len(content) > MAX_OUTPUT_CHARS:
        raise OutputInvalid(f"the response is longer than {MAX_OUTPUT_CHARS} characters")
    if "\x00" in content or "\\u0000" in content:
        raise OutputInvalid("the response contains a NUL character")
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
        except RecursionError:
            raise OutputInvalid("the response is JSON nested too deeply") from None
        if not isinstance(parsed, dict):
            raise OutputInvalid("the response is JSON but not an object")
        try:
            json.dumps(parsed, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise OutputInvalid("the response has an unpaired surrogate") from None
        return parsed
    raise OutputInvalid(f"the response is not valid JSON ({error})")


def output_answers(schema: TaskSchema, item: Any, content: str | None) -> dict[str, Any]:
    """The annotation values (validated answers, control outcome) of a response, or
    OutputInvalid naming every problem, as a worker's page would show them."""
    parsed = parse_output(content)
    try:
        return answer_values(schema, item, judged_answers(schema, parsed, item.data), None)
    except RecursionError:
        raise OutputInvalid("the answers are nested too deeply") from None
    except AnswerInvalid as exc:
        problems = "; ".join(f"{path}: {message}" if path else message
                             for path, message in exc.errors.items())
        raise OutputInvalid(f"the answers break the schema: {problems}") from None
