"""LLM judges over the API: create and list, start a run (202), poll it, cancel it; the
judge's answers then appear in /stats/ and in exports beside the humans'."""
import json

import pytest

from campaigns.models import Judge, JudgeRun
from campaigns.services.exports import export_job_create, export_job_run
from campaigns.services.judgments import JudgmentRow, judgments_import
from campaigns.services.seeds import seed_campaigns_load
from tests.judges.conftest import valid_reply
from tests.judges.standin import StandIn

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


@pytest.fixture
def server(settings):
    started = StandIn(valid_reply).start().declare(settings)
    yield started
    started.close()


@pytest.fixture
def movie(owner):
    (campaign, _), = seed_campaigns_load(owner=owner, slugs=("movie-continuation",))
    return campaign


def _create(api, campaign, server, **extra):
    body = {"name": "llama", "provider": server.provider, "model": "llama3.1:8b",
            "parameters": {"temperature": 0, "max_tokens": 300},
            "samples": 1, "concurrency": 4, "requests_per_minute": 6000, **extra}
    return api.post(f"/api/campaigns/{campaign.slug}/judges/", body, format="json")


def test_a_judge_is_created_201_and_listed_without_any_key(api, movie, server, monkeypatch,
                                                          settings):
    monkeypatch.setenv("LOCAL_API_KEY", "sk-secret-value")
    server.declare(settings, key_env="LOCAL_API_KEY")
    response = _create(api, movie, server)
    assert response.status_code == 201, response.json()
    listed = api.get(f"/api/campaigns/{movie.slug}/judges/").json()
    assert [j["name"] for j in listed] == ["llama"]
    assert listed[0]["provider"] == server.provider and listed[0]["problem"] == ""
    assert listed[0]["api_key_stored"] is False
    assert "sk-secret-value" not in json.dumps(listed)
    assert "LOCAL_API_KEY" not in json.dumps(listed)


def test_an_own_key_is_stored_encrypted_and_never_returned(api, movie, server):
    response = _create(api, movie, server, provider="", base_url="https://api.openai.com/v1",
                       api_key="sk-own-secret-123")
    assert response.status_code == 201, response.json()
    assert "sk-own-secret-123" not in json.dumps(response.json())
    listed = api.get(f"/api/campaigns/{movie.slug}/judges/").json()
    assert listed[0]["api_key_stored"] is True and "api_key" not in listed[0]
    assert "sk-own-secret-123" not in json.dumps(listed)
    stored = Judge.objects.get().api_key_encrypted
    assert stored and "sk-own-secret-123" not in stored


@pytest.mark.parametrize(("field", "value"), [
    ("api_key_env", "OPENAI_API_KEY"), ("provider", "nope"), ("api_key", "sk-with-provider"),
    ("base_url", "file:///etc"),
    ("parameters", {"temperature": 5}), ("parameters", {"logit_bias": {}}),
    ("concurrency", 0), ("samples", 50), ("prompt_template", "{% if %}"), ("name", "a/b"),
])
def test_bad_settings_are_a_400_naming_the_field_and_create_nothing(api, movie, server, field,
                                                                    value):
    response = _create(api, movie, server, **{field: value})
    assert response.status_code == 400, response.json()
    extra = response.json()["extra"]
    errors = extra.get("errors") or extra.get("fields") or extra  # an unknown field: "fields"
    assert any(key.startswith(field) for key in errors), errors
    assert not Judge.objects.exists()


def test_a_taken_name_is_a_409(api, movie, server):
    assert _create(api, movie, server).status_code == 201
    assert _create(api, movie, server).status_code == 409


def test_another_researchers_campaign_is_a_404(other_api, movie, server):
    assert _create(other_api, movie, server).status_code == 404
    assert other_api.get(f"/api/campaigns/{movie.slug}/judges/").status_code == 404


def _humans(campaign):
    """Two raters' past answers for every item (imported as site accounts)."""
    for rater, score in (("r1", 2), ("r2", 4)):
        rows = [JudgmentRow(n, item.external_id, rater,
                            repr({"coherence": score, "sentiment": 6 - score}))
                for n, item in enumerate(campaign.items.all(), start=1)]
        judgments_import(campaign=campaign, rows=rows, platform="account")


def test_a_run_starts_202_runs_and_its_judge_appears_in_stats_and_exports(
        api, movie, server, django_capture_on_commit_callbacks):
    _humans(movie)
    _create(api, movie, server)
    runs = f"/api/campaigns/{movie.slug}/judges/llama/runs/"
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(runs, {"scope": "all"}, format="json")
    assert response.status_code == 202, response.json()
    started = response.json()
    assert started["status"] == "queued" and started["total"] == movie.items.count()
    polled = api.get(f"{runs}{started['id']}/").json()
    assert (polled["status"], polled["done"], polled["failed"], polled["remaining"]) == (
        "done", movie.items.count(), 0, 0)
    assert polled["prompt_tokens"] > 0
    stats = api.get(f"/api/campaigns/{movie.slug}/stats/").json()
    assert {row["judge"] for row in stats["judges"]} == {"llama"}
    assert {row["question"] for row in stats["judges"]} == {"coherence", "sentiment"}
    assert all(row["n_items"] == movie.items.filter(control="").count()
               for row in stats["judges"])
    # Human-only figures leave the judge out: the agreement counts the two raters only.
    assert stats["agreement"] and all(row["n_raters"] == 2 for row in stats["agreement"])
    from django.core.files.storage import storages

    def exported(**options):
        job = export_job_create(campaign=movie, requested_by=None, fmt="jsonl",
                                options=options, enqueue=False)
        export_job_run(job_id=job.pk)
        job.refresh_from_db()
        return [json.loads(x) for x in storages["exports"].open(job.file).read().splitlines()]

    # A plain export holds the humans' answers; the judge's come on request.
    plain = exported()
    assert plain and all(r["worker_platform"] != "llm" for r in plain)
    lines = exported(worker_platform="all")
    judged = [r for r in lines if r["worker_platform"] == "llm"]
    assert all("judge" not in r for r in lines if r["worker_platform"] != "llm")
    assert len(judged) == movie.items.count()
    first = judged[0]
    assert first["judge"]["name"] == "llama" and first["judge"]["model"] == "llama3.1:8b"
    assert len(first["judge"]["prompt_hash"]) == 64
    assert json.loads(first["judge"]["raw_output"])["coherence"] == first["answers"]["coherence"]


@pytest.mark.parametrize("body", [{}, {"scope": "some"}, {"sample": 0},
                                  {"scope": "all", "system": "x"}, {"bogus": 1}])
def test_a_bad_scope_is_a_400_and_starts_nothing(api, movie, server, body):
    _create(api, movie, server)
    response = api.post(f"/api/campaigns/{movie.slug}/judges/llama/runs/", body, format="json")
    assert response.status_code == 400, response.json()
    assert not JudgeRun.objects.exists()


def test_a_judge_without_an_endpoint_is_refused_409(api, movie, server, settings):
    settings.LLM_JUDGE_LOCAL_URL = ""
    _create(api, movie, server, provider="local")
    response = api.post(f"/api/campaigns/{movie.slug}/judges/llama/runs/", {"scope": "all"},
                        format="json")
    assert response.status_code == 409
    assert "LLM_JUDGE_LOCAL_URL" in response.json()["message"]


def test_a_queued_run_is_cancelled_then_cancelling_again_is_a_409(api, movie, server):
    _create(api, movie, server)
    runs = f"/api/campaigns/{movie.slug}/judges/llama/runs/"
    run = api.post(runs, {"sample": 3}, format="json").json()  # on_commit: never enqueued
    assert api.post(runs, {"sample": 3}, format="json").status_code == 409  # one at a time
    cancelled = api.post(f"{runs}{run['id']}/cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert api.post(f"{runs}{run['id']}/cancel/").status_code == 409
    assert api.get(f"{runs}999999/").status_code == 404
    assert server.requests == 0
