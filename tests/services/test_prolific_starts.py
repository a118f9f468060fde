"""Checking a Prolific start against the participant's submission (campaigns/services/
prolific_starts.py), against a local stand-in of Prolific's API on 127.0.0.1 that answers
GET /api/v1/submissions/<id>/ as Prolific does (the submission object, or 404)."""
import json
import threading

import pytest
from django.core.cache import cache

from campaigns.services.prolific_starts import prolific_participant_verified
from tests.services.test_prolific import TOKEN, Handler, StandIn

pytestmark = pytest.mark.django_db

class SubmissionHandler(Handler):
    """GET /api/v1/submissions/<id>/ as Prolific answers it: the submission, or 404."""

    submissions = {"60aa0c0ffee0000000000001": {"participant": "5f1a2b3c4d5e6f7a8b9c0d1e",
                                                "study_id": "study-1", "status": "ACTIVE"},
                   "60aa0c0ffee0000000000002": {"participant": "5f1a2b3c4d5e6f7a8b9c0d1e",
                                                "study_id": "study-1", "status": "RETURNED"}}

    def do_GET(self):  # noqa: N802 (http.server's name)
        self.server.requests.append({"path": self.path, "auth": self.headers.get("Authorization")})
        session = self.path.removeprefix("/api/v1/submissions/").rstrip("/")
        found = self.submissions.get(session)
        status, payload = (200, {"id": session, **found}) if found else (404, {"error": {
            "detail": "Not found."}})
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def submissions(settings):
    server = StandIn()
    server.RequestHandlerClass = SubmissionHandler
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.PROLIFIC_API_URL = server.url
    settings.PROLIFIC_API_TOKEN = TOKEN
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(("session", "participant", "study", "verified"), [
    ("60aa0c0ffee0000000000001", "5f1a2b3c4d5e6f7a8b9c0d1e", "study-1", True),
    ("60aa0c0ffee0000000000001", "5f1a2b3c4d5e6f7a8b9c0d1f", "study-1", False),  # not theirs
    ("60aa0c0ffee0000000000001", "5f1a2b3c4d5e6f7a8b9c0d1e", "study-2", False),  # other study
    ("60aa0c0ffee0000000000002", "5f1a2b3c4d5e6f7a8b9c0d1e", "study-1", False),  # returned
    ("60aa0c0ffee0000000000009", "5f1a2b3c4d5e6f7a8b9c0d1e", "study-1", False),  # made up
])
def test_a_start_is_verified_against_the_participants_submission(submissions, session,
                                                                 participant, study, verified):
    cache.clear()
    assert prolific_participant_verified(participant_id=participant, study_id=study,
                                         session_id=session) is verified
    assert submissions.requests == [{"path": f"/api/v1/submissions/{session}/",
                                     "auth": f"Token {TOKEN}"}]


def test_without_a_token_nothing_is_checked_and_a_bad_session_id_is_not_sent(submissions,
                                                                             settings):
    assert prolific_participant_verified(participant_id="p", study_id="s",
                                         session_id="../../users/me") is False
    settings.PROLIFIC_API_TOKEN = ""
    assert prolific_participant_verified(participant_id="p", study_id="s",
                                         session_id="60aa0c0ffee0000000000001") is None
    assert submissions.requests == []


def test_prolific_unreachable_counts_as_not_verified(settings):
    settings.PROLIFIC_API_TOKEN = TOKEN
    with socket_closed() as url:
        settings.PROLIFIC_API_URL = url
        assert prolific_participant_verified(
            participant_id="5f1a2b3c4d5e6f7a8b9c0d1e", study_id="study-1",
            session_id="60aa0c0ffee0000000000001") is False


class socket_closed:  # noqa: N801 - used as a context manager
    """A loopback URL nobody listens on."""

    def __enter__(self) -> str:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc) -> None:
        return None
