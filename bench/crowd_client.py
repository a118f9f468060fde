"""bench/crowd.py's simulated browsers: a lean HTTP client, the worker's and the one-INSERT
view's request loops, the CPU meters of the server and PostgreSQL, and the latency report.

No Django here: the loops speak HTTP to the gunicorn that bench/crowd.py starts.
"""
from __future__ import annotations

import hashlib
import re
import resource
import socket
import threading
import time
import urllib.parse
from collections import defaultdict

KINDS = ("claim", "item", "submit", "done")  # the requests of one submission
ENTRY = "entry"  # the study link, opened once per simulated worker (not per submission)
FORM_KEY_FIELD = re.compile(rb'name="form_key" value="([^"]+)"')
STARTED_FIELD = re.compile(rb'name="started" value="([^"]+)"')
PAGE_URL = re.compile(rb'<body data-page-url="([^"]+)"')


class Client:
    """One simulated browser: its CSRF cookie, its requests timed by kind.

    A lean HTTP/1.1 client over a plain socket: a load generator should cost the machine
    little (http.client, which parses every response's headers with the email package, cost
    0.8-0.9 ms CPU per submission, this client 0.5 ms). Gunicorn's sync workers close the
    connection after each response, so each request opens one; a response is read to its
    Content-Length, or to the end of the connection when it has none.

    The client half-closes its side once the request is sent. Gunicorn 27 (23 did not)
    lingers after each response until the client's side closes; 64 client threads sharing
    one interpreter lock are slow to get to that close, and the sync worker would sit idle
    meanwhile (6-7% of its time in a sampling profile at N=64), which a proxy such as nginx,
    closing at once, does not cost it.
    """

    def __init__(self, port: int, timings: dict):
        self.port = port
        self.timings = timings
        self.cookie = ""
        self.sock = None

    def request(self, kind: str, method: str, path: str, form: dict | None = None):
        body = urllib.parse.urlencode(form, doseq=True).encode() if form is not None else b""
        head = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
        if self.cookie:
            head.append(f"Cookie: {self.cookie}")
        if form is not None:
            head += ["Content-Type: application/x-www-form-urlencoded",
                     f"Content-Length: {len(body)}"]
        message = ("\r\n".join(head) + "\r\n\r\n").encode() + body
        for attempt in range(3):
            started = time.perf_counter()
            try:
                if self.sock is None:
                    self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=60)
                self.sock.sendall(message)
                # Nothing more to send on this connection (the server closes it after the
                # response): say so now, as a proxy closing at once would.
                self.sock.shutdown(socket.SHUT_WR)
                status, headers, data = self._read_response()
            except OSError:
                self._close()
                if attempt == 2:
                    raise
                continue
            self.timings[kind].append(time.perf_counter() - started)
            self._close()  # half-closed: one request per connection
            cookie = headers.get("set-cookie", "")
            if cookie.startswith("csrftoken="):
                self.cookie = cookie.split(";", 1)[0]
            return status, headers.get("location", ""), data
        raise RuntimeError("unreachable")

    def _read_response(self) -> tuple[int, dict, bytes]:
        buffer = b""
        while b"\r\n\r\n" not in buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed before the response headers")
            buffer += chunk
        head, _, data = buffer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            name = name.strip().lower()
            if name == "set-cookie" and name in headers:  # keep the CSRF cookie if several
                if not value.strip().startswith("csrftoken="):
                    continue
            headers[name] = value.strip()
        if "chunked" in headers.get("transfer-encoding", ""):
            raise ConnectionError("chunked responses are not expected from these pages")
        length = headers.get("content-length")
        if length is None:  # to the end of the connection
            while chunk := self.sock.recv(65536):
                data += chunk
            headers["connection"] = "close"
            return status, headers, data
        while len(data) < int(length):
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed before the end of the response body")
            data += chunk
        return status, headers, data

    def _close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def landing_address(status: int, location: str, html: bytes) -> str:
    """Where a POST took the worker: a redirect's target (Post/Redirect/Get), or the address of
    the page it answered with (data-page-url, one request per answered item)."""
    if status in (302, 303):
        return location
    match = PAGE_URL.search(html) if status == 200 else None
    return match.group(1).decode() if match else ""


def _item_page(client: Client, status: int, landed: str, html: bytes):
    """The item page the worker is on: the POST's answer, or fetched after its redirect."""
    if status in (302, 303):
        status, _, html = client.request("item", "GET", landed)
    started, key = STARTED_FIELD.search(html), FORM_KEY_FIELD.search(html)
    return (started, key) if status == 200 and started and key else None


def worker_loop(client: Client, slug: str, tag: str, deadline: float, results: dict,
                stop: threading.Event, per_assignment: int = 1,
                follow_done: bool = False) -> None:
    """One worker: the study link once, then claim and answer each item until time is up."""
    pid = hashlib.sha256(tag.encode()).hexdigest()[:24]  # in Prolific's form
    ids = {"PROLIFIC_PID": pid, "STUDY_ID": "bench", "SESSION_ID": pid}
    status, _, html = client.request(ENTRY, "GET", f"/c/{slug}/?{urllib.parse.urlencode(ids)}")
    match = FORM_KEY_FIELD.search(html)
    if status != 200 or not match:
        results["errors"].append((ENTRY, status))
        return
    claim = {**ids, "form_key": match.group(1).decode()}
    n = 0
    while time.perf_counter() < deadline and not stop.is_set():
        n += 1
        status, location, html = client.request("claim", "POST", f"/c/{slug}/", claim)
        if status == 409:  # no work left: the campaign is used up
            stop.set()
            break
        landed = landing_address(status, location, html)
        if not landed.startswith("/a/"):
            results["errors"].append(("claim", status))
            continue
        token = landed.split("/")[2]
        for position in range(1, per_assignment + 1):
            page = _item_page(client, status, landed, html)
            if page is None or landed != f"/a/{token}/{position}/":
                results["errors"].append(("item", status, landed))
                break
            started, key = page
            answers = {"q-coherence": str(1 + n % 5), "q-sentiment": str(1 + (n * 7) % 5),
                       "form_key": key.group(1).decode(), "started": started.group(1).decode()}
            status, location, html = client.request("submit", "POST", landed, answers)
            landed = landing_address(status, location, html)
            if not landed:
                results["errors"].append(("submit", status))
                break
            results["answered"].append(1)
        else:
            results["submitted"].append(token)
            if landed == f"/a/{token}/done/":  # the last item saved: handed in
                results["handed_in"].append(token)
                if follow_done and status in (302, 303):  # as a browser follows the redirect
                    client.request("done", "GET", landed)


def ceiling_loop(client: Client, deadline: float, results: dict) -> None:
    while time.perf_counter() < deadline:
        status, _, _ = client.request("insert", "POST", "/bench/insert/", {})
        if status == 200:
            results["inserted"].append(1)
        else:
            results["errors"].append(("insert", status))


SERVER: list = []  # the gunicorn process, for its CPU time


def _cpu_seconds(processes) -> float:
    """User + system CPU seconds used so far by these psutil processes (gone ones skipped)."""
    import psutil

    total = 0.0
    for proc in processes:
        try:
            times = proc.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def server_cpu() -> float:
    """CPU seconds used so far by gunicorn's master and workers."""
    import psutil

    if not SERVER:
        return 0.0
    master = psutil.Process(SERVER[0].pid)
    return _cpu_seconds([master, *master.children(recursive=True)])


def postgres_cpu() -> float:
    """CPU seconds used so far by the local PostgreSQL server's processes."""
    import psutil

    return _cpu_seconds(proc for proc in psutil.process_iter(["name"])
                        if proc.info["name"] in ("postgres", "postmaster"))


def run(target, n: int, seconds: float, port: int, **kwargs) -> tuple[dict, dict, float, float]:
    timings: dict = defaultdict(list)
    results: dict = defaultdict(list)
    deadline = time.perf_counter() + seconds
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    server_before, postgres_before = server_cpu(), postgres_cpu()
    threads = [threading.Thread(target=target, args=(Client(port, timings),),
                                kwargs={**kwargs, "deadline": deadline, "results": results,
                                        **({"tag": f"w{n}-{i}-{time.time_ns()}"}
                                           if target is worker_loop else {})})
               for i in range(n)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    client_cpu = (cpu_after.ru_utime - cpu_before.ru_utime
                  + cpu_after.ru_stime - cpu_before.ru_stime)
    results["server_cpu"] = server_cpu() - server_before
    # Backends that exited during the run (none with persistent connections) are not counted.
    results["postgres_cpu"] = postgres_cpu() - postgres_before
    return timings, results, elapsed, client_cpu


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def report_latencies(timings: dict, kinds) -> None:
    for kind in kinds:
        values = timings.get(kind, [])
        print(f"    {kind:<7} n={len(values):>6}  p50={pct(values, 50):7.1f} ms  "
              f"p95={pct(values, 95):7.1f} ms  p99={pct(values, 99):7.1f} ms")
