"""Reads for LLM judges: a run's items, the prompt of one item, the estimate before a run."""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from decimal import Decimal

from django.db.models import F, QuerySet, Sum

from ..judging.prompts import (
    answers_json_schema,
    check_judgeable,
    compile_template,
    default_template,
    prompt_context,
    prompt_hash,
    render_prompt,
)
from ..judging.providers import Provider, decrypt_key, own_url_problem, provider_key, providers
from ..models import Item, Judge, JudgeOutput, JudgeRun
from ..schema import TaskSchema, parse_schema

CHARS_PER_TOKEN = 4  # a rough rule for English text; the endpoint's usage has the real counts


class JudgeUnusable(ValueError):
    """The judge cannot send requests; the message says what to change (never a key)."""


@dataclass(frozen=True)
class JudgeEndpoint:
    base_url: str
    api_key: str | None = field(repr=False)
    provider: Provider | None


def judge_endpoint(judge: Judge) -> JudgeEndpoint:
    """Where the judge's requests go and with which key: its provider's URL and the operator's
    key, or its own allowed URL and its own key. JudgeUnusable says why neither works."""
    if judge.provider:
        provider = providers().get(judge.provider)
        if provider is None:
            raise JudgeUnusable(f"The provider {judge.provider!r} is not offered by this "
                                "instance any more; choose another.")
        if not provider.base_url:
            raise JudgeUnusable(f"The provider {provider.name!r} has no base URL: the operator "
                                "sets it in LLM_PROVIDERS (the local one: LLM_JUDGE_LOCAL_URL, "
                                "e.g. http://127.0.0.1:11434/v1 for Ollama).")
        return JudgeEndpoint(provider.base_url, provider_key(provider), provider)
    if not judge.base_url:
        raise JudgeUnusable("The judge has no endpoint: choose one of the operator's "
                            "providers, or give a base URL and a key of your own.")
    problem = own_url_problem(judge.base_url)
    if problem:
        raise JudgeUnusable(f"The judge's base URL cannot be used: {problem}.")
    if not judge.api_key_encrypted:
        raise JudgeUnusable("A judge with a base URL of its own needs a key of your own (the "
                            "operator's keys only go to the operator's providers).")
    key = decrypt_key(judge.api_key_encrypted)
    if key is None:
        raise JudgeUnusable("The judge's stored key cannot be read (the instance's encryption "
                            "secret changed); enter the key again.")
    return JudgeEndpoint(judge.base_url, key, None)


def judge_endpoint_problem(judge: Judge) -> str:
    """Why the judge cannot run ("" when it can)."""
    try:
        judge_endpoint(judge)
    except JudgeUnusable as exc:
        return str(exc)
    return ""


def judge_budget_problem(judge: Judge, estimate: dict) -> str:
    """Why a run of this size would exceed the provider's token budget for the campaign's
    owner ("" when it would not, or the provider has no budget)."""
    provider = providers().get(judge.provider) if judge.provider else None
    if provider is None or provider.budget_tokens is None:
        return ""
    used = JudgeRun.objects.filter(
        judge__provider=provider.name, judge__campaign__owner_id=judge.campaign.owner_id,
    ).aggregate(n=Sum(F("prompt_tokens") + F("completion_tokens")))["n"] or 0
    wanted = estimate.get("prompt_tokens", 0) + estimate.get("completion_tokens", 0)
    if used + wanted > provider.budget_tokens:
        return (f"This run needs about {wanted:,} tokens and you have used {used:,} of the "
                f"{provider.budget_tokens:,} the provider {provider.name!r} allows each "
                "researcher.")
    return ""


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


# The start of a run answers at once whatever its size: above this many items its estimate
# renders an even sample of them, and the worker computes the exact one before any request.
ESTIMATE_SAMPLE_ITEMS = 400


def judge_run_estimate(judge: Judge, scope: dict, *, exact: bool = False) -> dict:
    """Requests and tokens a run would need (outputs already stored cost nothing), and the
    cost when the judge has prices. Prompt tokens are counted as characters / 4. Over
    ESTIMATE_SAMPLE_ITEMS items (unless `exact`), prompts are rendered for an even sample of
    the items and scaled up; "sampled" then says how many items were rendered."""
    schema = parse_schema(judge.campaign.schema)
    check_judgeable(schema)  # refused even before the campaign has items
    template = compile_template(judge_template_text(judge, schema))
    ids = list(judge_scope_items(judge, scope).values_list("id", flat=True))
    total = len(ids)
    sampled = not exact and total > ESTIMATE_SAMPLE_ITEMS
    if sampled:
        step = total / ESTIMATE_SAMPLE_ITEMS
        ids = [ids[int(i * step)] for i in range(ESTIMATE_SAMPLE_ITEMS)]
    stored = set(JudgeOutput.objects.filter(judge=judge, failed=False, item_id__in=ids)
                 .values_list("item_id", "prompt_hash", "sample"))
    to_request = prompt_chars = 0
    first = None
    items = Item.objects.filter(id__in=ids).order_by("id").only("id", "external_id", "data")
    for item in items.iterator():
        first = first or item
        prompt = render_prompt(template, prompt_context(
            campaign=judge.campaign, schema=schema, item_data=item.data,
            external_id=item.external_id))
        digest = prompt_hash(prompt)
        for sample in range(judge.samples):
            if (item.pk, digest, sample) not in stored:
                to_request += 1
                prompt_chars += len(prompt)
    scale = total / len(ids) if sampled else 1
    to_request = round(to_request * scale)
    prompt_tokens = round(prompt_chars * scale / CHARS_PER_TOKEN)
    completion_tokens = round(to_request * _expected_output_tokens(judge, schema, first))
    cost = None
    if judge.price_input_per_million is not None and judge.price_output_per_million is not None:
        cost = float(round((judge.price_input_per_million * prompt_tokens
                            + judge.price_output_per_million * completion_tokens)
                           / Decimal(1_000_000), 4))
    units = total * judge.samples
    return {"units": units, "stored": units - to_request, "to_request": to_request,
            "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "cost": cost,
            "sampled": len(ids) if sampled else None}
