"""A stand-in for an OpenAI-compatible chat-completions endpoint, over real HTTP on 127.0.0.1.

A test gives it a `script`: a function of (request body, request number) returning a Reply
(status, content, headers, delay, refusal). It counts requests, records their arrival times
and measures how many were in flight at once.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    content: str | None = None
    status: int = 200
    headers: dict = field(default_factory=dict)
    delay: float = 0.0
    refusal: str | None = None
    finish_reason: str = "stop"
    body: str | None = None  # raw body, for non-200 answers or garbage


class StandIn:
    def __init__(self, script: Callable[[dict, int], Reply]):
        self.script = script
        self.lock = threading.Lock()
        self.bodies: list[dict] = []
        self.arrivals: list[float] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.auth: list[str | None] = []
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with standin.lock:
                    standin.in_flight += 1
                    standin.max_in_flight = max(standin.max_in_flight, standin.in_flight)
                    n = len(standin.bodies)
                    standin.bodies.append(body)
                    standin.arrivals.append(time.monotonic())
                    standin.auth.append(self.headers.get("Authorization"))
                try:
                    if self.path != "/v1/chat/completions":
                        reply = Reply(status=404, body='{"error": "not found"}')
                    else:
                        reply = standin.script(body, n)
                    if reply.delay:
                        time.sleep(reply.delay)
                    self._send(reply, body)
                finally:
                    with standin.lock:
                        standin.in_flight -= 1

            def _send(self, reply: Reply, body: dict) -> None:
                if reply.body is not None:
                    payload = reply.body.encode()
                else:
                    message = {"role": "assistant", "content": reply.content,
                               "refusal": reply.refusal}
                    payload = json.dumps({
                        "id": "chatcmpl-standin", "object": "chat.completion",
                        "model": body.get("model"),
                        "choices": [{"index": 0, "message": message,
                                     "finish_reason": reply.finish_reason}],
                        "usage": {"prompt_tokens": len(json.dumps(body)) // 4,
                                  "completion_tokens": len(reply.content or "") // 4,
                                  "total_tokens": 0}}).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @property
    def provider(self) -> str:
        """The operator provider's name this stand-in is declared as (see `declare`)."""
        return f"standin-{self.server.server_address[1]}"

    def declare(self, settings, **spec) -> StandIn:
        """Declare the stand-in as one of the operator's providers (loopback is refused to
        everything else)."""
        settings.LLM_PROVIDERS = {**settings.LLM_PROVIDERS,
                                  self.provider: {"base_url": self.base_url, **spec}}
        return self

    @property
    def requests(self) -> int:
        return len(self.bodies)

    def start(self) -> StandIn:
        self.thread.start()
        return self

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def prompts(self) -> list[str]:
        return [b["messages"][-1]["content"] for b in self.bodies]
