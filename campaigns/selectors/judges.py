"""Reads for LLM judges: a run's items, the prompt of one item, the estimate before a run."""
from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.db.models import QuerySet

from ..judging.prompts import (
    answers_json_schema,
    check_judgeable,
    compile_template,
    default_template,
    prompt_context,
    prompt_hash,
    render_prompt,
)
from ..models import Item, Judge, JudgeOutput
from ..schema import TaskSchema, parse_schema

API_KEY_ENV = re.compile(r"^[A-Z][A-Z0-9_]{0,90}_API_KEY$")
CHARS_PER_TOKEN = 4  # a rough rule for English text; the endpoint's usage has the real counts


def judge_base_url(judge: Judge) -> str:
    """The judge's endpoint: its own, else the LLM_JUDGE_LOCAL_URL setting ("" when neither)."""
    return judge.base_url or getattr(settings, "LLM_JUDGE_LOCAL_URL", "")


def judge_api_key(judge: Judge) -> str | None:
    """The key from the environment variable (or setting) the judge names; never stored.

    Only names ending in _API_KEY are read, so a judge cannot send SECRET_KEY or database
    credentials to the endpoint it names."""
    name = judge.api_key_env
    if not name or not API_KEY_ENV.match(name):
        return None
    return os.environ.get(name) or getattr(settings, name, None) or None


def judge_template_text(judge: Judge, schema: TaskSchema | None = None) -> str:
    """The researcher's template, or the default generated from the campaign's schema."""
    if judge.prompt_template.strip():
        return judge.prompt_template
    schema = schema or parse_schema(judge.campaign.schema)
    return default_template(campaign=judge.campaign, schema=schema)


@dataclass(frozen=True)
class PromptPreview:
    template: str
    prompt: str
    prompt_hash: str
    json_schema: dict


def judge_prompt_preview(judge: Judge, item: Item) -> PromptPreview:
    """The exact prompt a run would send for this item, its hash and the answer's schema."""
    schema = parse_schema(judge.campaign.schema)
    text = judge_template_text(judge, schema)
    prompt = render_prompt(compile_template(text), prompt_context(
        campaign=judge.campaign, schema=schema, item_data=item.data,
        external_id=item.external_id))
    return PromptPreview(text, prompt, prompt_hash(prompt), answers_json_schema(schema, item.data))


def judge_scope_items(judge: Judge, scope: dict) -> QuerySet[Item]:
    """The items of a run: all, one system's, or a fixed random sample of n (the same n items
    for every run of this judge, so a repeated sample run resumes instead of drawing anew)."""
    items = Item.objects.filter(campaign_id=judge.campaign_id).order_by("id")
    if "system" in scope:
        return items.filter(system=scope["system"])
    if "sample" in scope:
        ids = list(items.values_list("id", flat=True))
        chosen = random.Random(judge.pk).sample(ids, min(int(scope["sample"]), len(ids)))
        return items.filter(id__in=chosen)
    return items


def _expected_output_tokens(judge: Judge, schema: TaskSchema, item: Item | None) -> float:
    seen = list(JudgeOutput.objects.filter(judge=judge, completion_tokens__isnull=False)
                .order_by("-id").values_list("completion_tokens", flat=True)[:200])
    if seen:
        return sum(seen) / len(seen)
    rng = random.Random(0)
    data = item.data if item else None
    example = {q.id: q.example_answer(data, rng) for q in schema.questions}
    return len(json.dumps(example)) / CHARS_PER_TOKEN + 10


def judge_run_estimate(judge: Judge, scope: dict) -> dict:
    """Requests and tokens a run would need (outputs already stored cost nothing), and the
    cost when the judge has prices. Prompt tokens are counted as characters / 4."""
    schema = parse_schema(judge.campaign.schema)
    check_judgeable(schema)  # refused even before the campaign has items
    template = compile_template(judge_template_text(judge, schema))
    stored = set(JudgeOutput.objects.filter(judge=judge, failed=False)
                 .values_list("item_id", "prompt_hash", "sample"))
    units = to_request = prompt_chars = 0
    first = None
    for item in judge_scope_items(judge, scope).only("id", "external_id", "data").iterator():
        first = first or item
        prompt = render_prompt(template, prompt_context(
            campaign=judge.campaign, schema=schema, item_data=item.data,
            external_id=item.external_id))
        digest = prompt_hash(prompt)
        for sample in range(judge.samples):
            units += 1
            if (item.pk, digest, sample) not in stored:
                to_request += 1
                prompt_chars += len(prompt)
    prompt_tokens = round(prompt_chars / CHARS_PER_TOKEN)
    completion_tokens = round(to_request * _expected_output_tokens(judge, schema, first))
    cost = None
    if judge.price_input_per_million is not None and judge.price_output_per_million is not None:
        cost = float(round((judge.price_input_per_million * prompt_tokens
                            + judge.price_output_per_million * completion_tokens)
                           / Decimal(1_000_000), 4))
    return {"units": units, "stored": units - to_request, "to_request": to_request,
            "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "cost": cost}
