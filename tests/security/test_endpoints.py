"""A hostile endpoint: one deadline for the whole request, a size cap counted after
decompression, and a bad answer is one failed output with its reason, not an aborted run."""
import resource
import time

import pytest

from annotate.http import egress
from campaigns.models import Judge, JudgeOutput
from campaigns.services.judge_runs import judge_run_execute, judge_run_start

from .conftest import declare
from .servers import completion, gzip_bomb, send, trickle

pytestmark = pytest.mark.django_db


def _post(server, **limits):
    return egress.post(f"{server.base_url}/chat/completions", body=b"{}", headers={},
                       **{"deadline_seconds": 1.0, "max_bytes": 2_000_000, **limits})


def test_a_trickling_answer_ends_at_the_deadline_not_per_read(probe, settings):
    slow = probe(trickle(seconds=8, every=0.2))
    settings.EGRESS_ALLOWED_ORIGINS = [f"http://127.0.0.1:{slow.port}"]
    started = time.monotonic()
    with pytest.raises(egress.EgressFailed, match="within 1s"):
        _post(slow)
    assert time.monotonic() - started < 1.5


def test_a_slow_name_lookup_counts_against_the_deadline(monkeypatch):
    def slow_lookup(*args, **kwargs):
        time.sleep(5)
        raise OSError("too late")

    monkeypatch.setattr(egress.socket, "getaddrinfo", slow_lookup)
    started = time.monotonic()
    with pytest.raises(egress.EgressFailed, match="did not resolve in time"):
        egress.post("https://slow-dns.example/v1", body=b"{}", headers={}, deadline_seconds=1,
                    max_bytes=1000)
    assert time.monotonic() - started < 1.5


def test_a_gzip_bomb_stops_at_the_cap_after_decompression(probe, settings):
    bomb = gzip_bomb(decompressed_bytes=1_000_000_000)
    server = probe(bomb)
    settings.EGRESS_ALLOWED_ORIGINS = [f"http://127.0.0.1:{server.port}"]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(egress.AnswerTooLarge):
        _post(server, deadline_seconds=10)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert bomb.compressed < 2_000_000 and grown_mb < 50


def _run(judge):
    run = judge_run_start(judge=judge, scope={"sample": 3}, enqueue=False)
    judge_run_execute(run_id=run.pk)
    run.refresh_from_db()
    return run


@pytest.mark.parametrize(("content", "reason"), [
    ("[" * 20_000 + "]" * 20_000, "nested too deeply"),
    ('{"coherence": ' * 3000 + "1" + "}" * 3000, "nested too deeply"),
    ('{"coherence": 3, "sentiment": "\\u0000"}', "NUL character"),
    ('{"coherence": 3, "sentiment": 2}\x00', "NUL character"),
    ('{"coherence": 3, "sentiment": "\\ud800"}', "unpaired surrogate"),
    ("x" * 60_000, "longer than 50000"),
])
def test_a_hostile_answer_is_one_failed_output_with_its_reason(movie, probe, settings, content,
                                                               reason):
    hostile = probe(lambda h: send(h, 200, completion(content)))
    declare(settings, "hostile", hostile)
    run = _run(Judge.objects.create(campaign=movie, name="h", provider="hostile", model="m",
                                    max_attempts=1))
    assert (run.status, run.done, run.failed) == ("done", 0, 3), run.error
    outputs = JudgeOutput.objects.all()
    assert outputs.count() == 3 and all(reason in o.failure_reason for o in outputs)
    assert all(len(o.raw_output) <= 50_000 and "\x00" not in o.raw_output for o in outputs)


def test_a_deeply_nested_body_is_one_failed_output_not_an_aborted_run(movie, probe, settings):
    deep = probe(lambda h: send(h, 200, b'{"choices": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"))
    declare(settings, "deep", deep)
    run = _run(Judge.objects.create(campaign=movie, name="d", provider="deep", model="m",
                                    max_attempts=1))
    assert (run.status, run.failed) == ("done", 3), run.error
    assert all("not a chat completion" in o.failure_reason for o in JudgeOutput.objects.all())


def test_an_answer_over_the_size_cap_is_failed_and_not_stored(movie, probe, settings):
    settings.LLM_JUDGE_MAX_RESPONSE_BYTES = 100_000
    huge = probe(lambda h: send(h, 200, completion("a" * 5_000_000)))
    declare(settings, "huge", huge)
    run = _run(Judge.objects.create(campaign=movie, name="big", provider="huge", model="m",
                                    max_attempts=2))
    assert (run.status, run.failed) == ("done", 3)
    outputs = JudgeOutput.objects.all()
    assert outputs.count() == 6 and all("larger than 100,000 bytes" in o.failure_reason
                                        and o.raw_output == "" for o in outputs)


def test_a_trickling_provider_fails_the_run_within_its_deadlines(movie, probe, settings):
    settings.LLM_JUDGE_TIMEOUT_SECONDS = 1
    settings.LLM_JUDGE_REQUEST_RETRIES = 1
    settings.LLM_JUDGE_MAX_BACKOFF_SECONDS = 0.05
    slow = probe(trickle(seconds=30, every=0.3))
    declare(settings, "slow", slow)
    started = time.monotonic()
    run = _run(Judge.objects.create(campaign=movie, name="s", provider="slow", model="m",
                                    concurrency=3))
    assert run.status == "failed" and "within 1s" in run.error
    assert time.monotonic() - started < 6
