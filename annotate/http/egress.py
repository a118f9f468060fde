"""Outgoing HTTP to hosts named in data (LLM judges) or settings (operator providers, Prolific).

A researcher controls a judge's URL, so every request is checked where it connects:
- the host is resolved once and every address it resolves to must be public (not loopback,
  private, link-local, multicast, unspecified, reserved or one of this machine's own); the
  connection goes to an address that was checked, so a second lookup cannot swap in another
  (no DNS-rebinding window);
- `http://` and non-public addresses are for the operator's own origins only (LLM_PROVIDERS,
  PROLIFIC_API_URL, EGRESS_ALLOWED_ORIGINS: a local vLLM or Ollama, a stand-in in tests);
- redirects are never followed (a 3xx is an answer like any other);
- one deadline covers connecting, sending and every read (a watchdog shuts the socket when
  it passes, so a trickling server cannot stretch it), and the body is read as a stream
  with its size counted after decompression (a gzip bomb stops at the cap).
Messages of EgressRefused and EgressFailed name the problem without the answer's body, so
they are safe to show to whoever configured the request.
"""
from __future__ import annotations

import functools
import http.client
import ipaddress
import socket
import ssl
import threading
import time
import zlib
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

CHUNK = 64 * 1024


class EgressRefused(Exception):
    """The destination is not allowed; nothing was sent."""


class EgressFailed(Exception):
    """The request was sent (or tried) and did not give a complete answer in budget."""


class AnswerTooLarge(EgressFailed):
    """The answer came but is larger than the cap (counted after decompression)."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str  # path and query, as sent

    @property
    def origin(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)


@dataclass
class Answer:
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes


def parse_target(url: str) -> Target:
    """The URL's parts, or EgressRefused for anything but a plain http(s) URL."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise EgressRefused("the URL is not valid") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EgressRefused("only http:// and https:// URLs with a host are allowed")
    if parts.username or parts.password:
        raise EgressRefused("a URL with a user name or password is not allowed")
    default = 443 if parts.scheme == "https" else 80
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(parts.scheme, parts.hostname.lower().rstrip("."), port or default, path)


def operator_origins() -> set[tuple[str, str, int]]:
    """The (scheme, host, port) the operator named in settings: exempt from the public-address
    and https rules, since the operator chose them."""
    urls = [p.get("base_url") or "" for p in getattr(settings, "LLM_PROVIDERS", {}).values()]
    urls += [getattr(settings, "LLM_JUDGE_LOCAL_URL", "") or ""]  # the local provider's
    urls += [getattr(settings, "PROLIFIC_API_URL", "") or ""]
    urls += list(getattr(settings, "EGRESS_ALLOWED_ORIGINS", []) or [])
    origins = set()
    for url in urls:
        try:
            origins.add(parse_target(url).origin)
        except EgressRefused:
            continue
    return origins


@functools.lru_cache(maxsize=1)
def own_addresses() -> frozenset[str]:
    """This machine's addresses (its host name's and the configured ALLOWED_HOSTS'), so a
    judge cannot be pointed back at the app through a public address."""
    names = {socket.gethostname()}
    names |= {h for h in getattr(settings, "ALLOWED_HOSTS", []) if h and "*" not in h
              and not h.startswith(".")}
    found = set()
    for name in names:
        try:
            found |= {info[4][0] for info in socket.getaddrinfo(name, None)}
        except OSError:
            continue
    return frozenset(found)


def address_refusal(address: str) -> str | None:
    """Why a resolved address may not be contacted for a researcher, or None if it may."""
    ip = ipaddress.ip_address(address.split("%")[0])
    mapped = getattr(ip, "ipv4_mapped", None) or getattr(ip, "sixtofour", None)
    for candidate in (ip, mapped) if mapped else (ip,):
        if candidate.is_loopback:
            return "a loopback address"
        if candidate.is_unspecified:
            return "an unspecified address"
        if candidate.is_link_local:
            return "a link-local address"
        if candidate.is_multicast:
            return "a multicast address"
        if candidate.is_private or not candidate.is_global:
            return "a private or reserved address"
        if candidate.is_reserved:
            return "a reserved address"
    if address in own_addresses():
        return "this server's own address"
    return None


def check_target(target: Target) -> bool:
    """EgressRefused unless the target may be contacted at all; True for an operator origin."""
    trusted = target.origin in operator_origins()
    if target.scheme != "https" and not trusted:
        raise EgressRefused(f"{target.host} is not one of the operator's hosts, so it needs "
                            "https://")
    return trusted


def _lookup(target: Target, seconds: float) -> list[tuple]:
    """getaddrinfo within the deadline (a slow resolver is the request's time too); the
    lookup's thread is left to finish on its own if it overruns."""
    found: dict = {}

    def work() -> None:
        try:
            found["infos"] = socket.getaddrinfo(target.host, target.port,
                                                type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            found["infos"] = None

    thread = threading.Thread(target=work, name="egress-lookup", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise EgressFailed(f"{target.host} did not resolve in time")
    if not found.get("infos"):
        raise EgressFailed(f"{target.host} does not resolve")
    return found["infos"]


def resolve(target: Target, *, trusted: bool, seconds: float = 10.0) -> list[tuple]:
    """The socket addresses to try, each checked (all of them, or the request is refused)."""
    infos = _lookup(target, seconds)
    if not trusted:
        for info in infos:
            reason = address_refusal(info[4][0])
            if reason:
                raise EgressRefused(f"{target.host} resolves to {reason}, which judges may "
                                    "not reach")
    return [(info[0], info[4]) for info in infos]


class _Deadline:
    """Shuts the socket down when the time is up, whatever read is blocked on it."""

    def __init__(self, seconds: float):
        self.seconds, self.ends = seconds, time.monotonic() + seconds
        self.passed, self.sock = False, None
        self.timer = threading.Timer(seconds, self._expire)
        self.timer.daemon = True

    def remaining(self) -> float:
        left = self.ends - time.monotonic()
        if left <= 0:
            self.passed = True
            raise EgressFailed(f"no complete answer within {self.seconds:g}s")
        return left

    def _expire(self) -> None:
        self.passed = True
        if self.sock is not None:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _connect(target: Target, addresses: list[tuple], deadline: _Deadline) -> socket.socket:
    last: OSError | None = None
    for family, address in addresses:
        sock = deadline.sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(deadline.remaining())
        try:
            sock.connect(address)
        except OSError as exc:
            sock.close()
            last = exc
            continue
        if target.scheme == "https":
            context = ssl.create_default_context()
            sock = deadline.sock = context.wrap_socket(sock, server_hostname=target.host)
        return sock
    raise EgressFailed(f"cannot connect to {target.host} ({type(last).__name__})")


class _Pinned(http.client.HTTPConnection):
    """http.client over a socket already connected to a checked address."""

    def __init__(self, target: Target, sock: socket.socket):
        super().__init__(target.host, target.port)
        self.sock = sock

    def connect(self) -> None:  # never reconnect to a fresh lookup
        raise EgressFailed("the connection was closed")


def _decoder(encoding: str):
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    raise EgressFailed(f"the answer's content encoding {encoding[:20]!r} is not supported")


def _read_body(response: http.client.HTTPResponse, max_bytes: int, deadline: _Deadline) -> bytes:
    decoder = _decoder((response.getheader("Content-Encoding") or "").strip().lower())
    parts, size = [], 0
    while True:
        deadline.remaining()
        chunk = response.read1(CHUNK) if hasattr(response, "read1") else response.read(CHUNK)
        if deadline.passed:
            deadline.remaining()
        if not chunk:
            break
        if decoder is not None:
            chunk = decoder.decompress(chunk, max_bytes + 1 - size)
            if decoder.unconsumed_tail:
                size = max_bytes + 1
        size += len(chunk)
        if size > max_bytes:
            raise AnswerTooLarge(f"the answer is larger than {max_bytes:,} bytes")
        parts.append(chunk)
    return b"".join(parts)


def post(url: str, *, body: bytes, headers: dict[str, str], deadline_seconds: float,
         max_bytes: int) -> Answer:
    return request("POST", url, body=body, headers=headers, deadline_seconds=deadline_seconds,
                   max_bytes=max_bytes)


def request(method: str, url: str, *, body: bytes | None, headers: dict[str, str],
            deadline_seconds: float, max_bytes: int) -> Answer:
    """One request under the egress policy (module docstring); EgressRefused before anything
    is sent, EgressFailed for a connection, deadline or size problem."""
    target = parse_target(url)
    trusted = check_target(target)
    deadline = _Deadline(deadline_seconds)
    addresses = resolve(target, trusted=trusted, seconds=deadline.remaining())
    deadline.timer.start()
    sock = None
    try:
        sock = _connect(target, addresses, deadline)
        connection = _Pinned(target, sock)
        connection.request(method, target.path, body=body,
                           headers={**headers, "Accept-Encoding": "gzip, identity",
                                    "Connection": "close"})
        response = connection.getresponse()
        data = _read_body(response, max_bytes, deadline)
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, data)
    except AnswerTooLarge:
        raise
    except (OSError, http.client.HTTPException, zlib.error):
        if deadline.passed:
            raise EgressFailed(f"no complete answer within {deadline_seconds:g}s") from None
        raise EgressFailed(f"the connection to {target.host} failed") from None
    finally:
        deadline.timer.cancel()
        if sock is not None:
            sock.close()
