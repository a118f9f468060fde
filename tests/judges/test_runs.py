"""Judge runs against a stand-in OpenAI-compatible endpoint over real HTTP on 127.0.0.1."""
import json

import pytest
from django.db import connection

from campaigns.models import Annotation, JudgeOutput, JudgeRun, Worker
from campaigns.schema import parse_schema, validate_answers
from campaigns.selectors.analysis import campaign_statistics
from campaigns.services.judge_runs import (
    judge_run_cancel,
    judge_run_execute,
    judge_run_resume,
    judge_run_start,
)
from campaigns.services.judges import judge_create

from .conftest import SEEDS, valid_reply
from .standin import Reply

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("celery_eager")]


@pytest.fixture(autouse=True)
def _quick_retries(settings):
    settings.LLM_JUDGE_MAX_BACKOFF_SECONDS = 0.05
    settings.LLM_JUDGE_REQUEST_RETRIES = 3
    settings.LLM_JUDGE_TIMEOUT_SECONDS = 5


def _judge(campaign, server, **extra):
    values = {"name": "stand-in", "provider": server.provider, "model": "standin-1",
              "parameters": {"temperature": 0, "max_tokens": 400}, "concurrency": 4,
              "requests_per_minute": 60_000, **extra}
    return judge_create(campaign=campaign, **values)


def _run(judge, scope=None):
    run = judge_run_start(judge=judge, scope=scope or {"scope": "all"}, enqueue=False)
    judge_run_execute(run_id=run.pk)
    run.refresh_from_db()
    return run


@pytest.mark.parametrize("slug", SEEDS)
def test_a_full_run_over_a_seed_campaign_stores_every_answer_as_the_judges_annotation(
        seeds, standin, slug):
    campaign = seeds[slug]
    server = standin()
    run = _run(_judge(campaign, server))
    items = campaign.items.count()
    assert (run.status, run.total, run.done, run.failed, run.remaining) == (
        "done", items, items, 0, 0)
    assert server.requests == run.requests == items
    judge = Worker.objects.get(campaign=campaign, platform="llm")
    assert judge.platform_id == "stand-in"
    annotations = Annotation.objects.filter(worker=judge)
    assert annotations.count() == items
    outputs = JudgeOutput.objects.filter(judge__campaign=campaign)
    assert outputs.filter(failed=False, annotation__isnull=False).count() == items
    sent = {o.item.external_id: o for o in outputs.select_related("item")}
    for _prompt, body in zip(server.prompts(), server.bodies, strict=True):
        assert body["model"] == "standin-1" and body["temperature"] == 0
        assert body["response_format"]["type"] == "json_schema"
    one = outputs.select_related("annotation", "item").first()
    assert one.annotation.answers == one.answers
    schema = parse_schema(campaign.schema)
    assert validate_answers(schema, json.loads(one.raw_output), one.item.data) == one.answers
    assert one.prompt_tokens > 0 and one.usage["prompt_tokens"] == one.prompt_tokens
    assert len(sent) == items
    # Each prompt's hash is stored with its output.
    from campaigns.judging.prompts import prompt_hash
    assert {prompt_hash(p) for p in server.prompts()} == set(outputs.values_list(
        "prompt_hash", flat=True))


def _scripted(script_by_n, default=valid_reply):
    def script(body, n):
        reply = script_by_n.get(n)
        return reply if reply is not None else default(body, n)
    return script


def test_invalid_outputs_are_kept_raw_marked_failed_with_the_reason_and_retried(seeds, standin):
    campaign = seeds["movie-continuation"]
    # Requests in order: malformed JSON, a refusal, answers outside the scale, then valid.
    server = standin(_scripted({0: Reply('{"coherence": 4, "sentiment": '),
                                1: Reply(None, refusal="I cannot rate this."),
                                2: Reply(json.dumps({"coherence": 9, "sentiment": 2}))}))
    judge = _judge(campaign, server, concurrency=1, max_attempts=3)
    run = _run(judge, {"sample": 2})
    assert (run.status, run.done, run.failed) == ("done", 1, 1)
    failed = list(JudgeOutput.objects.filter(judge=judge, failed=True).order_by("id"))
    assert [o.attempt for o in failed] == [1, 2, 3]
    assert "not valid JSON" in failed[0].failure_reason
    assert failed[0].raw_output == '{"coherence": 4, "sentiment": '
    assert "refused: I cannot rate this." in failed[1].failure_reason
    assert "coherence: Choose one of 1, 2, 3, 4, 5" in failed[2].failure_reason
    assert all(o.annotation is None and o.answers is None for o in failed)
    # Failed outputs never become annotations: only the valid item has one.
    assert Annotation.objects.filter(worker__platform="llm").count() == 1
    # A second run asks nothing again: one item is answered, the other used its attempts.
    before = server.requests
    again = _run(judge, {"sample": 2})
    assert (again.status, again.done, again.failed, server.requests) == ("done", 1, 1, before)
    # The statistics list the item whose attempts all failed, with the last attempt's reason;
    # the item answered on a later attempt is not listed.
    listed = [f for f in campaign_statistics(campaign=campaign, n_boot=0)["judge_failed_outputs"]
              if f["judge"] == judge.name]
    answered = Annotation.objects.get(worker__platform="llm").item.external_id
    assert [f["item"] for f in listed] == [failed[0].item.external_id]
    assert listed[0]["item"] != answered
    assert listed[0]["reason"] == f"run output: {failed[2].failure_reason}"


def test_429_with_retry_after_and_500s_are_retried_with_backoff(seeds, standin, settings):
    settings.LLM_JUDGE_MAX_BACKOFF_SECONDS = 2
    campaign = seeds["translation-acceptability"]
    server = standin(_scripted({0: Reply(status=429, headers={"Retry-After": "0.3"},
                                         body='{"error": "slow down"}'),
                                1: Reply(status=500, body="oops"),
                                2: Reply(status=503, body="busy")}))
    run = _run(_judge(campaign, server, concurrency=1), {"sample": 2})
    assert (run.status, run.done, run.failed) == ("done", 2, 0)
    assert server.requests == run.requests == 5
    assert server.arrivals[1] - server.arrivals[0] >= 0.29  # Retry-After honoured


def test_a_slow_answer_times_out_and_is_asked_again(seeds, standin, settings):
    settings.LLM_JUDGE_TIMEOUT_SECONDS = 0.3
    server = standin(_scripted({0: Reply(delay=1.0, content="{}")}))
    run = _run(_judge(seeds["movie-continuation"], server, concurrency=1), {"sample": 1})
    assert (run.status, run.done, server.requests) == ("done", 1, 2)


def test_a_run_whose_endpoint_is_down_ends_failed_with_the_reason(seeds, standin):
    server = standin()
    server.close()
    judge = judge_create(campaign=seeds["movie-continuation"], name="gone",
                         provider=server.provider, model="m")
    run = _run(judge, {"sample": 3})
    assert run.status == "failed"
    assert "the endpoint is down" in run.error and "cannot connect" in run.error
    assert not JudgeOutput.objects.filter(judge=judge).exists()


def test_a_refused_key_fails_the_run_at_once(seeds, standin):
    server = standin(lambda body, n: Reply(status=401, body='{"error": "bad key"}'))
    run = _run(_judge(seeds["movie-continuation"], server), {"sample": 3})
    assert run.status == "failed" and "HTTP 401" in run.error
    assert server.requests <= 4  # the requests already in the pool, never retried


@pytest.mark.django_db(transaction=True)
def test_cancel_and_resume_never_ask_twice(seeds, standin):
    campaign = seeds["comparative-rubric"]
    cancel = {}

    def script(body, n):
        if n == 5:  # cancel mid-run from another connection, as the API or admin would
            judge_run_cancel(run=JudgeRun.objects.get(pk=cancel["run"]))
            connection.close()
        return Reply(valid_reply(body, n).content, delay=0.05)

    server = standin(script)
    judge = _judge(campaign, server, concurrency=2)
    run = judge_run_start(judge=judge, scope={"scope": "all"}, enqueue=False)
    cancel["run"] = run.pk
    judge_run_execute(run_id=run.pk)
    run.refresh_from_db()
    items = campaign.items.count()
    assert run.status == "cancelled"
    stopped_at = server.requests
    assert 6 <= stopped_at < items
    assert JudgeOutput.objects.filter(judge=judge).count() == stopped_at  # in flight: kept
    judge_run_resume(run=run, enqueue=False)
    judge_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert (run.status, run.done, run.remaining) == ("done", items, 0)
    assert server.requests == items  # nothing asked twice
    keys = [(b["messages"][0]["content"]) for b in server.bodies]
    assert len(set(keys)) == items


def test_concurrency_and_the_rate_limit_are_respected(seeds, standin):
    server = standin(lambda body, n: Reply(valid_reply(body, n).content, delay=0.4))
    run = _run(_judge(seeds["translation-acceptability"], server, concurrency=3,
                      requests_per_minute=600), {"sample": 12})
    assert run.done == 12
    assert server.max_in_flight == 3
    # 600 per minute: starts 0.1 s apart, so 11 arrivals span at least a second (less a
    # little scheduling jitter between the client's start and the server's arrival).
    arrivals = server.arrivals
    assert all(arrivals[i + 10] - arrivals[i] >= 0.95 for i in range(len(arrivals) - 10))


def test_without_a_schema_mode_the_prompt_alone_asks_for_json(seeds, standin):
    def script(body, n):
        assert "response_format" not in body
        return Reply('Sure! ```json\n{"coherence": 3, "sentiment": 5}\n```')

    server = standin(script)
    run = _run(_judge(seeds["movie-continuation"], server, response_format="none"),
               {"sample": 2})
    assert run.done == 2
    assert 'Answer with one JSON object' in server.prompts()[0]


def test_an_endpoint_without_json_schema_mode_gets_the_plain_instruction(seeds, standin):
    def script(body, n):
        if "response_format" in body:
            return Reply(status=400, body='{"error": "response_format json_schema is not '
                                          'supported"}')
        return Reply('{"coherence": 3, "sentiment": 5}')

    server = standin(script)
    run = _run(_judge(seeds["movie-continuation"], server, concurrency=1), {"sample": 2})
    assert (run.status, run.done) == ("done", 2)
    assert server.requests == 3


def test_the_providers_key_is_read_from_its_variable_and_sent_as_a_bearer(
        seeds, standin, monkeypatch, settings):
    monkeypatch.setenv("STANDIN_API_KEY", "sk-test-123")
    server = standin().declare(settings, key_env="STANDIN_API_KEY")
    _run(_judge(seeds["movie-continuation"], server), {"sample": 1})
    assert server.auth == ["Bearer sk-test-123"]


def test_samples_are_separate_annotations_and_the_estimate_counts_them(seeds, standin):
    campaign = seeds["movie-continuation"]
    server = standin()
    judge = _judge(campaign, server, samples=2, price_input_per_million=1,
                   price_output_per_million=2)
    run = judge_run_start(judge=judge, scope={"sample": 3}, enqueue=False)
    assert run.estimate["units"] == run.estimate["to_request"] == 6 == run.total
    assert run.estimate["cost"] > 0
    judge_run_execute(run_id=run.pk)
    assert Annotation.objects.filter(worker__platform="llm").count() == 6
    again = judge_run_start(judge=judge, scope={"sample": 3}, enqueue=False)
    assert again.estimate["to_request"] == 0 and again.estimate["stored"] == 6
    assert server.requests == 6


def test_a_system_scope_judges_only_that_systems_items(seeds, standin):
    campaign = seeds["translation-acceptability"]
    system = campaign.items.exclude(system="").values_list("system", flat=True).first()
    server = standin()
    run = _run(_judge(campaign, server), {"system": system})
    assert run.total == run.done == campaign.items.filter(system=system).count() > 0
    judged = Annotation.objects.filter(worker__platform="llm")
    assert set(judged.values_list("item__system", flat=True)) == {system}


def test_a_run_whose_heartbeat_stopped_is_queued_again_and_finishes(seeds, standin):
    from datetime import timedelta

    from django.utils import timezone

    from campaigns.services.judge_runs import judge_runs_sweep_stale

    server = standin()
    judge = _judge(seeds["movie-continuation"], server)
    run = judge_run_start(judge=judge, scope={"sample": 3}, enqueue=False)
    JudgeRun.objects.filter(pk=run.pk).update(
        status="running", attempts=1, heartbeat_at=timezone.now() - timedelta(hours=1))
    assert judge_runs_sweep_stale() == 1  # eager here: the re-queued run runs at once
    run.refresh_from_db()
    assert (run.status, run.done, run.attempts) == ("done", 3, 2)
    assert judge_runs_sweep_stale() == 0


def test_a_large_run_starts_from_a_sampled_estimate_and_the_worker_makes_it_exact(
        seeds, standin, monkeypatch):
    monkeypatch.setattr("campaigns.selectors.judges.ESTIMATE_SAMPLE_ITEMS", 3)
    campaign = seeds["movie-continuation"]
    n_items = campaign.items.count()
    assert n_items > 3
    server = standin()
    run = judge_run_start(judge=_judge(campaign, server), scope={"scope": "all"}, enqueue=False)
    assert run.estimate["sampled"] == 3
    assert run.estimate["units"] == run.total == n_items  # counted exactly, not scaled
    judge_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "done" and run.done == n_items == server.requests
    assert run.estimate["sampled"] is None and run.estimate["to_request"] == n_items


def test_a_sampled_run_over_the_budget_on_its_exact_estimate_fails_before_any_request(
        seeds, standin, monkeypatch, settings):
    monkeypatch.setattr("campaigns.selectors.judges.ESTIMATE_SAMPLE_ITEMS", 3)
    server = standin().declare(settings, budget_tokens=10_000_000)
    run = judge_run_start(judge=_judge(seeds["movie-continuation"], server),
                          scope={"scope": "all"}, enqueue=False)
    server.declare(settings, budget_tokens=10)  # the operator lowers it before the worker runs
    judge_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "failed" and "10 the provider" in run.error
    assert server.requests == 0
