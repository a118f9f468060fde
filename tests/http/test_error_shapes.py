"""Every /api/ response is JSON in the one error shape, whoever answers it: Django's CSRF check
and error views, the statement timeout of a web request, and gunicorn's abort of a request
past its timeout. Pages keep their HTML."""
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.test import Client

from annotate.http import errors
from annotate.http.gunicorn_worker import api_error_answer, json_error_bytes

pytestmark = pytest.mark.django_db


def shape(response) -> dict:
    assert response["Content-Type"] == "application/json", response.content[:200]
    body = json.loads(response.content)
    assert set(body) == {"message", "extra"} and "code" in body["extra"]
    return body


# -- Django ------------------------------------------------------------------------------


def test_a_post_to_no_api_endpoint_is_a_json_404_even_with_csrf_enforced():
    client = Client(enforce_csrf_checks=True)
    response = client.post("/api/no-such-thing/", {"x": "1"})
    assert response.status_code == 404
    assert shape(response)["extra"]["code"] == "not_found"


def test_a_session_post_without_a_csrf_token_is_a_json_403(owner):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    response = client.post("/api/campaigns/", {}, content_type="application/json")
    assert response.status_code == 403
    assert "CSRF" in shape(response)["message"]


def test_the_csrf_failure_view_answers_json_under_api_and_a_page_elsewhere(rf):
    assert django_settings.CSRF_FAILURE_VIEW == "annotate.http.errors.csrf_failure"
    api = errors.csrf_failure(rf.post("/api/campaigns/"), reason="CSRF cookie not set.")
    assert api.status_code == 403
    assert shape(api)["extra"] == {"code": "csrf_failed", "reason": "CSRF cookie not set."}
    page = errors.csrf_failure(rf.post("/admin/login/"), reason="CSRF cookie not set.")
    assert page.status_code == 403 and page["Content-Type"].startswith("text/html")


def test_an_admin_post_without_a_csrf_token_keeps_the_html_page():
    response = Client(enforce_csrf_checks=True).post("/admin/login/", {"username": "x"})
    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.parametrize(("handler", "status"), [
    (errors.bad_request, 400), (errors.permission_denied, 403), (errors.page_not_found, 404)])
def test_djangos_error_handlers_answer_json_under_api(rf, handler, status):
    response = handler(rf.get("/api/x/"), Exception("why"))
    assert response.status_code == status
    shape(response)
    assert handler(rf.get("/c/x/"), Exception("why"))["Content-Type"].startswith("text/html")


def test_a_method_the_endpoint_lacks_is_a_json_405(client):
    response = client.put("/api/campaigns/", {}, content_type="application/json")
    assert response.status_code in (401, 405)  # anonymous: authentication is checked first
    shape(response)


@pytest.mark.urls("tests.http.urls_errors")
def test_a_crash_is_a_json_500_under_api_and_a_page_elsewhere(client):
    client.raise_request_exception = False
    response = client.get("/api/crash/")
    assert response.status_code == 500
    assert shape(response)["extra"]["code"] == "server_error"
    page = client.get("/crash/")
    assert page.status_code == 500 and page["Content-Type"].startswith("text/html")


@pytest.mark.urls("tests.http.urls_errors")
@pytest.mark.django_db(transaction=True)  # a cancelled statement aborts a transaction
@pytest.mark.parametrize("path", ["/api/slow/", "/admin/slow/"])
def test_a_statement_past_the_timeout_is_a_503_took_too_long(client, settings, path):
    """Real PostgreSQL: the statement_timeout the web processes set on their connection."""
    settings.DB_STATEMENT_TIMEOUT_SECONDS = 0.2
    with connection.cursor() as cursor:
        cursor.execute("SET statement_timeout = 200")
    try:
        response = client.get(path)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET statement_timeout")
    assert response.status_code == 503
    message = "The request took longer than 0.2 seconds and was stopped."
    if path.startswith("/api/"):
        body = shape(response)
        assert body["extra"]["code"] == "timeout"
        assert body["message"].startswith(message)
    else:
        assert response.content.decode().startswith(message)


def test_the_web_processes_set_a_statement_timeout_inside_gunicorns(tmp_path):
    """docker/gunicorn.conf.py sets DB_STATEMENT_TIMEOUT_SECONDS 10 s inside its timeout, and
    settings put it on the database connection."""
    code = ("import runpy, os; runpy.run_path('docker/gunicorn.conf.py');"
            "import django; django.setup(); from django.conf import settings as s;"
            "print(s.DATABASES['default']['OPTIONS']['options'])")
    env = {k: v for k, v in os.environ.items() if k != "DB_STATEMENT_TIMEOUT_SECONDS"}
    env.update(DJANGO_SETTINGS_MODULE="annotate.settings", GUNICORN_TIMEOUT="30")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,  # noqa: S603
                         cwd=django_settings.BASE_DIR, check=True, timeout=60).stdout
    assert out.strip().endswith("-c statement_timeout=20000")


# -- gunicorn ------------------------------------------------------------------------------


class FakeReq:
    def __init__(self, path):
        self.path, self.method, self.uri = path, "GET", path


def test_gunicorns_abort_of_an_api_request_is_a_json_503():
    answer = api_error_answer(FakeReq("/api/campaigns/x/stats/"), SystemExit(1), 30)
    assert answer == json_error_bytes(
        503, "Service Unavailable",
        "The request took longer than the server allows (30 seconds) and was stopped. Try a "
        "smaller request, or the job-based endpoint if there is one.", "timeout",
        timeout_seconds=30)
    assert answer.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
    assert b"Content-Type: application/json\r\n" in answer


def test_gunicorn_keeps_its_own_answer_for_pages_and_unparsable_requests():
    from gunicorn.http.errors import InvalidHeader

    assert api_error_answer(FakeReq("/c/study/"), SystemExit(1), 30) is None
    assert api_error_answer(FakeReq("/api/x/"), InvalidHeader("X"), 30) is None
    assert b'"code": "server_error"' in api_error_answer(FakeReq("/api/x/"), ValueError(), 30)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_real_gunicorn_answers_an_api_request_past_its_timeout_in_json(tmp_path):
    """gunicorn with the project's config and a 1 s timeout, serving a view that sleeps."""
    port = _free_port()
    app = tmp_path / "sleepy.py"
    app.write_text(
        "import time\n"
        "def application(environ, start_response):\n"
        "    time.sleep(10)\n")
    env = {**os.environ, "GUNICORN_BIND": f"127.0.0.1:{port}",
           "GUNICORN_WORKERS": "1", "GUNICORN_TIMEOUT": "1", "GUNICORN_ACCESSLOG": "",
           "PYTHONPATH": f"{tmp_path}:{django_settings.BASE_DIR}"}
    config = Path(django_settings.BASE_DIR) / "docker" / "gunicorn.conf.py"
    server = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", str(config), "sleepy"],  # noqa: S603
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                conn = socket.create_connection(("127.0.0.1", port), timeout=15)
                break
            except OSError:
                assert time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.2)
        with conn:
            conn.sendall(b"GET /api/campaigns/x/stats/ HTTP/1.1\r\nHost: t\r\n\r\n")
            answer = b""
            while chunk := conn.recv(4096):
                answer += chunk
    finally:
        server.terminate()
        server.wait(timeout=20)
    assert answer.startswith(b"HTTP/1.1 503 Service Unavailable\r\n"), answer[:300]
    assert b'"code": "timeout"' in answer
