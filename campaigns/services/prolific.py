"""Send a campaign's approvals and bonuses to Prolific with the researcher's own API token.

The token comes from the environment (PROLIFIC_API_TOKEN) or is typed in for one request; it is
never stored. With the token in the environment, a participant's start is also checked against
their submission (prolific_starts.py). Endpoints (Prolific API v1,
`Authorization: Token <token>`):
- POST /api/v1/submissions/bulk-approve/   {"submission_ids": [...]}
- POST /api/v1/submissions/bonus-payments/ {"study_id": ..., "csv_bonuses": "<pid>,<amount>\\n..."}
  answers the bulk bonus payment object, whose "id" the next call pays:
- POST /api/v1/bulk-bonus-payments/<id>/pay/
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings

from annotate.http import egress

from ..errors import ServiceError
from ..models import Campaign
from ..selectors.approvals import campaign_submissions, prolific_bonus_csv

MAX_ATTEMPTS = 5
BACKOFF_SECONDS = 1.0  # doubled after each 5xx
MAX_WAIT_SECONDS = 60.0  # a Retry-After longer than this is not waited for
TIMEOUT_SECONDS = 30  # one request's whole deadline (connect and every read)
MAX_ANSWER_BYTES = 5 * 1024 * 1024


class ProlificError(ServiceError):
    """Prolific refused a request or stayed unavailable; the message says which and why."""

    code, status = "prolific_error", 502


@dataclass
class ProlificClient:
    token: str
    base_url: str = "https://api.prolific.com"
    sleep: Callable[[float], None] = time.sleep
    attempts: list[tuple[str, int]] = field(default_factory=list)  # (path, status) per try

    def bulk_approve(self, submission_ids: list[str]) -> None:
        self._post("/api/v1/submissions/bulk-approve/", {"submission_ids": submission_ids})

    def set_up_bonuses(self, *, study_id: str, csv_bonuses: str) -> str:
        """Creates (does not pay) a bulk bonus payment; returns its id."""
        answer = self._post("/api/v1/submissions/bonus-payments/",
                            {"study_id": study_id, "csv_bonuses": csv_bonuses})
        if not isinstance(answer, dict) or not answer.get("id"):
            raise ProlificError("Prolific's bonus set-up answered without a payment id.")
        return str(answer["id"])

    def pay_bonuses(self, payment_id: str) -> None:
        # Not idempotent on Prolific's side (a repeated pay pays twice): a 5xx may have been
        # processed, so only a 429 (refused before any work) is retried.
        self._post(f"/api/v1/bulk-bonus-payments/{payment_id}/pay/", None, retry_5xx=False)

    def _post(self, path: str, body: dict | None, *, retry_5xx: bool = True):
        data = json.dumps(body if body is not None else {}).encode()
        delay = BACKOFF_SECONDS
        for attempt in range(1, MAX_ATTEMPTS + 1):
            # Through the egress policy: PROLIFIC_API_URL is the operator's origin (https in
            # production, a stand-in's http in tests); no redirects, one deadline, a size cap.
            try:
                answer = egress.request(
                    "POST", self.base_url.rstrip("/") + path, body=data,
                    headers={"Authorization": f"Token {self.token}",
                             "Content-Type": "application/json", "Accept": "application/json"},
                    deadline_seconds=TIMEOUT_SECONDS, max_bytes=MAX_ANSWER_BYTES)
            except (egress.EgressRefused, egress.EgressFailed) as exc:
                raise ProlificError(f"Prolific could not be reached ({exc}).") from None
            self.attempts.append((path, answer.status))
            if 200 <= answer.status < 300:
                try:
                    return json.loads(answer.body) if answer.body.strip() else None
                except (ValueError, RecursionError):
                    raise ProlificError(f"Prolific's answer to {path} is not JSON.") from None
            wait = self._retry_wait(answer, delay, retry_5xx)
            if wait is None or attempt == MAX_ATTEMPTS:
                raise ProlificError(_refusal(path, answer))
            self.sleep(wait)
            delay *= 2
        raise AssertionError("unreachable")

    @staticmethod
    def _retry_wait(answer: egress.Answer, delay: float, retry_5xx: bool) -> float | None:
        if answer.status == 429:
            after = answer.headers.get("retry-after", "")
            wait = float(after) if after.strip().isdigit() else delay
            return wait if wait <= MAX_WAIT_SECONDS else None
        if answer.status >= 500 and retry_5xx:
            return delay
        return None


def _refusal(path: str, answer: egress.Answer) -> str:
    """The status and Prolific's own short reason (its JSON error's detail, printable text
    only, at most 200 characters), never the raw body."""
    detail = ""
    try:
        parsed = json.loads(answer.body)
        error = parsed.get("error", parsed) if isinstance(parsed, dict) else {}
        detail = error if isinstance(error, str) else (
            error.get("detail", "") if isinstance(error, dict) else "")
        if isinstance(detail, list):
            detail = "; ".join(str(d) for d in detail)
    except (ValueError, RecursionError, AttributeError):
        detail = ""
    detail = "".join(c for c in str(detail) if c.isprintable())[:200]
    return f"Prolific answered {answer.status} to {path}" + (f": {detail}" if detail else ".")


@dataclass
class SendResult:
    approved: list[str] = field(default_factory=list)  # submission ids
    bonus_payments: dict[str, str] = field(default_factory=dict)  # study id -> payment id


def token_from_environment() -> str:
    return getattr(settings, "PROLIFIC_API_TOKEN", "") or ""


def submissions_send_to_prolific(*, campaign: Campaign, token: str, approve: bool = True,
                                 bonus: bool = True, client: ProlificClient | None = None
                                 ) -> SendResult:
    """Approve the Prolific submissions the list suggests approving, and set up and pay the
    bonuses of the submissions not suggested for rejection, one bulk payment per study."""
    if not token:
        raise ProlificError("No Prolific API token: set PROLIFIC_API_TOKEN or enter one.",
                            code="prolific_token_missing", status=400)
    client = client or ProlificClient(token=token, base_url=settings.PROLIFIC_API_URL)
    rows = [r for r in campaign_submissions(campaign=campaign) if r["platform"] == "prolific"]
    result = SendResult()
    if approve:
        result.approved = [r["submission_id"] for r in rows
                           if r["action"] == "approve" and r["submission_id"]]
        if result.approved:
            client.bulk_approve(result.approved)
    if bonus:
        for study in sorted({r["study_id"] for r in rows if r["study_id"]}):
            lines = prolific_bonus_csv([r for r in rows if r["study_id"] == study])
            if lines:
                payment = client.set_up_bonuses(study_id=study, csv_bonuses=lines)
                client.pay_bonuses(payment)
                result.bonus_payments[study] = payment
    return result

