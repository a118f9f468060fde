"""Hostile stand-ins over real HTTP on 127.0.0.1: each counts what arrives (requests and the
Authorization headers), and answers as its `answer(handler)` function says."""
from __future__ import annotations

import json
import threading
import time
import zlib
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Probe:
    def __init__(self, answer: Callable[[BaseHTTPRequestHandler], None]):
        self.arrived: list[tuple[str, str | None]] = []  # (path, Authorization)
        probe = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _any(self):
                probe.arrived.append((self.path, self.headers.get("Authorization")))
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                try:
                    answer(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = _any  # noqa: N815 - http.server's naming

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> int:
        return len(self.arrived)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def send(handler, status: int = 200, body: bytes = b"", headers: dict | None = None) -> None:
    handler.send_response(status)
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body)),
               **(headers or {})}
    for key, value in headers.items():
        handler.send_header(key, value)
    handler.end_headers()
    handler.wfile.write(body)


def completion(content: str) -> bytes:
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": content},
                                    "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1}}).encode()


def echo_key(handler) -> None:
    """A key thief's endpoint: answers with the Authorization header it was sent."""
    send(handler, 200, completion(f"thanks for {handler.headers.get('Authorization')}"))


def internal_secret(handler) -> None:
    """An internal service: anything it answers must never reach the researcher."""
    send(handler, 200, b"INTERNAL-SECRET redis_version:7.2 +PONG")


def redirect_to(url: str):
    def answer(handler) -> None:
        send(handler, 307, b"", {"Location": url})
    return answer


def trickle(seconds: float, every: float = 0.2):
    """Headers at once, then one byte of body every `every` seconds for `seconds`."""
    def answer(handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", "1000000")
        handler.end_headers()
        ends = time.monotonic() + seconds
        while time.monotonic() < ends:
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(every)
    return answer


def gzip_bomb(decompressed_bytes: int):
    """A small gzip body that inflates to `decompressed_bytes`."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip, streamed
    parts = [packer.compress(b'{"choices": [{"message": {"content": "')]
    block = b"a" * 1_000_000
    parts += [packer.compress(block) for _ in range(decompressed_bytes // len(block))]
    body = b"".join(parts) + packer.compress(b'"}}]}') + packer.flush()

    def answer(handler) -> None:
        send(handler, 200, body, {"Content-Encoding": "gzip"})
    answer.compressed = len(body)
    return answer


def prolific_submissions(token: str, submissions: dict[str, dict]):
    """A stand-in for Prolific's API (GET /api/v1/submissions/<SESSION_ID>/ with
    `Authorization: Token <token>`): the submission object (id, participant, study_id, status)
    of a session it knows, else 404 as Prolific answers; 401 for another token."""
    def answer(handler) -> None:
        if handler.headers.get("Authorization") != f"Token {token}":
            send(handler, 401, json.dumps({"error": {"detail": "Invalid token."}}).encode())
            return
        prefix = "/api/v1/submissions/"
        session = handler.path[len(prefix):].rstrip("/") if handler.path.startswith(prefix) else ""
        found = submissions.get(session)
        if handler.command != "GET" or found is None:
            send(handler, 404, json.dumps({"error": {"detail": "Not found."}}).encode())
            return
        send(handler, 200, json.dumps({"id": session, "started_at": "2026-12-04T03:00:00Z",
                                       "completed_at": None, "entered_code": None,
                                       **found}).encode())
    return answer
