"""A bounded hoarding loop against a real server cannot keep a real worker out.

The server is pytest-django's live server on 127.0.0.1 (real HTTP, the production middleware,
rate limits on, counters in Redis). Every request comes from 127.0.0.1, so the clients are
told apart as a reverse proxy would: one trusted X-Forwarded-For hop. The hoarder keeps one
cookie and one address and, for a bounded number of rounds, opens the study link with a fresh
made-up PROLIFIC_PID (half of them in Prolific's form) and starts. Real participants then
arrive from their own addresses and every one of them gets work; work the hoarder never
answered comes back after the first-answer hold, while the participants, who answered, keep
theirs.
"""
import os
import re
import secrets
from datetime import timedelta

import pytest
import requests
from django.utils import timezone

from annotate.http import ratelimit
from campaigns.models import Assignment, Item
from campaigns.work import assignments_expire
from tests.factories import make_campaign, make_items, prolific_pid
from tests.views.conftest import PAGE_URL

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 100
ANSWER = {"q-coherence": "4", "q-sentiment": "2", "q-feedback": "fine"}
FORM_KEY = re.compile(r'name="form_key" value="([0-9a-f]+)"')
REDIS_URL = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture
def production_limits(settings):
    settings.RATELIMIT_ENABLED = True
    settings.RATELIMIT_TRUSTED_PROXIES = 1
    settings.CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache",
                                   "LOCATION": REDIS_URL, "KEY_PREFIX": "hoard-test"}}
    ratelimit._LIMITERS.clear()
    ratelimit.reset()
    yield settings
    ratelimit.reset()
    ratelimit._LIMITERS.clear()


def start(session, url, pid, address):
    """Open the study link as a Prolific participant and start; the final response."""
    params = {"PROLIFIC_PID": pid, "STUDY_ID": "study-1", "SESSION_ID": secrets.token_hex(12)}
    headers = {"X-Forwarded-For": address}
    page = session.get(url, params=params, headers=headers, timeout=10)
    if page.status_code != 200:
        return page
    key = FORM_KEY.search(page.text)[1]
    return session.post(url, data={**params, "form_key": key}, headers=headers,
                        allow_redirects=False, timeout=10)


def test_a_hoarding_loop_cannot_keep_real_workers_out(live_server, owner, production_limits):
    # As in the report: 60 items wanted 3 times each, 5 per assignment (36 assignments).
    campaign = make_campaign(owner=owner, slug="scarce", items_per_assignment=5,
                             annotations_per_item=3, assignment_timeout_minutes=60)
    make_items(campaign, 60)
    url = f"{live_server.url}/c/{campaign.slug}/"

    hoarder = requests.Session()  # one cookie, one address
    statuses = []
    for n in range(ROUNDS):
        pid = secrets.token_hex(12) if n % 2 else f"fake-{n}-{secrets.token_hex(4)}"
        statuses.append(start(hoarder, url, pid, "203.0.113.66").status_code)
    held = Assignment.objects.filter(campaign=campaign).count()
    assert held <= production_limits.CLAIM_LIMIT_PER_ADDRESS
    assert statuses.count(200) == held  # the start answers with the first item
    assert set(statuses) <= {200, 400, 429}  # started, made-up shape, limited: never a 500
    assert statuses.count(400) == ROUNDS // 2

    # Real participants, each from their own address, all get work and answer its first item.
    for n in range(20):
        session, address = requests.Session(), f"198.51.100.{n}"
        response = start(session, url, prolific_pid(f"real-{n}"), address)
        assert response.status_code == 200, response.text[:500]
        first_item = PAGE_URL.search(response.text)[1]  # the page that answered the start
        assert re.match(r"^/a/[-\w]+/1/$", first_item)
        saved = session.post(f"{live_server.url}{first_item}",
                             data={**ANSWER, "form_key": FORM_KEY.search(response.text)[1]},
                             headers={"X-Forwarded-For": address}, allow_redirects=False,
                             timeout=10)
        assert saved.status_code == 200, saved.text[:500]  # answered with the next page

    # The hoarder answered none of its work: after the first-answer hold it comes back, while
    # the real participants, who answered, keep theirs.
    def slots_taken():
        return sum(Item.objects.filter(campaign=campaign).values_list("slots_taken", flat=True))

    before = slots_taken()
    later = timezone.now() + timedelta(minutes=production_limits.ASSIGNMENT_RESERVATION_MINUTES,
                                       seconds=1)
    assert assignments_expire(now=later, campaign=campaign) == held
    assert before - slots_taken() == held * 5
    assert slots_taken() == 20 * 5
