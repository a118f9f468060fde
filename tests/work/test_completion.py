"""Completion codes: signed per assignment, or the campaign's fixed code."""
import re

import pytest
from django.test import override_settings

from campaigns.work import (
    annotation_submit,
    assignment_claim,
    assignment_submit,
    worker_get_or_create,
)
from campaigns.work.completion import completion_code_for
from tests.factories import make_campaign, make_items

pytestmark = pytest.mark.django_db


def done(campaign, name):
    worker = worker_get_or_create(campaign=campaign, platform="prolific", platform_id=name)
    assignment = assignment_claim(campaign=campaign, worker=worker)
    annotation_submit(assignment=assignment, position=1,
                      answers={"coherence": 3, "sentiment": 3}, seconds_spent=None)
    return assignment_submit(assignment=assignment)


def test_each_assignment_gets_its_own_short_typeable_code(owner):
    campaign = make_campaign(owner=owner)
    make_items(campaign, 2)
    codes = {done(campaign, name).completion_code for name in ("a", "b")}
    assert len(codes) == 2
    assert all(re.fullmatch(r"[A-Z2-7]{12}", code) for code in codes)


def test_codes_depend_on_the_secret_key(owner):
    campaign = make_campaign(owner=owner)
    make_items(campaign, 1)
    assignment = done(campaign, "a")
    with override_settings(SECRET_KEY="another-secret-key-" * 3):
        assert completion_code_for(assignment) != assignment.completion_code


def test_a_fixed_code_is_the_campaigns(owner):
    campaign = make_campaign(owner=owner, completion_mode="fixed", completion_code="CQX4PL2A")
    make_items(campaign, 1)
    assignment = done(campaign, "a")
    assert completion_code_for(assignment) == assignment.completion_code == "CQX4PL2A"
