"""The judge's prompt: a default template generated from the campaign, rendered per item.

The template is a Django template rendered by an engine of its own: no autoescaping (the
prompt is plain text), no loaders (no {% include %} or {% extends %} of files), only the tags
and filters of template_library.py, and a context of plain strings and dicts only (the
item's fields, the campaign's texts and the schema's sections), so a researcher's template
can format text but never reach code or data beyond that item and campaign.

It is also bounded, so a template can never hold a process: loops do not nest and go over at
most MAX_LOOP_ITEMS values, and a render stops as soon as it has rendered MAX_RENDER_STEPS
nodes or LLM_JUDGE_MAX_PROMPT_CHARS characters (PromptTooLarge, a PromptTemplateInvalid).
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

from django.conf import settings
from django.template import Context, Engine, Node, NodeList, Template, TemplateSyntaxError
from django.template.defaulttags import ForNode, IfNode

from ..schema import Capability, TaskSchema
from ..schema.conversations import transcript
from ..schema.kinds.lines import split_segments
from ..schema.outputs import OUTPUTS
from .template_library import FILTERS, TAGS

MAX_TEMPLATE_CHARS = 50_000
MAX_LOOP_ITEMS = 1_000
MAX_RENDER_STEPS = 200_000


class _PromptEngine(Engine):
    default_builtins = ["campaigns.judging.template_library"]  # nothing of Django's beyond


ENGINE = _PromptEngine(dirs=[], app_dirs=False, loaders=[], libraries={}, autoescape=False,
                       string_if_invalid="", debug=False)

PREAMBLE = (
    "You are an expert annotator in a human evaluation study of generated text. Below are the "
    "instructions the human annotators were given, the item to judge and the questions they "
    "answered. Answer every question as a careful annotator would, following the instructions "
    "and the scales exactly. Where the instructions mention the web page (sliders, buttons, "
    "clicking), give the same judgment in the JSON answer described at the end instead."
)


class PromptTemplateInvalid(ValueError):
    """The researcher's template does not compile; the message names the problem."""


class PromptTooLarge(PromptTemplateInvalid):
    """A render went over its budget; the message says which."""


class NotJudgeable(ValueError):
    """The schema has a question whose kind an LLM judge cannot answer; the message names it."""


def check_judgeable(schema: TaskSchema) -> None:
    """NotJudgeable naming each question whose kind lacks the LLM_JUDGE capability."""
    missing = [q for q in schema.questions if not q.supports(Capability.LLM_JUDGE)]
    if missing:
        named = ", ".join(f"{q.id!r} (a {q.kind} question)" for q in missing)
        raise NotJudgeable(f"An LLM judge cannot answer {named}: the kind gives a judge no "
                           "prompt section or answer schema.")


def check_template(text: str) -> Template:
    """The compiled template, or PromptTemplateInvalid: too long, an unknown tag or filter
    (the message lists the available ones) or a loop inside a loop."""
    if len(text) > MAX_TEMPLATE_CHARS:
        raise PromptTemplateInvalid(f"the prompt template is longer than {MAX_TEMPLATE_CHARS:,} "
                                    "characters")
    try:
        template = ENGINE.from_string(text)
    except TemplateSyntaxError as exc:
        raise PromptTemplateInvalid(
            f"the prompt template does not compile: {exc} (tags: {', '.join(TAGS)}; filters: "
            f"{', '.join(FILTERS)})") from None
    for loop in template.nodelist.get_nodes_by_type(ForNode):
        if loop.nodelist_loop.get_nodes_by_type(ForNode):
            raise PromptTemplateInvalid("a {% for %} inside another {% for %} is not available "
                                        "in a prompt template")
    return template


def compile_template(text: str) -> Template:
    """check_template's template, with every node counted against the render budget."""
    template = check_template(text)
    _budget_nodes(template.nodelist)
    return template


class _Budgeted(Node):
    """Counts a node's renders and the characters it adds, and stops the render over budget."""

    child_nodelists = ()

    def __init__(self, inner: Node):
        self.inner, self.token, self.origin = inner, inner.token, inner.origin
        self.leaf = not isinstance(inner, IfNode) and not any(
            getattr(inner, name, None) for name in inner.child_nodelists)

    def render(self, context) -> str:
        budget = context.render_context.get(_Budgeted, None)
        if budget is None:
            budget = context.render_context[_Budgeted] = [0, 0]
        if isinstance(self.inner, ForNode):
            values = self.inner.sequence.resolve(context, ignore_failures=True)
            if hasattr(values, "__len__") and len(values) > MAX_LOOP_ITEMS:
                raise PromptTooLarge(f"a {{% for %}} goes over {len(values):,} values; at "
                                     f"most {MAX_LOOP_ITEMS:,} are allowed")
        budget[0] += 1
        if budget[0] > MAX_RENDER_STEPS:
            raise PromptTooLarge(f"the prompt template takes more than {MAX_RENDER_STEPS:,} "
                                 "steps to render")
        text = self.inner.render_annotated(context)
        if self.leaf:
            budget[1] += len(text)
            if budget[1] > settings.LLM_JUDGE_MAX_PROMPT_CHARS:
                raise PromptTooLarge("the prompt is longer than "
                                     f"{settings.LLM_JUDGE_MAX_PROMPT_CHARS:,} characters")
        return text


def _budget_nodes(nodelist: NodeList) -> None:
    for node in nodelist:
        if isinstance(node, IfNode):
            for _, branch in node.conditions_nodelists:
                _budget_nodes(branch)
        else:
            for name in node.child_nodelists:
                child = getattr(node, name, None)
                if isinstance(child, NodeList):
                    _budget_nodes(child)
    nodelist[:] = [_Budgeted(node) for node in nodelist]


def _literal(text: str) -> str:
    """Text from the schema placed in a template as it is (braces never become tags)."""
    if "{" in text or "%" in text:
        return "{% verbatim %}" + text + "{% endverbatim %}"
    return text


def default_template(*, campaign: Any, schema: TaskSchema) -> str:
    """The template a judge uses unless the researcher wrote one: preamble, the campaign's
    instructions and worked examples, each display field, the questions, the answer format."""
    parts = [PREAMBLE]
    if campaign.instructions.strip():
        parts.append("# Instructions\n\n{{ campaign.instructions }}")
    if campaign.examples.strip():
        parts.append("# Worked examples\n\n{{ campaign.examples }}")
    if all(d.field.isidentifier() for d in schema.display):
        fields = []
        for d in schema.display:
            head = f"## {_literal(d.label or d.field)}"
            if d.help:
                head += f"\n{_literal(d.help)}"
            fields.append(f"{head}\n{_literal(d.prefix)}{{{{ display_fields.{d.field} }}}}"
                          f"{_literal(d.suffix)}")
        item = "\n\n".join(fields)
    else:
        item = "{{ display }}"
    parts.append(f"# The item to judge\n\n{item}")
    parts.append("# Questions\n\n{{ questions }}")
    parts.append("# Your answer\n\n{{ answer_format }}")
    return "\n\n".join(parts) + "\n"


def _field_text(value: Any, fmt: str, split: str, labels: dict | None = None) -> str:
    if fmt == "chat" and isinstance(value, list):
        return transcript(value, labels)
    if fmt == "lines":
        return "\n".join(f"{n}. {s}" for n, s in enumerate(split_segments(value, split), 1))
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else str(value)


def answer_format(schema: TaskSchema, item_data: dict | None) -> str:
    """The plain-text instruction for the JSON object, one line per question key."""
    check_judgeable(schema)
    lines = ["Answer with one JSON object and nothing else (no prose, no code fence), "
             "with these keys:"]
    for q in schema.questions:
        optional = "" if q.required else " (optional)"
        lines.append(f'- "{q.id}"{optional}: {q.prompt_answer(item_data)}')
    return "\n".join(lines)


def answers_json_schema(schema: TaskSchema, item_data: dict | None = None) -> dict:
    """The JSON Schema of a campaign's answers (one item's when `item_data` is given): each
    question's kind gives its part; required questions are required keys."""
    check_judgeable(schema)
    return {
        "type": "object",
        "properties": {q.id: q.json_schema(item_data) for q in schema.questions},
        "required": [q.id for q in schema.questions if q.required],
        "additionalProperties": False,
    }


def prompt_context(*, campaign: Any, schema: TaskSchema, item_data: dict,
                   external_id: str = "") -> dict:
    """Everything a template may use; plain strings and dicts only."""
    check_judgeable(schema)
    data = {str(k): v for k, v in (item_data or {}).items()}
    labels = schema.role_labels.model_dump()
    shown = {d.field: _field_text(data.get(d.field), d.format, d.split, labels)
             for d in schema.display}
    display = "\n\n".join(
        f"## {d.label or d.field}\n{d.prefix}{shown[d.field]}{d.suffix}" for d in schema.display)
    return {
        "campaign": {"name": campaign.name, "instructions": campaign.instructions.strip(),
                     "examples": campaign.examples.strip()},
        "item": data,
        "item_id": external_id,
        "display_fields": shown,
        "display": display,
        "questions": "\n\n".join(q.prompt_section(_with_role_labels(item_data, labels))
                                   for q in schema.questions),
        "answer_format": answer_format(schema, item_data),
    }


def _with_role_labels(item_data: dict | None, labels: dict) -> dict | None:
    """The item as the questions' prompt sections read it: conversation outputs carry the
    campaign's role labels, so their transcripts name the roles as the item's fields do."""
    outputs = (item_data or {}).get(OUTPUTS)
    if not isinstance(outputs, list):
        return item_data
    return {**item_data, OUTPUTS: [{**o, "role_labels": labels} if isinstance(o, dict) else o
                                   for o in outputs]}


def render_prompt(template: Template, context: dict) -> str:
    """The exact prompt text sent to the judge (runs of blank lines folded to one)."""
    text = template.render(Context(context, autoescape=False))
    lines, blank = [], 0
    for line in text.strip().splitlines():
        blank = blank + 1 if not line.strip() else 0
        if blank <= 1:
            lines.append(line.rstrip())
    return "\n".join(lines) + "\n"


def prompt_hash(text: str) -> str:
    """sha256 of the prompt text: stored with every output, it names the exact prompt."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
