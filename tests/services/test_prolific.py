"""The Prolific client against a local stand-in of Prolific's API on 127.0.0.1.

The stand-in speaks the three documented endpoints, records every request, and answers from
a script per path (e.g. a 429 with Retry-After, then a 503, then the real answer).
"""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from campaigns.services.prolific import ProlificClient, ProlificError, submissions_send_to_prolific
from tests.selectors.test_approvals import PLAN, _study

pytestmark = pytest.mark.django_db

TOKEN = "researcher-token-123"
APPROVE = "/api/v1/submissions/bulk-approve/"
BONUS = "/api/v1/submissions/bonus-payments/"


class StandIn(ThreadingHTTPServer):
    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests: list[dict] = []
        self.script: dict[str, list[tuple[int, dict, dict]]] = {}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def answer(self, path: str) -> tuple[int, dict, dict]:
        queued = self.script.get(path)
        if queued:
            return queued.pop(0)
        if path == APPROVE:
            return 200, {}, "The request to bulk approve is being handled."
        if path == BONUS:
            return 201, {}, {"id": "bb-1", "study": "study-1", "amount": 1}
        if path.startswith("/api/v1/bulk-bonus-payments/") and path.endswith("/pay/"):
            return 202, {}, {}
        return 404, {}, {"error": "not found"}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's name)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        self.server.requests.append({
            "path": self.path, "auth": self.headers.get("Authorization"),
            "type": self.headers.get("Content-Type"),
            "json": json.loads(body) if body else None})
        status, headers, payload = self.server.answer(self.path)
        data = json.dumps(payload).encode()
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def prolific(settings):
    server = StandIn()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.PROLIFIC_API_URL = server.url  # the operator's origin: loopback and http allowed
    yield server
    server.shutdown()
    server.server_close()


def _client(server, slept):
    return ProlificClient(token=TOKEN, base_url=server.url, sleep=slept.append)


def test_it_sends_exactly_the_approvals_and_the_bonus_of_the_suggested_submissions(
        owner, prolific, settings):
    settings.PROLIFIC_API_URL = prolific.url
    result = submissions_send_to_prolific(campaign=_study(owner), token=TOKEN)
    approved = sorted(f"sess-p-ok{n}" for n in range(10))
    bonus_lines = {f"p-ok{n},0.90" for n in range(10)} | {
        "p-one-slip,0.65", "p-fast-items,0.90", "p-gold-wrong,0.40"}
    assert [r["path"] for r in prolific.requests] == [
        APPROVE, BONUS, "/api/v1/bulk-bonus-payments/bb-1/pay/"]
    assert {r["auth"] for r in prolific.requests} == {f"Token {TOKEN}"}
    assert {r["type"] for r in prolific.requests} == {"application/json"}
    assert sorted(prolific.requests[0]["json"]["submission_ids"]) == approved
    sent = prolific.requests[1]["json"]
    assert sent["study_id"] == "study-1"
    assert set(sent["csv_bonuses"].splitlines()) == bonus_lines
    assert len(bonus_lines) == len(PLAN) - 2
    assert sorted(result.approved) == approved and result.bonus_payments == {"study-1": "bb-1"}


def test_it_waits_as_long_as_retry_after_says_and_backs_off_on_5xx(prolific):
    prolific.script[APPROVE] = [(429, {"Retry-After": "7"}, {}), (503, {}, {}), (502, {}, {})]
    slept: list[float] = []
    _client(prolific, slept).bulk_approve(["s1"])
    assert [r["path"] for r in prolific.requests] == [APPROVE] * 4
    assert slept == [7.0, 2.0, 4.0]  # Retry-After, then the doubling backoff continues


def test_it_gives_up_after_the_last_attempt_with_a_clear_error(prolific):
    prolific.script[APPROVE] = [(500, {}, {"detail": "boom"})] * 5
    slept: list[float] = []
    with pytest.raises(ProlificError, match="500"):
        _client(prolific, slept).bulk_approve(["s1"])
    assert len(prolific.requests) == 5 and slept == [1.0, 2.0, 4.0, 8.0]


def test_a_4xx_is_not_retried(prolific):
    prolific.script[BONUS] = [(400, {}, {"error": "p-x did not take part"})]
    with pytest.raises(ProlificError, match="did not take part"):
        _client(prolific, []).set_up_bonuses(study_id="study-1", csv_bonuses="p-x,1.00\n")
    assert len(prolific.requests) == 1


def test_paying_is_retried_after_429_but_never_after_a_5xx(prolific):
    pay = "/api/v1/bulk-bonus-payments/bb-9/pay/"
    prolific.script[pay] = [(429, {"Retry-After": "1"}, {}), (500, {}, {})]
    slept: list[float] = []
    with pytest.raises(ProlificError, match="500"):
        _client(prolific, slept).pay_bonuses("bb-9")
    assert [r["path"] for r in prolific.requests] == [pay, pay] and slept == [1.0]


def test_no_token_is_a_clear_400_and_sends_nothing(owner, prolific, settings):
    settings.PROLIFIC_API_URL = prolific.url
    with pytest.raises(ProlificError) as caught:
        submissions_send_to_prolific(campaign=_study(owner), token="")
    assert caught.value.status == 400 and prolific.requests == []

