"""Fixtures of the worker path's tests."""
import pytest

from campaigns.work import assignment_claim, worker_get_or_create
from tests.factories import make_campaign, make_items


@pytest.fixture
def assignment(owner):
    """A two-item assignment of a fresh campaign, claimed by the link worker "w1"."""
    campaign = make_campaign(owner=owner, items_per_assignment=2)
    make_items(campaign, 2)
    worker = worker_get_or_create(campaign=campaign, platform="link", platform_id="w1")
    return assignment_claim(campaign=campaign, worker=worker)
