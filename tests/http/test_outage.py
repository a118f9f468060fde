"""A lost database connection answers 503 "please retry" (page or JSON), never a 500 trace."""
import pytest

pytestmark = [pytest.mark.urls("tests.http.urls_outage")]


@pytest.fixture
def client(client):
    client.raise_request_exception = False
    return client


def test_a_lost_connection_during_a_submit_answers_a_retry_page(client):
    response = client.post("/a/tok/1/", {"answer": "1"})
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert b"Please try again in a moment" in response.content
    assert b"Traceback" not in response.content


def test_a_json_client_gets_a_json_retry_error(client):
    response = client.post("/closed/", {}, HTTP_ACCEPT="application/json")
    assert response.status_code == 503
    assert response.json()["extra"]["code"] == "unavailable"


def test_other_errors_are_still_500s(client):
    assert client.get("/bug/").status_code == 500


def test_the_500_handler_turns_a_database_error_outside_a_view_into_a_503(rf):
    from django.db.utils import OperationalError

    from annotate.http.outage import server_error

    request = rf.get("/a/tok/1/")
    try:
        raise OperationalError("the database system is shutting down")
    except OperationalError:
        response = server_error(request)
    assert response.status_code == 503
    try:
        raise RuntimeError("a real bug")
    except RuntimeError:
        assert server_error(request).status_code == 500
