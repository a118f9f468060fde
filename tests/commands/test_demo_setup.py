"""manage.py demo_setup (make demo): an admin whose printed password works, six campaigns (the
five seeds and the Arena side-by-side template), a link per campaign that opens as-is and leads
to a first item, the Prolific study URL to paste, and a second run that changes nothing but the
password."""
import re
from html import unescape
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command
from django.test import Client

from campaigns.models import Assignment, Campaign, Item, Worker
from campaigns.selectors.platforms import campaign_platform_setup
from campaigns.work import DEMO_PARTICIPANT_ID
from tests.factories import make_campaign, make_items
from tests.views.conftest import page_url

pytestmark = pytest.mark.django_db


def run(capsys) -> str:
    call_command("demo_setup")
    return capsys.readouterr().out


def test_it_prints_a_working_admin_password_and_a_link_per_campaign(capsys):
    out = run(capsys)
    password = re.search(r"user: admin\s+password: (\S+)", out).group(1)
    assert authenticate(username="admin", password=password).is_superuser
    slugs = re.findall(r"Try it:\s+\S+/c/([a-z-]+)/", out)
    assert sorted(slugs) == sorted(Campaign.objects.values_list("slug", flat=True))
    assert len(slugs) == 6 and "arena-side-by-side" in slugs


def _start_form(html: str) -> dict[str, str]:
    """The entry page's start form as a newcomer fills it: hidden fields as they are, the
    consent box ticked, the first option of each intake choice, a word in each text field."""
    form = re.search(r'<form[^>]*method="post".*?</form>', html, re.S | re.I).group(0)
    data: dict[str, str] = {}
    for tag in re.findall(r"<input[^>]*>", form):
        attrs = {k: unescape(v) for k, v in re.findall(r'([a-z-]+)="([^"]*)"', tag)}
        kind, name = attrs.get("type", "text"), attrs.get("name")
        if name is None:
            continue
        if kind in ("hidden", "checkbox") or (kind == "radio" and name not in data):
            data[name] = attrs.get("value", "on")
        elif kind == "text":
            data[name] = "demo"
    for name in re.findall(r'<textarea[^>]*name="([^"]+)"', form):
        data[unescape(name)] = "demo"
    return data


def test_every_link_it_prints_opens_as_is_and_the_campaign_links_lead_to_a_first_item(
    capsys, settings
):
    settings.SITE_URL = "http://127.0.0.1:8765"  # make demo PORT=8765
    settings.RATELIMIT_ENABLED = False
    out = run(capsys)
    admin = re.search(r"Admin:\s+(\S+)", out).group(1)
    tries = re.findall(r"Try it:\s+(\S+)", out)
    assert admin.startswith("http://127.0.0.1:8765/") and len(tries) == 6
    assert Client().get(urlsplit(admin).path).status_code == 200

    for link in tries:
        assert link.startswith("http://127.0.0.1:8765/c/")
        browser = Client(enforce_csrf_checks=True)
        parts = urlsplit(link)
        page = browser.get(f"{parts.path}?{parts.query}")
        assert page.status_code == 200, link
        started = browser.post(parts.path, _start_form(page.content.decode()))
        assert started.status_code == 200, link
        assert re.fullmatch(r"/a/[^/]+/1/", page_url(started)), (link, page_url(started))
    assert Assignment.objects.filter(worker__platform_id=DEMO_PARTICIPANT_ID).count() == 6

    # The Prolific study URL to paste: the admin's, on the server's port.
    pasted = re.findall(r"Prolific:\s+(\S+)", out)
    assert pasted == [campaign_platform_setup(campaign=c).study_url for c in
                      Campaign.objects.filter(slug__in=[urlsplit(t).path.split("/")[2]
                                                        for t in tries]).order_by("pk")]
    assert all(url.startswith("http://127.0.0.1:8765/c/") for url in pasted)


def test_the_demo_participant_is_refused_on_a_campaign_demo_setup_did_not_set_up(
    client, owner, settings
):
    settings.RATELIMIT_ENABLED = False
    campaign = make_campaign(owner=owner, slug="real-study", recruitment="prolific")
    make_items(campaign, 3)
    demo = {"PROLIFIC_PID": DEMO_PARTICIPANT_ID, "STUDY_ID": "s", "SESSION_ID": "x"}
    assert client.get("/c/real-study/", demo).status_code == 400
    assert client.post("/c/real-study/", demo).status_code == 400
    assert not Worker.objects.filter(campaign=campaign).exists()


def test_running_it_twice_keeps_the_data(capsys):
    run(capsys)
    items = Item.objects.count()
    out = run(capsys)
    assert Item.objects.count() == items and Campaign.objects.count() == 6
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
    assert judges.count() == 6 and {j.base_url for j in judges} == {""}
    with pytest.raises(Conflict, match="LLM_JUDGE_LOCAL_URL"):
        judge_run_start(judge=judges.first(), scope={"scope": "all"})
    run(capsys)
    assert Judge.objects.count() == 6
