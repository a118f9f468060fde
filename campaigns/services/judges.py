"""LLM judges: their settings checked, created, and the demo's judge (runs: judge_runs.py)."""
from __future__ import annotations

from typing import Any

from django.conf import settings

from ..errors import Conflict, ServiceError
from ..judging.prompts import PromptTemplateInvalid, check_template
from ..judging.providers import encrypt_key, own_url_problem, providers
from ..models import Campaign, Judge

PARAMETERS = {"temperature": (float, 0, 2), "top_p": (float, 0, 1),
              "max_tokens": (int, 1, 200_000), "seed": (int, -(2**31), 2**31 - 1),
              "presence_penalty": (float, -2, 2), "frequency_penalty": (float, -2, 2)}
LIMITS = {"samples": (1, 20), "concurrency": (1, 64), "requests_per_minute": (1, 1_000_000),
          "max_attempts": (1, 10)}
MAX_KEY_CHARS = 500


def judge_problems(values: dict[str, Any]) -> dict[str, str]:
    """Every problem of a judge's settings, keyed by field ({} when they are fine)."""
    problems: dict[str, str] = {}
    name = values.get("name")
    if (not isinstance(name, str) or not name.strip() or len(name) > 200
            or any(c == "/" or ord(c) < 32 for c in name)):
        problems["name"] = "a name of 1-200 characters without slashes (it is part of URLs)"
    problems.update(_endpoint_problems(values))
    problems.update(_parameter_problems(values.get("parameters") or {}))
    for name_, (low, high) in LIMITS.items():
        value = values.get(name_)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not low <= value <= high):
            problems[name_] = f"a whole number from {low} to {high}"
    fmt = values.get("response_format")
    if fmt is not None and fmt not in Judge.ResponseFormat.values:
        problems["response_format"] = f"one of {', '.join(Judge.ResponseFormat.values)}"
    template = values.get("prompt_template") or ""
    if template:
        try:
            check_template(template)
        except PromptTemplateInvalid as exc:
            problems["prompt_template"] = str(exc)
    return problems


def _endpoint_problems(values: dict[str, Any]) -> dict[str, str]:
    """A provider of the operator's, or the researcher's own https URL on an allowed host;
    an own key only with an own URL (a provider's key is the operator's)."""
    problems: dict[str, str] = {}
    name, url, key = (values.get("provider") or "", values.get("base_url") or "",
                      values.get("api_key") or "")
    offered = providers()
    model = values.get("model")
    if name and url:
        problems["base_url"] = "give a provider or a base URL of your own, not both"
    elif name:
        provider = offered.get(name) if isinstance(name, str) else None
        if provider is None:
            problems["provider"] = f"one of this instance's providers: {', '.join(offered)}"
        elif provider.models and model not in provider.models:
            problems["model"] = f"one of the models {name} offers: {', '.join(provider.models)}"
        if key:
            problems["api_key"] = ("a provider's judge uses the operator's key; your own key "
                                   "goes with a base URL of your own")
    elif url:
        problem = own_url_problem(url) if isinstance(url, str) else "a URL"
        if problem:
            problems["base_url"] = problem
    else:
        problems["provider"] = (f"choose one of this instance's providers ({', '.join(offered)})"
                                " or give a base URL and a key of your own")
    if key and (not isinstance(key, str) or len(key) > MAX_KEY_CHARS
                or any(ord(c) < 33 for c in key)):
        problems["api_key"] = f"a key of at most {MAX_KEY_CHARS} characters without spaces"
    return problems


def _parameter_problems(parameters: Any) -> dict[str, str]:
    if not isinstance(parameters, dict):
        return {"parameters": "an object such as {\"temperature\": 0, \"max_tokens\": 512}"}
    problems = {}
    for key, value in parameters.items():
        if key not in PARAMETERS:
            problems[f"parameters.{key}"] = f"unknown; known: {', '.join(PARAMETERS)}"
            continue
        kind, low, high = PARAMETERS[key]
        ok = (not isinstance(value, bool) and isinstance(value, int | float)
              and (kind is float or isinstance(value, int)) and low <= value <= high)
        if not ok:
            problems[f"parameters.{key}"] = f"a {kind.__name__} from {low} to {high}"
    return problems


JUDGE_FIELDS = ("name", "provider", "base_url", "model", "parameters", "samples",
                "concurrency", "requests_per_minute", "max_attempts", "response_format",
                "prompt_template", "price_input_per_million", "price_output_per_million")


def judge_create(*, campaign: Campaign, api_key: str = "", **values: Any) -> Judge:
    """A new judge; ServiceError 400 naming every bad field, 409 if the name is taken. Neither
    a provider nor a base URL means the provider "local"; an own `api_key` is stored
    encrypted and never returned."""
    values = {k: v for k, v in values.items() if k in JUDGE_FIELDS and v is not None}
    if not values.get("provider") and not values.get("base_url") and "local" in providers():
        values["provider"] = "local"  # neither given: the operator's local server
    problems = judge_problems({**values, "api_key": api_key})
    if problems:
        raise ServiceError("The judge's settings are invalid.", code="judge_invalid",
                           extra={"errors": problems})
    values["name"] = values["name"].strip()
    if Judge.objects.filter(campaign=campaign, name=values["name"]).exists():
        raise Conflict(f"This campaign already has a judge named {values['name']!r}.")
    if api_key:
        values["api_key_encrypted"] = encrypt_key(api_key)
    return Judge.objects.create(campaign=campaign, **values)


DEMO_JUDGE = "local-llm"


def judge_demo_ensure(*, campaign: Campaign) -> tuple[Judge, bool]:
    """The demo's judge: the provider "local" (LLM_JUDGE_LOCAL_URL, unset by default: nothing
    is called until someone points it at a local server)."""
    return Judge.objects.get_or_create(
        campaign=campaign, name=DEMO_JUDGE,
        defaults={"provider": "local", "base_url": "",
                  "model": getattr(settings, "LLM_JUDGE_LOCAL_MODEL", ""),
                  "parameters": {"temperature": 0, "max_tokens": 1024, "seed": 1},
                  "concurrency": 2, "requests_per_minute": 120})
