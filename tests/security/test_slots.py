"""Scarce slots, against a real gunicorn (docker/gunicorn.conf.py, counters in Redis, one
trusted proxy hop so that clients are told apart by X-Forwarded-For) and a stand-in for
Prolific's API (tests/security/servers.py: GET /api/v1/submissions/<SESSION_ID>/, as Prolific
answers it). The two hoarding attacks of the report are replayed:

- one address loops made-up participant ids on a 12-items-per-assignment study (6 assignments:
  before, it emptied the study in 6 starts);
- 12 addresses at once loop made-up ids on a 35-item study wanted 3 times (105 one-item
  assignments: before, they took 99 in 7.4 s);

and in each a genuine participant (a real submission of the study, on Prolific's stand-in)
arriving afterwards from an address of their own gets a whole assignment, keeps it by answering,
while the attacker's unanswered work comes back after the first-answer hold.
"""
import re
import secrets
import threading
import time
from datetime import timedelta

import pytest
import requests
from django.utils import timezone

from campaigns.models import Assignment, AssignmentItem
from campaigns.work import assignments_expire
from tests.factories import make_campaign, make_items, prolific_pid

from .gunicorn import gunicorn
from .servers import Probe, prolific_submissions

pytestmark = pytest.mark.django_db(transaction=True)
REDIS = "redis://127.0.0.1:6379/7"  # this test's own database: flushed at its start
TOKEN = "researcher-prolific-token"  # noqa: S105 - the stand-in's, not a secret
STUDY = "study-1"
FORM_KEY = re.compile(r'name="form_key" value="([0-9a-f]+)"')
ANSWER = {"q-coherence": "4", "q-sentiment": "2", "q-feedback": "fine"}
GENUINE = {"pid": prolific_pid("genuine"), "session": "6a0f5c1e2b3d4f5a6b7c8d9e"}


@pytest.fixture
def prolific():
    """Prolific's stand-in, knowing the genuine participant's live submission only."""
    server = Probe(prolific_submissions(TOKEN, {GENUINE["session"]: {
        "participant": GENUINE["pid"], "study_id": STUDY, "status": "ACTIVE"}}))
    yield server
    server.close()


@pytest.fixture
def web(tmp_path, prolific):
    """gunicorn (two workers, four threads each), rate limits on, the researcher's Prolific
    token configured and Prolific's API the stand-in."""
    import redis

    redis.Redis.from_url(REDIS).flushdb()
    with gunicorn(tmp_path, {
            "GUNICORN_WORKERS": "2", "GUNICORN_THREADS": "4", "GUNICORN_ACCESSLOG": "",
            "CACHE_URL": REDIS, "RATELIMIT_ENABLED": "true", "RATELIMIT_TRUSTED_PROXIES": "1",
            "RATELIMIT_PER_ADDRESS": "100000", "PROLIFIC_API_TOKEN": TOKEN,
            "PROLIFIC_API_URL": f"http://127.0.0.1:{prolific.port}",
            "LOG_LEVEL": "WARNING"}) as base:
        yield base


def start(session: requests.Session, url: str, pid: str, address: str,
          session_id: str | None = None) -> requests.Response:
    """Open the study link as a Prolific participant and start; the final response."""
    params = {"PROLIFIC_PID": pid, "STUDY_ID": STUDY,
              "SESSION_ID": session_id or secrets.token_hex(12)}
    headers = {"X-Forwarded-For": address}
    page = session.get(url, params=params, headers=headers, timeout=30)
    if page.status_code != 200:
        return page
    key = FORM_KEY.search(page.text)[1]
    return session.post(url, data={**params, "form_key": key}, headers=headers,
                        allow_redirects=False, timeout=30)


PAGE_URL = re.compile(r'<body data-page-url="([^"]+)"')
STARTED = "started"


def outcome(response: requests.Response) -> str | int:
    """STARTED when the start answered with a first item (the page names its /a/ address),
    else the status code."""
    found = PAGE_URL.search(response.text) if response.status_code == 200 else None
    return STARTED if found and found[1].startswith("/a/") else response.status_code


def hoard(url: str, address: str, rounds: int, statuses: list) -> None:
    """One attacking address: a fresh made-up participant id (in Prolific's form) each round."""
    session = requests.Session()
    for _ in range(rounds):
        statuses.append(outcome(start(session, url, secrets.token_hex(12), address)))


def genuine_worker_gets_work(base: str, url: str, address: str) -> Assignment:
    """The genuine participant starts, lands on their first item and answers it."""
    session = requests.Session()
    page = start(session, url, GENUINE["pid"], address, GENUINE["session"])
    assert outcome(page) == STARTED, page.text[:500]  # the first item, answered at once
    location = PAGE_URL.search(page.text)[1]
    assert re.match(r"^/a/[-\w]+/1/$", location), location
    saved = session.post(base + location, data={**ANSWER, "form_key": FORM_KEY.search(
        page.text)[1], "started": "0"}, headers={"X-Forwarded-For": address},
        allow_redirects=False, timeout=30)
    assert saved.status_code == 200 and PAGE_URL.search(saved.text), saved.text[:500]
    return Assignment.objects.get(token=location.split("/")[2])


def held(assignments) -> int:
    return AssignmentItem.objects.filter(assignment__in=assignments, holds_slot=True).count()


def test_one_address_cannot_empty_a_12_items_per_assignment_study(web, owner, prolific):
    campaign = make_campaign(owner=owner, slug="twelve", items_per_assignment=12,
                             annotations_per_item=3, assignment_timeout_minutes=60)
    make_items(campaign, 24)  # 72 slots: 6 assignments of 12
    url = f"{web}/c/{campaign.slug}/"

    statuses: list[int] = []
    began = time.monotonic()
    hoard(url, "203.0.113.66", 20, statuses)
    seconds = time.monotonic() - began
    taken = list(Assignment.objects.filter(campaign=campaign))
    print(f"\none address, 20 starts in {seconds:.1f}s: {statuses.count(STARTED)} started, "
          f"{statuses.count(429)} refused (429); {held(taken)} of 72 slots held")
    assert set(statuses) <= {STARTED, 429}  # never a 500
    assert statuses.count(STARTED) == len(taken) <= 2  # newcomers per address, for 6 in all
    # Prolific does not know these submissions: each got a first item only.
    assert held(taken) == len(taken)

    mine = genuine_worker_gets_work(web, url, "198.51.100.7")
    assert mine.slots.filter(holds_slot=True).count() == 12  # vouched for: a whole assignment
    assert prolific.requests >= len(taken) + 1  # every start was checked with Prolific

    # The first-answer hold: the attacker's unanswered work comes back, the answered stays.
    later = timezone.now() + timedelta(minutes=6)
    assert assignments_expire(now=later, campaign=campaign) == len(taken)
    assert Assignment.objects.get(pk=mine.pk).status == "active"


def test_twelve_addresses_cannot_take_a_35_item_study(web, owner):
    campaign = make_campaign(owner=owner, slug="thirty-five", items_per_assignment=1,
                             annotations_per_item=3, assignment_timeout_minutes=60)
    make_items(campaign, 35)  # 105 one-item assignments
    url = f"{web}/c/{campaign.slug}/"

    statuses: list[int] = []
    attackers = [threading.Thread(target=hoard, args=(url, f"203.0.113.{n}", 12, statuses))
                 for n in range(12)]
    began = time.monotonic()
    for thread in attackers:
        thread.start()
    for thread in attackers:
        thread.join()
    seconds = time.monotonic() - began
    taken = Assignment.objects.filter(campaign=campaign).count()
    print(f"\n12 addresses, {len(statuses)} starts in {seconds:.1f}s: {statuses.count(STARTED)} "
          f"started, {statuses.count(429)} refused (429); {taken} of 105 assignments taken")
    assert set(statuses) <= {STARTED, 429}
    assert statuses.count(STARTED) == taken
    # 12 first starts (one per fresh address) and at most a quarter of the study besides.
    assert taken <= 12 + 27

    mine = genuine_worker_gets_work(web, url, "198.51.100.8")
    assert mine.slots.count() == 1
