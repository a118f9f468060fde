"""An OpenAI-compatible chat-completions client: retries with backoff, a requests-per-minute
limiter shared by a run's threads, and errors that tell an endpoint problem from an output's."""
from __future__ import annotations

import email.utils
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import requests

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class EndpointDown(Exception):
    """The endpoint kept failing (or refused the request outright): the run stops."""


class Stopped(Exception):
    """The run was stopped (cancelled or superseded) before this request was sent."""


class FormatUnsupported(Exception):
    """The endpoint answered 400 to a response_format it does not know."""


@dataclass
class Completion:
    content: str | None
    refusal: str | None
    finish_reason: str | None
    usage: dict
    seconds: float
    requests: int  # HTTP requests this completion took, retries included
    raw: dict = field(default_factory=dict)


class RateLimiter:
    """Spaces request starts at least 60/rpm seconds apart (never a burst over the limit)."""

    def __init__(self, requests_per_minute: int):
        self.interval = 60.0 / max(1, requests_per_minute)
        self.lock = threading.Lock()
        self.next_at = 0.0

    def wait(self, stop: threading.Event | None = None) -> None:
        with self.lock:
            now = time.monotonic()
            start = max(now, self.next_at)
            self.next_at = start + self.interval
        delay = start - time.monotonic()
        if delay > 0:
            (stop.wait if stop else time.sleep)(delay)


def retry_after(response: requests.Response | None) -> float | None:
    """Seconds from a Retry-After header (delta seconds or an HTTP date)."""
    value = response.headers.get("Retry-After") if response is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


class ChatClient:
    """One run's connection to an endpoint; thread-safe (one requests.Session per thread)."""

    def __init__(self, *, base_url: str, api_key: str | None, timeout: float, retries: int,
                 max_backoff: float, limiter: RateLimiter, stop: threading.Event | None = None):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.headers = {"Content-Type": "application/json"}
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self.timeout, self.retries, self.max_backoff = timeout, retries, max_backoff
        self.limiter, self.stop = limiter, stop
        self.local = threading.local()

    def _session(self) -> requests.Session:
        if not hasattr(self.local, "session"):
            self.local.session = requests.Session()
        return self.local.session

    def _backoff(self, attempt: int, response: requests.Response | None) -> float:
        hinted = retry_after(response)
        if hinted is not None:
            return min(hinted, self.max_backoff)
        return min(self.max_backoff, 0.5 * 2 ** attempt) * (0.5 + random.random() / 2)

    def complete(self, payload: dict) -> Completion:
        """POST one chat completion; retry 429/5xx/timeouts/connection errors with backoff.

        Raises FormatUnsupported on a 400 naming response_format, EndpointDown when the
        retries run out or the endpoint refuses (401, 403, 404, other 4xx), Stopped when the
        run stops while this request waits for its turn or its backoff."""
        started, sent, last = time.monotonic(), 0, ""
        for attempt in range(self.retries + 1):
            self.limiter.wait(self.stop)
            if self.stop is not None and self.stop.is_set():
                raise Stopped()
            sent += 1
            response = None
            try:
                response = self._session().post(self.url, json=payload, headers=self.headers,
                                                timeout=self.timeout)
            except requests.Timeout:
                last = f"no answer within {self.timeout:g}s"
            except requests.ConnectionError as exc:
                last = f"cannot connect ({type(exc).__name__})"
            else:
                if response.status_code == 200:
                    return self._completion(response, started, sent)
                last = f"HTTP {response.status_code}: {response.text[:200]}"
                if response.status_code not in RETRY_STATUSES:
                    if (response.status_code == 400 and "response_format" in payload
                            and "format" in response.text.lower()):
                        raise FormatUnsupported(last)
                    raise EndpointDown(f"{self.url} refused the request ({last})")
            if attempt < self.retries:
                pause = self._backoff(attempt, response)
                if self.stop is None:
                    time.sleep(pause)
                elif self.stop.wait(pause):
                    raise Stopped()
        raise EndpointDown(f"{self.url} failed {sent} times; last: {last}")

    def _completion(self, response: requests.Response, started: float, sent: int) -> Completion:
        try:
            body: Any = response.json()
            choice = body["choices"][0]
            message = choice.get("message") or {}
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return Completion(None, None, "unreadable", {}, time.monotonic() - started, sent,
                              {"text": response.text[:2000]})
        return Completion(
            content=message.get("content"), refusal=message.get("refusal"),
            finish_reason=choice.get("finish_reason"), usage=body.get("usage") or {},
            seconds=time.monotonic() - started, requests=sent, raw=body)
