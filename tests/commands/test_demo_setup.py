"""manage.py demo_setup (make demo): an admin whose printed password works, five campaigns,
one worker link each, and a second run that changes nothing but the password."""
import re

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from campaigns.models import Campaign, Item

pytestmark = pytest.mark.django_db


def run(capsys) -> str:
    call_command("demo_setup")
    return capsys.readouterr().out


def test_it_prints_a_working_admin_password_and_a_link_per_campaign(capsys):
    out = run(capsys)
    password = re.search(r"user: admin\s+password: (\S+)", out).group(1)
    assert authenticate(username="admin", password=password).is_superuser
    slugs = re.findall(r"/c/([a-z-]+)/", out)
    assert sorted(slugs) == sorted(Campaign.objects.values_list("slug", flat=True))
    assert len(slugs) == 5


def test_running_it_twice_keeps_the_data(capsys):
    run(capsys)
    items = Item.objects.count()
    out = run(capsys)
    assert Item.objects.count() == items and Campaign.objects.count() == 5
    password = re.search(r"password: (\S+)", out).group(1)
    assert authenticate(username="admin", password=password) is not None


def test_the_demo_ships_a_judge_per_campaign_that_calls_nothing_until_configured(capsys,
                                                                                settings):
    from campaigns.errors import Conflict
    from campaigns.models import Judge
    from campaigns.services.judge_runs import judge_run_start

    settings.LLM_JUDGE_LOCAL_URL = ""
    out = run(capsys)
    assert "endpoint off" in out
    judges = Judge.objects.filter(name="local-llm")
    assert judges.count() == 5 and {j.base_url for j in judges} == {""}
    with pytest.raises(Conflict, match="LLM_JUDGE_LOCAL_URL"):
        judge_run_start(judge=judges.first(), scope={"scope": "all"})
    run(capsys)
    assert Judge.objects.count() == 5
