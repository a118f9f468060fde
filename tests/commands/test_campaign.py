"""manage.py campaign: the qualification test set from a settings file, and its answers listed
as CSV on standard output (the counts on standard error)."""
import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from campaigns.models import Campaign
from tests.admin.test_qualification import with_tests
from tests.factories import make_campaign

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
