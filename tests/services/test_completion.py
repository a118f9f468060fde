"""Completion codes: signed per assignment, or the campaign's fixed code."""
import re

import pytest
from django.test import override_settings

from campaigns.models import Assignment
from campaigns.services.annotations import annotation_submit
from campaigns.services.assignments import (
    assignment_claim,
    assignment_submit,
    worker_get_or_create,
)
from campaigns.services.completion import completion_code_for, completion_code_verify
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


def test_a_code_verifies_to_its_assignment_however_it_is_typed(owner):
    campaign = make_campaign(owner=owner)
    make_items(campaign, 1)
    assignment = done(campaign, "a")
    code = assignment.completion_code
    typed = f" {code[:4].lower()}-{code[4:8]} {code[8:]} "
    assert completion_code_verify(campaign=campaign, code=typed) == assignment


def test_an_altered_or_foreign_code_does_not_verify(owner):
    campaign, other = make_campaign(owner=owner), make_campaign(owner=owner)
    make_items(campaign, 1)
    code = done(campaign, "a").completion_code
    altered = code[:-1] + ("A" if code[-1] != "A" else "B")
    assert completion_code_verify(campaign=campaign, code=altered) is None
    assert completion_code_verify(campaign=other, code=code) is None
    assert completion_code_verify(campaign=campaign, code="") is None


def test_a_code_stored_without_the_server_key_does_not_verify(owner):
    campaign = make_campaign(owner=owner)
    make_items(campaign, 1)
    assignment = done(campaign, "a")
    Assignment.objects.filter(pk=assignment.pk).update(completion_code="ABCDEFGHIJKL")
    assert completion_code_verify(campaign=campaign, code="ABCDEFGHIJKL") is None


def test_codes_depend_on_the_secret_key(owner):
    campaign = make_campaign(owner=owner)
    make_items(campaign, 1)
    assignment = done(campaign, "a")
    with override_settings(SECRET_KEY="another-secret-key-" * 3):
        assert completion_code_for(assignment) != assignment.completion_code
        assert completion_code_verify(campaign=campaign, code=assignment.completion_code) is None


def test_an_unsubmitted_assignment_has_no_verifiable_code(owner):
    campaign = make_campaign(owner=owner)
    make_items(campaign, 1)
    worker = worker_get_or_create(campaign=campaign, platform="link", platform_id="w")
    assignment = assignment_claim(campaign=campaign, worker=worker)
    assert assignment.completion_code == ""
    code = completion_code_for(assignment)
    assert completion_code_verify(campaign=campaign, code=code) is None


def test_a_fixed_code_is_the_campaigns_and_names_no_assignment(owner):
    campaign = make_campaign(owner=owner, completion_mode="fixed", completion_code="CQX4PL2A")
    make_items(campaign, 1)
    assignment = done(campaign, "a")
    assert completion_code_for(assignment) == assignment.completion_code == "CQX4PL2A"
    assert completion_code_verify(campaign=campaign, code="CQX4PL2A") is None
