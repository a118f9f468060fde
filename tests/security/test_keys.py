"""Key theft: a researcher cannot get the operator's key sent anywhere but the operator's
provider, and no key is ever shown back (pages, API, errors, stored outputs)."""
import json

import pytest
from django.urls import reverse

from campaigns.judging.providers import encrypt_key
from campaigns.models import Judge, JudgeOutput
from campaigns.services.judge_runs import judge_run_execute, judge_run_start

from .conftest import declare
from .servers import echo_key

pytestmark = pytest.mark.django_db
OPERATOR_KEY = "sk-operator-0123456789"


@pytest.fixture(autouse=True)
def _operator_key(monkeypatch, settings):
    monkeypatch.setenv("OPENAI_API_KEY", OPERATOR_KEY)
    settings.LLM_JUDGE_REQUEST_RETRIES = 0
    settings.LLM_JUDGE_TIMEOUT_SECONDS = 3


def _run(judge):
    run = judge_run_start(judge=judge, scope={"sample": 2}, enqueue=False)
    judge_run_execute(run_id=run.pk)
    run.refresh_from_db()
    return run


@pytest.mark.parametrize("body", [
    {"api_key_env": "OPENAI_API_KEY"},
    {"provider": "openai", "base_url": "{thief}"},
    {"base_url": "{thief}"},
    {"base_url": "{thief}", "api_key_env": "OPENAI_API_KEY"},
])
def test_a_researcher_cannot_aim_the_operators_key_at_their_own_endpoint(
        api, movie, probe, settings, body):
    thief = probe(echo_key)
    settings.LLM_PROVIDERS = {"openai": {"base_url": "https://api.openai.com/v1",
                                         "key_env": "OPENAI_API_KEY"}}
    body = {k: v.format(thief=thief.base_url) for k, v in body.items()}
    response = api.post(f"/api/campaigns/{movie.slug}/judges/",
                        {"name": "thief", "model": "m", **body}, format="json")
    assert response.status_code == 400, response.json()
    assert not Judge.objects.exists()
    assert thief.requests == 0


def test_starting_a_judge_that_cannot_run_is_refused_with_the_reason(api, movie, probe):
    thief = probe(echo_key)
    Judge.objects.create(campaign=movie, name="old", base_url=thief.base_url, model="m")
    response = api.post(f"/api/campaigns/{movie.slug}/judges/old/runs/", {"scope": "all"},
                        format="json")
    assert response.status_code == 409
    assert "https" in response.json()["message"]
    assert thief.requests == 0


def test_an_allowed_host_resolving_to_loopback_is_refused_where_it_connects(
        movie, probe, settings):
    thief = probe(echo_key)
    settings.LLM_OWN_KEY_HOSTS = ["localhost"]
    judge = Judge.objects.create(campaign=movie, name="rebind", model="m",
                                 base_url=f"https://localhost:{thief.port}/v1",
                                 api_key_encrypted=encrypt_key("sk-own-1"))
    run = _run(judge)
    assert run.status == "failed" and "loopback" in run.error
    assert thief.requests == 0


def test_an_echoed_key_is_never_stored_shown_or_exported(
        researcher_client, api, movie, probe, settings):
    echo = probe(echo_key)
    declare(settings, "echo", echo, key_env="OPENAI_API_KEY")
    judge = Judge.objects.create(campaign=movie, name="echo", provider="echo", model="m")
    run = _run(judge)
    assert echo.arrived[0][1] == f"Bearer {OPERATOR_KEY}"  # the operator's own provider
    raw = list(JudgeOutput.objects.values_list("raw_output", "failure_reason"))
    assert raw and all(OPERATOR_KEY not in f"{a} {b}" for a, b in raw)
    assert "[the API key]" in raw[0][0]
    assert OPERATOR_KEY not in run.error
    listing = api.get(f"/api/campaigns/{movie.slug}/judges/")
    assert OPERATOR_KEY not in listing.content.decode()
    assert "OPENAI_API_KEY" not in listing.content.decode()  # nor its variable


def test_an_own_key_is_not_in_the_admin_page_the_api_or_the_database_in_clear(
        researcher_client, api, movie):
    response = api.post(f"/api/campaigns/{movie.slug}/judges/", {
        "name": "own", "model": "gpt-4o-mini", "base_url": "https://api.openai.com/v1",
        "api_key": "sk-researcher-777"}, format="json")
    assert response.status_code == 201, response.json()
    judge = Judge.objects.get()
    for text in (json.dumps(response.json()),
                 api.get(f"/api/campaigns/{movie.slug}/judges/").content.decode(),
                 researcher_client.get(reverse("admin:campaigns_judge_change",
                                               args=[judge.pk])).content.decode(),
                 judge.api_key_encrypted):
        assert "sk-researcher-777" not in text


def test_a_providers_token_budget_per_researcher_refuses_a_run_that_would_exceed_it(
        api, movie, probe, settings):
    from campaigns.models import JudgeRun

    server = probe(echo_key)
    declare(settings, "metered", server, budget_tokens=50)
    judge = Judge.objects.create(campaign=movie, name="m", provider="metered", model="m")
    response = api.post(f"/api/campaigns/{movie.slug}/judges/m/runs/", {"scope": "all"},
                        format="json")
    assert response.status_code == 409 and "50" in response.json()["message"]
    assert not JudgeRun.objects.filter(judge=judge).exists() and server.requests == 0
