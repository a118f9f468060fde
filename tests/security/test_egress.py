"""SSRF: no judge request reaches a refused address (the stand-ins count zero), redirects are
not followed, and nothing an endpoint sends back beyond its status reaches the researcher."""
import pytest

from annotate.http import egress
from campaigns.models import Judge, JudgeOutput
from campaigns.services.judge_runs import judge_run_execute, judge_run_start

from .conftest import declare
from .servers import completion, internal_secret, redirect_to, send

pytestmark = pytest.mark.django_db

REFUSED_URLS = [
    "http://127.0.0.1:5432/v1", "http://127.0.0.1:6379", "http://[::1]:8000/v1",
    "http://0.0.0.0:8000", "http://localhost:8000/v1", "http://169.254.169.254/latest",
    "https://169.254.169.254/latest", "https://10.0.0.1/v1", "https://192.168.1.1/v1",
    "https://172.16.0.1/v1", "https://[fe80::1]/v1", "https://224.0.0.1/v1",
    "https://127.1/v1", "https://2130706433/v1", "https://[::ffff:127.0.0.1]/v1",
    "https://metadata.google.internal/", "file:///etc/passwd", "gopher://127.0.0.1:6379/_",
    "http://api.openai.com/v1", "https://user:pw@api.openai.com/v1", "https://example.org/v1",
]


@pytest.fixture(autouse=True)
def _quick(settings):
    settings.LLM_JUDGE_REQUEST_RETRIES = 0
    settings.LLM_JUDGE_TIMEOUT_SECONDS = 3


@pytest.mark.parametrize("url", REFUSED_URLS)
def test_a_researchers_base_url_other_than_an_allowed_https_host_is_a_400(api, movie, url):
    response = api.post(f"/api/campaigns/{movie.slug}/judges/", {
        "name": "ssrf", "model": "m", "base_url": url, "api_key": "sk-own"}, format="json")
    assert response.status_code == 400, response.json()
    assert "base_url" in response.json()["extra"]["errors"]
    assert not Judge.objects.exists()


@pytest.mark.parametrize("address", [
    "127.0.0.1", "::1", "0.0.0.0", "10.1.2.3",  # noqa: S104 - an address checked, not bound "172.16.5.4", "192.168.0.1", "169.254.169.254",
    "fe80::1", "224.0.0.1", "ff02::1", "100.64.0.1", "240.0.0.1", "::ffff:127.0.0.1",
    "2002:7f00:1::", "fc00::1"])
def test_every_non_public_address_is_refused(address):
    assert egress.address_refusal(address)


def test_a_public_address_is_not_refused():
    assert egress.address_refusal("8.8.8.8") is None
    assert egress.address_refusal("2606:4700:4700::1111") is None


def test_a_loopback_stand_in_that_is_not_the_operators_receives_nothing(probe):
    internal = probe(internal_secret)
    for url in (internal.base_url, f"https://localhost:{internal.port}/v1",
                f"https://127.0.0.1:{internal.port}/v1"):
        with pytest.raises(egress.EgressRefused):
            egress.post(url, body=b"{}", headers={}, deadline_seconds=2, max_bytes=1000)
    assert internal.requests == 0


def test_a_host_is_resolved_once_and_the_checked_address_is_the_one_connected(
        probe, settings, monkeypatch):
    """DNS rebinding: the first lookup answers a public address, a second would answer
    loopback; the request goes to the first answer's address or nowhere, never a second."""
    internal = probe(internal_secret)
    lookups = []
    real = egress.socket.getaddrinfo

    def rebinding(host, port, *args, **kwargs):
        lookups.append(host)
        if host == "rebind.example":
            address = "8.8.8.8" if len(lookups) == 1 else "127.0.0.1"
            return real(address, port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(egress.socket, "getaddrinfo", rebinding)
    with pytest.raises(egress.EgressFailed):
        egress.post(f"https://rebind.example:{internal.port}/v1", body=b"{}", headers={},
                    deadline_seconds=1, max_bytes=1000)
    assert lookups == ["rebind.example"] and internal.requests == 0


def _run(judge):
    run = judge_run_start(judge=judge, scope={"sample": 1}, enqueue=False)
    judge_run_execute(run_id=run.pk)
    run.refresh_from_db()
    return run


def test_a_redirect_is_not_followed(movie, probe, settings):
    internal = probe(internal_secret)
    redirecting = probe(redirect_to(f"{internal.base_url}/chat/completions"))
    declare(settings, "redirecting", redirecting)
    judge = Judge.objects.create(campaign=movie, name="r", provider="redirecting", model="m")
    run = _run(judge)
    assert run.status == "failed" and "redirects are not followed" in run.error
    assert redirecting.requests == 1 and internal.requests == 0


def test_an_error_body_is_not_shown_only_the_status(movie, probe, settings):
    leaking = probe(lambda h: send(h, 403, b"INTERNAL-SECRET in the error"))
    declare(settings, "leaking", leaking)
    run = _run(Judge.objects.create(campaign=movie, name="e", provider="leaking", model="m"))
    assert run.status == "failed" and "HTTP 403 Forbidden" in run.error
    assert "INTERNAL-SECRET" not in run.error


def test_a_body_that_is_not_a_completion_is_not_stored(movie, probe, settings):
    internal = probe(internal_secret)
    declare(settings, "internal", internal)
    run = _run(Judge.objects.create(campaign=movie, name="i", provider="internal", model="m",
                                    max_attempts=1))
    assert run.status == "done" and run.failed == 1
    output = JudgeOutput.objects.get()
    assert output.failed and "not a chat completion" in output.failure_reason
    assert "INTERNAL-SECRET" not in output.raw_output + output.failure_reason


def test_the_operators_http_provider_on_loopback_is_allowed(movie, probe, settings):
    local = probe(lambda h: send(h, 200, completion('{"coherence": 3, "sentiment": 2}')))
    declare(settings, "local-vllm", local)
    run = _run(Judge.objects.create(campaign=movie, name="ok", provider="local-vllm",
                                    model="m"))
    assert (run.status, local.requests) == ("done", 1)


def test_prolific_calls_go_through_the_same_policy(probe, settings):
    from campaigns.services.prolific import ProlificClient, ProlificError

    internal = probe(internal_secret)
    settings.PROLIFIC_API_URL = "https://api.prolific.com"
    client = ProlificClient(token="t", base_url=f"http://127.0.0.1:{internal.port}")
    with pytest.raises(ProlificError, match="could not be reached"):
        client.bulk_approve(["s1"])
    assert internal.requests == 0
