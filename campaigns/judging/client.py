"""An OpenAI-compatible chat-completions client: retries with backoff, a requests-per-minute
limiter shared by a run's threads, and errors that tell an endpoint problem from an output's.

Every request goes through annotate.http.egress (checked addresses, no redirects, one
deadline, a size cap); errors name the status, never the body the endpoint sent."""
from __future__ import annotations

import email.utils
import json
import random
import threading
import time
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from django.conf import settings

from annotate.http import egress

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
# The usage counts kept (whole numbers only): the rest of an endpoint's report is not stored.
USAGE_KEYS = frozenset({"prompt_tokens", "completion_tokens", "total_tokens"})


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


def retry_after(headers: dict[str, str] | None) -> float | None:
    """Seconds from a Retry-After header (delta seconds or an HTTP date)."""
    value = (headers or {}).get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def status_reason(status: int) -> str:
    """"HTTP 401 Unauthorized": the status and its standard phrase, never the endpoint's
    body (which could be anything the URL's server holds)."""
    try:
        return f"HTTP {status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"HTTP {status}"


class ChatClient:
    """One run's connection to an endpoint; thread-safe (each request is its own connection)."""

    def __init__(self, *, base_url: str, api_key: str | None, timeout: float, retries: int,
                 max_backoff: float, limiter: RateLimiter, stop: threading.Event | None = None,
                 max_bytes: int | None = None):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        self.api_key = api_key
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self.timeout, self.retries, self.max_backoff = timeout, retries, max_backoff
        self.max_bytes = max_bytes or settings.LLM_JUDGE_MAX_RESPONSE_BYTES
        self.limiter, self.stop = limiter, stop

    def _backoff(self, attempt: int, answer: egress.Answer | None) -> float:
        hinted = retry_after(answer.headers if answer is not None else None)
        if hinted is not None:
            return min(hinted, self.max_backoff)
        return min(self.max_backoff, 0.5 * 2 ** attempt) * (0.5 + random.random() / 2)

    def complete(self, payload: dict) -> Completion:
        """POST one chat completion; retry 429/5xx/timeouts/connection errors with backoff.

        Raises FormatUnsupported on a 400 naming response_format, EndpointDown when the
        retries run out or the endpoint refuses (401, 403, 404, a redirect, other 4xx) or
        the egress policy refuses its address, Stopped when the run stops while this request
        waits for its turn or its backoff."""
        started, sent, last = time.monotonic(), 0, ""
        body = json.dumps(payload).encode()
        for attempt in range(self.retries + 1):
            self.limiter.wait(self.stop)
            if self.stop is not None and self.stop.is_set():
                raise Stopped()
            sent += 1
            answer = None
            try:
                answer = egress.post(self.url, body=body, headers=self.headers,
                                     deadline_seconds=self.timeout, max_bytes=self.max_bytes)
            except egress.EgressRefused as exc:
                raise EndpointDown(f"the endpoint is refused: {exc}") from None
            except egress.AnswerTooLarge as exc:
                # An answer, if an unusable one: one failed output, not an endpoint down.
                return Completion(None, None, "too_large", {}, time.monotonic() - started, sent,
                                  {"reason": str(exc)})
            except egress.EgressFailed as exc:
                last = str(exc)
            else:
                if answer.status == 200:
                    return self._completion(answer, started, sent)
                last = status_reason(answer.status)
                if 300 <= answer.status < 400:
                    raise EndpointDown(f"the endpoint answered {last}; redirects are not "
                                       "followed")
                if answer.status not in RETRY_STATUSES:
                    text = answer.body[:2000].decode("utf-8", "replace").lower()
                    if answer.status == 400 and "response_format" in payload and "format" in text:
                        raise FormatUnsupported(last)
                    raise EndpointDown(f"the endpoint refused the request ({last})")
            if attempt < self.retries:
                pause = self._backoff(attempt, answer)
                if self.stop is None:
                    time.sleep(pause)
                elif self.stop.wait(pause):
                    raise Stopped()
        raise EndpointDown(f"the endpoint failed {sent} times; last: {last}")

    def _completion(self, answer: egress.Answer, started: float, sent: int) -> Completion:
        try:
            body: Any = json.loads(answer.body)
            choice = body["choices"][0]
            message = choice.get("message") or {}
            content, refusal = message.get("content"), message.get("refusal")
            if not isinstance(content, str | None) or not isinstance(refusal, str | None):
                raise TypeError
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
            # Nothing of the body is kept: it is whatever the URL's server holds.
            return Completion(None, None, "unreadable", {}, time.monotonic() - started, sent,
                              {"bytes": len(answer.body)})
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        return Completion(
            content=self._redacted(content), refusal=self._redacted(refusal),
            finish_reason=_text_or_none(choice.get("finish_reason")),
            usage={k: v for k, v in usage.items() if k in USAGE_KEYS and isinstance(v, int)},
            seconds=time.monotonic() - started, requests=sent, raw=body)

    def _redacted(self, text: str | None) -> str | None:
        """The text without the key sent (an endpoint that echoes it never gets it stored)."""
        if text and self.api_key and self.api_key in text:
            return text.replace(self.api_key, "[the API key]")
        return text


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None
