"""gunicorn workers whose own error answers (a request past GUNICORN_TIMEOUT, an error outside
Django) use the API's JSON shape under /api/, instead of gunicorn's HTML page.

When a request runs past the timeout, gunicorn aborts the worker (SIGABRT: SystemExit inside
the request) and writes an error page on the client's socket before the process exits. Under
/api/ that answer is `503 {"message": ..., "extra": {"code": "timeout"}}`; elsewhere, and for
requests gunicorn could not parse (its 4xx), gunicorn's own answer is kept.
docker/gunicorn.conf.py picks the class: sync, or gthread when GUNICORN_THREADS > 1.
"""
from __future__ import annotations

import json

from gunicorn import util
from gunicorn.http.errors import ParseException
from gunicorn.workers.gthread import ThreadWorker
from gunicorn.workers.sync import SyncWorker

TIMEOUT_MESSAGE = ("The request took longer than the server allows ({seconds} seconds) and was "
                   "stopped. Try a smaller request, or the job-based endpoint if there is one.")


def json_error_bytes(status: int, reason: str, message: str, code: str, **extra) -> bytes:
    body = json.dumps({"message": message, "extra": {"code": code, **extra}}).encode()
    head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\n"
            "Content-Type: application/json\r\nCache-Control: no-store\r\n"
            f"Content-Length: {len(body)}\r\n\r\n")
    return head.encode("latin-1") + body


def api_error_answer(req, exc: BaseException, timeout: int) -> bytes | None:
    """The JSON answer for an error gunicorn would answer itself, or None to let it."""
    path = getattr(req, "path", "") or ""
    if not path.startswith("/api/") or isinstance(exc, ParseException):
        return None
    if isinstance(exc, SystemExit):  # gunicorn's abort of a request past its timeout
        return json_error_bytes(503, "Service Unavailable",
                                TIMEOUT_MESSAGE.format(seconds=timeout), "timeout",
                                timeout_seconds=timeout)
    return json_error_bytes(500, "Internal Server Error", "Internal server error.",
                            "server_error")


class JsonErrorsMixin:
    def handle_error(self, req, client, addr, exc):
        answer = api_error_answer(req, exc, self.cfg.timeout)
        if answer is None:
            return super().handle_error(req, client, addr, exc)
        if isinstance(exc, SystemExit):
            self.log.error("Request past the %s s timeout: %s %s", self.cfg.timeout,
                           getattr(req, "method", ""), getattr(req, "path", ""))
        else:
            self.log.exception("Error handling request %s", getattr(req, "path", ""))
        try:
            util.write_nonblock(client, answer)
        except Exception:  # noqa: BLE001 - the client may be gone; nothing else to do
            self.log.debug("Failed to send error message.")


class JsonErrorSyncWorker(JsonErrorsMixin, SyncWorker):
    pass


class JsonErrorThreadWorker(JsonErrorsMixin, ThreadWorker):
    pass
