"""LLM judges: their settings checked, created, and the demo's judge (runs: judge_runs.py)."""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from ..errors import Conflict, ServiceError
from ..judging.prompts import PromptTemplateInvalid, compile_template
from ..models import Campaign, Judge
from ..selectors.judges import API_KEY_ENV

PARAMETERS = {"temperature": (float, 0, 2), "top_p": (float, 0, 1),
              "max_tokens": (int, 1, 200_000), "seed": (int, -(2**31), 2**31 - 1),
              "presence_penalty": (float, -2, 2), "frequency_penalty": (float, -2, 2)}
LIMITS = {"samples": (1, 20), "concurrency": (1, 64), "requests_per_minute": (1, 1_000_000),
          "max_attempts": (1, 10)}
URL_CHECK = URLValidator(schemes=["http", "https"])


def judge_problems(values: dict[str, Any]) -> dict[str, str]:
    """Every problem of a judge's settings, keyed by field ({} when they are fine)."""
    problems: dict[str, str] = {}
    name = values.get("name")
    if (not isinstance(name, str) or not name.strip() or len(name) > 200
            or any(c == "/" or ord(c) < 32 for c in name)):
        problems["name"] = "a name of 1-200 characters without slashes (it is part of URLs)"
    url = values.get("base_url") or ""
    try:
        if url:
            URL_CHECK(url)
    except ValidationError:
        problems["base_url"] = "an http:// or https:// base URL (or empty for the local setting)"
    model = values.get("model")
    if not isinstance(model, str) or not model.strip() or len(model) > 200:
        problems["model"] = "a model name of 1-200 characters"
    key = values.get("api_key_env") or ""
    if key and not (isinstance(key, str) and API_KEY_ENV.match(key)):
        problems["api_key_env"] = ("the NAME of an environment variable ending in _API_KEY "
                                   "(e.g. OPENAI_API_KEY), never the key itself")
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
            compile_template(template)
        except PromptTemplateInvalid as exc:
            problems["prompt_template"] = str(exc)
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


JUDGE_FIELDS = ("name", "base_url", "model", "api_key_env", "parameters", "samples",
                "concurrency", "requests_per_minute", "max_attempts", "response_format",
                "prompt_template", "price_input_per_million", "price_output_per_million")


def judge_create(*, campaign: Campaign, **values: Any) -> Judge:
    """A new judge; ServiceError 400 naming every bad field, 409 if the name is taken."""
    values = {k: v for k, v in values.items() if k in JUDGE_FIELDS and v is not None}
    problems = judge_problems(values)
    if problems:
        raise ServiceError("The judge's settings are invalid.", code="judge_invalid",
                           extra={"errors": problems})
    values["name"] = values["name"].strip()
    if Judge.objects.filter(campaign=campaign, name=values["name"]).exists():
        raise Conflict(f"This campaign already has a judge named {values['name']!r}.")
    return Judge.objects.create(campaign=campaign, **values)


DEMO_JUDGE = "local-llm"


def judge_demo_ensure(*, campaign: Campaign) -> tuple[Judge, bool]:
    """The demo's judge: no base URL of its own, so it uses LLM_JUDGE_LOCAL_URL, which is
    unset by default: nothing is called until someone points it at a local server."""
    return Judge.objects.get_or_create(
        campaign=campaign, name=DEMO_JUDGE,
        defaults={"base_url": "", "model": getattr(settings, "LLM_JUDGE_LOCAL_MODEL", ""),
                  "parameters": {"temperature": 0, "max_tokens": 1024, "seed": 1},
                  "concurrency": 2, "requests_per_minute": 120})
