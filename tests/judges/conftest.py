"""Fixtures for judge tests: the stand-in endpoint and the seed campaigns."""
import json
import random

import pytest

from campaigns.services.seeds import seed_campaigns_load

from .standin import Reply, StandIn

SEEDS = ("comparative-rubric", "movie-continuation", "translation-acceptability")


def answer_from_schema(schema: dict, rng: random.Random):
    """A value the JSON Schema accepts, drawn with rng: the stand-in's judge reads only the
    schema the platform sent, so a valid answer proves the schema says enough."""
    kind = schema.get("type")
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if kind == "object":
        return {key: answer_from_schema(sub, rng) for key, sub in schema["properties"].items()
                if key in schema.get("required", [])}
    if kind == "array":
        n = schema.get("minItems", 1)
        return [answer_from_schema(schema["items"], rng) for _ in range(n)]
    if kind in ("integer", "number"):
        low, high = schema.get("minimum", 0), schema.get("maximum", 10)
        step = schema.get("multipleOf", 1)
        return low + step * rng.randint(0, int((high - low) // step))
    if kind == "string":
        return "fine"
    raise AssertionError(f"unexpected schema {schema}")


def valid_reply(body: dict, n: int) -> Reply:
    schema = body["response_format"]["json_schema"]["schema"]
    return Reply(json.dumps(answer_from_schema(schema, random.Random(n))))


@pytest.fixture
def standin(settings):
    """standin(script) -> a started stand-in endpoint declared as an operator provider (its
    name: server.provider), shut down after the test."""
    started = []

    def start(script=valid_reply):
        server = StandIn(script).start().declare(settings)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


@pytest.fixture
def seeds(owner):
    return {c.slug: c for c, _ in seed_campaigns_load(owner=owner, slugs=SEEDS)}
