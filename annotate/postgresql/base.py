"""Django's PostgreSQL backend with a health check that needs no round trip.

With CONN_HEALTH_CHECKS, Django sends `SELECT 1` before the first query of every request on
a persistent connection: three of the fifteen round trips of a worker's submission. A server
that ends a session (restart, pg_terminate_backend, crash) closes the socket, and normally
says why first, so the socket becomes readable; in between queries nothing else arrives
(this application never LISTENs). So the socket is polled, without waiting, and Django's
`SELECT 1` runs only when something is there: a dead connection is still replaced before the
request uses it. A connection cut silently (no FIN, e.g. a network partition) is not caught
here, but `SELECT 1` would only have hung on it until the same TCP timeout.
"""
from __future__ import annotations

import select

from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def close_if_health_check_failed(self) -> None:
        if (self.connection is not None and self.health_check_enabled
                and not self.health_check_done and not self.pool
                and not self.connection.closed and _socket_is_quiet(self.connection)):
            self.health_check_done = True
            return
        super().close_if_health_check_failed()  # SELECT 1; closes a dead connection


def _socket_is_quiet(connection) -> bool:
    """True if the server has sent nothing since the last reply (no data, no EOF, no error)."""
    poller = select.poll()
    poller.register(connection.fileno(), select.POLLIN | select.POLLPRI)
    return not poller.poll(0)
