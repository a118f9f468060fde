"""manage.py campaign: the qualification test set from a settings file, and its answers listed
as CSV on standard output (the counts on standard error); the statistics recomputed, in full
with --full, as the admin's Recompute buttons do."""
import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from campaigns.models import Campaign, StatisticsResult
from tests.admin.test_qualification import with_tests
from tests.factories import make_campaign
from tests.selectors.test_analysis import _study
from tests.services.test_statistics import queued  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


def test_the_setting_comes_from_the_settings_file_and_is_checked(owner, tmp_path):
    campaign = make_campaign(owner=owner)
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"qualification": {"items": ["q-0"], "pass_mark": 2}}))
    with pytest.raises(CommandError, match="qualification.pass_mark"):
        call_command("campaign", "update", campaign.slug, str(settings))
    settings.write_text(json.dumps({"qualification": {"items": ["q-0"], "pass_mark": 1}}))
    out = io.StringIO()
    call_command("campaign", "update", campaign.slug, str(settings), stdout=out)
    assert "qualification test lists 1 item(s)" in out.getvalue()  # warned: no such item
    assert Campaign.objects.get(pk=campaign.pk).qualification["pass_mark"] == 1


def test_qualifications_prints_the_answers_as_csv(owner):
    campaign = with_tests(owner)
    out, err = io.StringIO(), io.StringIO()
    call_command("campaign", "qualifications", campaign.slug, stdout=out, stderr=err)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert sorted(r["status"] for r in rows) == ["failed", "passed"]
    assert "1 qualified, 1 failed, 0 taking the test now" in err.getvalue()


def _recompute(slug, *args):
    out = io.StringIO()
    call_command("campaign", "recompute-statistics", slug, *args, stdout=out)
    return out.getvalue()


@pytest.mark.usefixtures("celery_eager")
def test_recompute_statistics_full_computes_every_interval_again(owner):
    campaign = _study(owner)
    first = _recompute(campaign.slug)  # no full computation to reuse yet
    assert (f"{campaign.slug} in full: every figure and interval from "
            f"{campaign.annotations.count()} annotations.") in first
    # Nothing changed since: a plain recomputation reuses the intervals, as the admin's.
    assert "Intervals and worker reliability from the computation over" in _recompute(
        campaign.slug)
    row = StatisticsResult.objects.get(campaign=campaign)
    assert row.result["computation"]["intervals"] == "reused"
    assert "in full: every figure and interval from" in _recompute(campaign.slug, "--full")
    row.refresh_from_db()
    assert row.result["computation"]["intervals"] == "computed" and not row.full_requested
    # The page's other options are their own cached row, as on the page.
    _recompute(campaign.slug, "--full", "--exclude-flagged")
    assert StatisticsResult.objects.filter(campaign=campaign).count() == 2


@pytest.mark.usefixtures("queued")
def test_recompute_statistics_with_a_broker_queues_a_full_computation(owner):
    campaign = _study(owner)
    assert "Queued a recomputation of the statistics of" in _recompute(campaign.slug)
    row = StatisticsResult.objects.get(campaign=campaign)
    row.status, row.result = "done", {"computation": {"intervals": "computed"}}
    row.save()
    assert "Queued a full recomputation of the statistics of" in _recompute(campaign.slug,
                                                                            "--full")
    row.refresh_from_db()
    assert row.status == "queued" and row.full_requested


def test_recompute_statistics_refuses_bad_input_and_changes_nothing(owner):
    campaign = make_campaign(owner=owner)
    with pytest.raises(CommandError, match="No campaign with slug 'nope'"):
        _recompute("nope", "--full")
    with pytest.raises(CommandError, match="--ties: invalid choice: 'even'"):
        _recompute(campaign.slug, "--ties", "even")
    assert not StatisticsResult.objects.exists()


@pytest.mark.usefixtures("queued")
def test_recompute_statistics_in_full_says_so_when_one_is_already_under_way(owner):
    campaign = _study(owner)
    _recompute(campaign.slug)
    row = StatisticsResult.objects.get(campaign=campaign)
    row.result = {"computation": {"intervals": "computed"}}  # an earlier result on show
    row.save()
    with pytest.raises(CommandError, match="already under way; run this again once it is "
                                           "done for a full one"):
        _recompute(campaign.slug, "--full")
