"""Simulated crowd workers: submit every item of their assignments, retrying what was not saved.

Only 127.0.0.1. Every run is bounded by a deadline and by a maximum number of requests.
An answer counts as acknowledged when the server answered the POST with 200: the next item,
the finish or the done page (what the worker's browser then shows).
"""
from __future__ import annotations

import http.client
import json
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import urlencode

from .stack import HOST, WEB_PORT, wait_until


@dataclass
class Outcome:
    acknowledged: dict[tuple[str, int], int] = field(default_factory=dict)  # (token, pos) -> value
    statuses: Counter = field(default_factory=Counter)
    errors: Counter = field(default_factory=Counter)  # connection-level failures by type
    server_errors: list[str] = field(default_factory=list)  # 500 bodies (must stay empty)
    retry_pages: int = 0  # 503s whose body asked to retry
    unclear_503: list[str] = field(default_factory=list)
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def summary(self) -> str:
        return (f"{self.requests} requests, {len(self.acknowledged)} acknowledged, statuses "
                f"{dict(self.statuses)}, connection errors {dict(self.errors)}")


class Connection:
    def __init__(self, timeout: float = 15):
        self.timeout = timeout
        self.conn: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: str | None = None,
                headers: dict | None = None) -> tuple[int, dict, bytes]:
        if self.conn is None:
            self.conn = http.client.HTTPConnection(HOST, WEB_PORT, timeout=self.timeout)
        try:
            self.conn.request(method, path, body=body, headers=headers or {})
            response = self.conn.getresponse()
            data = response.read()
        except Exception:
            self.close()
            raise
        if response.getheader("Connection", "").lower() == "close":
            self.close()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


FORM_KEY = re.compile(rb'name="form_key" value="([^"]+)"')


def form_keys(tokens: list[str]) -> dict[str, str]:
    """Each assignment's form key, as its first item page gives it to the worker's browser."""
    conn, keys = Connection(), {}
    for token in tokens:
        status, _, html = conn.request("GET", f"/a/{token}/1/")
        assert status == 200, f"GET /a/{token}/1/ answered {status}"
        keys[token] = FORM_KEY.search(html).group(1).decode()
    conn.close()
    return keys


def submit(conn: Connection, keys: dict[str, str], token: str, position: int, value: int,
           accept_json: bool = False) -> tuple[int, bytes]:
    body = urlencode({"form_key": keys[token], "q-score": str(value)})
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if accept_json:
        headers["Accept"] = "application/json"
    status, _, data = conn.request("POST", f"/a/{token}/{position}/", body, headers)
    return status, data


def run_workers(tokens: list[str], per_assignment: int, *, keys: dict[str, str], threads: int = 6,
                deadline_s: float = 40, max_requests: int = 5000, pause_s: float = 0.0,
                retry_pause_s: float = 0.3, stop: threading.Event | None = None,
                outcome: Outcome | None = None) -> Outcome:
    """Each thread works through its share of the assignments, item by item, retrying items
    that were not acknowledged, until all are done, the deadline passes or `stop` is set."""
    outcome = outcome if outcome is not None else Outcome()
    end = time.monotonic() + deadline_s
    stop = stop or threading.Event()

    def worker(share: list[str], seed: int):
        conn = Connection()
        for token in share:
            for position in range(1, per_assignment + 1):
                value = 1 + (seed + position) % 5
                while not stop.is_set() and time.monotonic() < end:
                    with outcome.lock:
                        if outcome.requests >= max_requests:
                            return
                        outcome.requests += 1
                    try:
                        status, data = submit(conn, keys, token, position, value,
                                              accept_json=bool(position % 2))
                    except (OSError, http.client.HTTPException) as exc:
                        with outcome.lock:
                            outcome.errors[type(exc).__name__] += 1
                        time.sleep(retry_pause_s)
                        continue
                    with outcome.lock:
                        outcome.statuses[status] += 1
                        # 200: saved (answered with the next item, or with the done page
                        # when this save answered the last item and handed the work in). A retry of
                        # the final item whose first attempt was saved and handed in gets the
                        # done page too and stores nothing; the value is the same.
                        if status == 200:
                            outcome.acknowledged[(token, position)] = value
                        elif status >= 500:
                            text = data.decode("utf-8", "replace")
                            if status == 503 and _asks_to_retry(text):
                                outcome.retry_pages += 1
                            elif status == 503:
                                outcome.unclear_503.append(text[:300])
                            else:
                                outcome.server_errors.append(f"{status}: {text[:500]}")
                    if status == 200:
                        time.sleep(pause_s)
                        break
                    if status == 409 or status == 404:
                        break  # closed or unknown: a real worker could not go on either
                    time.sleep(retry_pause_s)
        conn.close()

    shares = [tokens[i::threads] for i in range(threads)]
    pool = [threading.Thread(target=worker, args=(share, n), daemon=True)
            for n, share in enumerate(shares) if share]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(max(0.0, end - time.monotonic()) + 20)
    stop.set()
    return outcome


def _asks_to_retry(text: str) -> bool:
    if text.lstrip().startswith("{"):
        try:
            return json.loads(text)["extra"]["code"] == "unavailable"
        except (ValueError, KeyError, TypeError):
            return False
    return "try again" in text.lower()


def stored_answers(pg, tokens: list[str]) -> dict[tuple[str, int], int]:
    """(token, position) -> stored score, read straight from the database."""
    with pg.connect() as db, db.cursor() as cursor:
        cursor.execute(
            "SELECT s.token, ai.position, a.answers->>'score' FROM campaigns_annotation a "
            "JOIN campaigns_assignment s ON s.id = a.assignment_id "
            "JOIN campaigns_assignmentitem ai "
            "ON ai.assignment_id = s.id AND ai.item_id = a.item_id "
            "WHERE s.token = ANY(%s)", [tokens])
        rows = cursor.fetchall()
    db.close()
    return {(token, position): int(score) for token, position, score in rows}


def assert_no_acknowledged_submit_lost(outcome: Outcome, pg, tokens: list[str]) -> None:
    stored = stored_answers(pg, tokens)
    lost = {key: value for key, value in outcome.acknowledged.items() if stored.get(key) != value}
    assert not lost, f"{len(lost)} acknowledged submits are not in the database: {list(lost)[:5]}"


def in_background(tokens: list[str], per_assignment: int,
                  **kwargs) -> tuple[Outcome, threading.Thread]:
    """run_workers in a thread; the Outcome fills in while it runs."""
    outcome = Outcome()
    thread = threading.Thread(target=run_workers, args=(tokens, per_assignment),
                              kwargs={**kwargs, "outcome": outcome}, daemon=True)
    thread.start()
    return outcome, thread


def api(method: str, path: str, api_token: str, payload: dict | None = None) -> tuple[int, dict]:
    """A researcher's script calling the API with its token."""
    body = json.dumps(payload) if payload is not None else None
    status, _, data = Connection(timeout=30).request(
        method, path, body, {"Authorization": f"Token {api_token}",
                             "Content-Type": "application/json", "Accept": "application/json"})
    try:
        return status, json.loads(data or b"{}")
    except ValueError:
        return status, {"raw": data.decode("utf-8", "replace")[:500]}


def export_job(pg, job_id: int) -> dict:
    with pg.connect() as db, db.cursor() as cursor:
        cursor.execute("SELECT status, attempts, rows_written, error, file FROM "
                       "campaigns_exportjob WHERE id = %s", [job_id])
        status, attempts, rows, error, file = cursor.fetchone()
    db.close()
    return {"status": status, "attempts": attempts, "rows_written": rows, "error": error,
            "file": file}


def latest_export_job(pg, slug: str) -> dict:
    with pg.connect() as db, db.cursor() as cursor:
        cursor.execute("SELECT j.id FROM campaigns_exportjob j JOIN campaigns_campaign c "
                       "ON c.id = j.campaign_id WHERE c.slug = %s ORDER BY j.id DESC LIMIT 1",
                       [slug])
        row = cursor.fetchone()
    db.close()
    return {"id": row[0], **export_job(pg, row[0])} if row else {}


def start_export(slug: str, api_token: str) -> int:
    status, body = api("POST", f"/api/campaigns/{slug}/exports/", api_token, {"format": "csv"})
    assert status == 202, body
    return body["id"]


def wait_running(pg, job_id: int) -> dict:
    return wait_until(
        lambda: (job := export_job(pg, job_id))["status"] == "running"
        and job["rows_written"] > 0 and job, 60, "the export to be running", interval=0.02)


def wait_finished(pg, job_id: int, timeout: float) -> dict:
    return wait_until(
        lambda: (job := export_job(pg, job_id))["status"] in ("done", "failed") and job,
        timeout, "the export to finish")
