"""The PostgreSQL backend's health check: no round trip for a live connection, and a
connection the server has ended is still replaced before a request uses it."""
import time

import pytest
from django.db import close_old_connections, connection, connections

from annotate.postgresql.base import DatabaseWrapper, _socket_is_quiet

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def round_trip_checks(monkeypatch):
    """Counts Django's SELECT 1 health checks (is_usable)."""
    calls = []
    backend = type(connections["default"])
    original = backend.is_usable

    def counting(self):
        calls.append(self.alias)
        return original(self)

    monkeypatch.setattr(backend, "is_usable", counting)
    return calls


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _new_request() -> None:
    """What Django does when a request starts (request_started -> close_old_connections)."""
    close_old_connections()


def test_the_engine_is_this_backend():
    assert isinstance(connections["default"], DatabaseWrapper)
    assert connection.vendor == "postgresql"
    assert connection.health_check_enabled


def test_a_live_connection_is_reused_without_a_query(round_trip_checks):
    pid = _backend_pid()
    for _ in range(3):
        _new_request()
        assert _backend_pid() == pid
    assert round_trip_checks == []


def test_a_connection_the_server_ended_is_replaced_before_use(round_trip_checks):
    pid = _backend_pid()
    other = connection.get_new_connection(connection.get_connection_params())
    other.autocommit = True
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    finally:
        other.close()
    deadline = time.monotonic() + 10
    while _socket_is_quiet(connection.connection) and time.monotonic() < deadline:
        time.sleep(0.01)  # the backend says goodbye and closes its end
    _new_request()
    assert _backend_pid() != pid  # the first query of the request ran on a new session
    assert len(round_trip_checks) == 1  # the dead one was checked with SELECT 1, then closed


def test_a_closed_connection_is_reopened():
    connection.ensure_connection()
    connection.connection.close()  # e.g. closed by the driver after an error
    _new_request()
    assert _backend_pid() > 0
