"""API test fixtures: token clients for two researchers, and annotations to list."""
import sys
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from campaigns.models import Annotation, Assignment, AssignmentItem, Item, Worker


def pytest_terminal_summary(terminalreporter):
    """After a run that fuzzed the API: how many cases, and the statuses they got."""
    module = sys.modules.get("tests.api.test_openapi")
    tally = getattr(module, "TALLY", None)
    if tally:
        statuses = ", ".join(f"{code}: {n}" for code, n in sorted(tally.items()))
        terminalreporter.write_line(f"schemathesis: {tally.total()} cases; statuses {statuses}")


@pytest.fixture(autouse=True)
def _fresh_throttle_counters():
    """Throttle counters live in the cache; each test starts with none."""
    cache.clear()
    yield
    cache.clear()


def token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


@pytest.fixture
def api(owner) -> APIClient:
    """The campaign owner's token client."""
    return token_client(owner)


@pytest.fixture
def other_api(other_owner) -> APIClient:
    """A second researcher, who owns nothing of the first one's."""
    return token_client(other_owner)


def make_items(campaign, n: int, *, system: str = "sys-a") -> list[Item]:
    return Item.objects.bulk_create(
        Item(campaign=campaign, external_id=f"{system}-{i}", system=system,
             data={"prompt": f"p{i}", "completion": f"c{i}"},
             slots_wanted=campaign.annotations_per_item)
        for i in range(n)
    )


def make_annotation(campaign, item: Item, *, worker_id: str = "W1", answers=None,
                    platform: str = "prolific") -> Annotation:
    """A submitted annotation by `worker_id`, with the item's slot bookkeeping kept valid."""
    worker, _ = Worker.objects.get_or_create(campaign=campaign, platform=platform,
                                             platform_id=worker_id)
    assignment = Assignment.objects.create(
        campaign=campaign, worker=worker, status=Assignment.Status.SUBMITTED,
        deadline=timezone.now() + timedelta(hours=1), submitted_at=timezone.now())
    AssignmentItem.objects.create(assignment=assignment, item=item, position=1)
    Item.objects.filter(pk=item.pk).update(slots_taken=item.slots_taken + 1,
                                           annotations_done=item.annotations_done + 1)
    item.refresh_from_db()
    return Annotation.objects.create(
        campaign=campaign, assignment=assignment, item=item, worker=worker,
        answers=answers or {"coherence": 4, "sentiment": 2}, seconds_spent=12.5)


@pytest.fixture
def assignment(campaign):
    """An active assignment: its token is a worker's credential, not an API token."""
    item = make_items(campaign, 1)[0]
    worker = Worker.objects.create(campaign=campaign, platform="link", platform_id="anon-1")
    a = Assignment.objects.create(campaign=campaign, worker=worker,
                                  deadline=timezone.now() + timedelta(hours=1))
    AssignmentItem.objects.create(assignment=a, item=item, position=1)
    return a
