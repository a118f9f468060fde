"""The qualification test in the admin: set and checked on the change form, counted on the
dashboard, its answers downloaded from the submissions page."""
import csv
import io
import json

import pytest
from django.urls import reverse

from campaigns.errors import QualificationRequired
from campaigns.models import Campaign, Item, QualificationAnswer
from campaigns.work import assignment_claim, worker_get_or_create
from campaigns.work.qualification import qualification_answer
from tests.admin.test_forms import change_url, form_data
from tests.factories import make_campaign, make_items

pytestmark = pytest.mark.django_db
GOLD = {"coherence": 4}


def with_tests(owner):
    """A campaign whose test one participant passed and one failed."""
    campaign = make_campaign(owner=owner)
    make_items(campaign, 2)
    make_items(campaign, 1, control=Item.Control.GOLD, gold=GOLD, prefix="q")
    campaign.qualification = {"items": ["q-0"], "pass_mark": 1}
    campaign.save()
    for name, coherence in (("p-pass", 4), ("p-fail", 1)):
        worker = worker_get_or_create(campaign=campaign, platform="prolific", platform_id=name)
        with pytest.raises(QualificationRequired) as caught:
            assignment_claim(campaign=campaign, worker=worker)
        qualification_answer(token=caught.value.qualification.token, position=1,
                             answers={"coherence": coherence, "sentiment": 2}, seconds_spent=4.0)
    return campaign


def test_the_change_form_saves_a_test_and_names_a_wrong_one(researcher_client, campaign):
    setting = {"items": ["q-0"], "pass_mark": 0.8, "feedback": True}
    response = researcher_client.post(change_url(campaign), form_data(
        campaign, qualification=json.dumps({**setting, "pass_mark": 80})))
    errors = response.context["adminform"].form.errors["qualification"]
    assert any(e.startswith("qualification.pass_mark:") for e in errors), errors
    response = researcher_client.post(change_url(campaign), form_data(
        campaign, qualification=json.dumps(setting)))
    assert response.status_code == 302
    assert Campaign.objects.get(pk=campaign.pk).qualification == setting
    response = researcher_client.post(change_url(campaign), form_data(campaign, qualification=""))
    assert Campaign.objects.get(pk=campaign.pk).qualification == {}  # empty: no test


def test_the_dashboard_counts_the_qualified_and_the_failed(researcher_client, researcher):
    campaign = with_tests(researcher)
    page = researcher_client.get(
        reverse("admin:campaigns_campaign_dashboard", args=[campaign.pk])).content.decode()
    assert '<span class="dash-number">1</span> qualified' in page
    assert "1 failed it, 0 taking it now" in page
    assert "1 qualification" in page  # among the screened out, by its reason


def test_the_submissions_page_downloads_the_tests_answers(researcher_client, researcher):
    campaign = with_tests(researcher)
    url = reverse("admin:campaigns_campaign_submissions", args=[campaign.pk])
    assert "1 qualified, 1 failed" in researcher_client.get(url).content.decode()
    response = researcher_client.get(url + "?download=qualification")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert {(r["participant_id"], r["status"], r["answer_correct"]) for r in rows} == {
        ("p-pass", "passed", "true"), ("p-fail", "failed", "false")}


def test_a_test_answers_provenance_is_shown_read_only_on_the_worker_page_and_in_the_csv(
        researcher_client, researcher):
    campaign = with_tests(researcher)
    record = {"typed": 2, "pasted": 130, "pastes": 1, "ms": 4200, "chars": 130}
    answer = QualificationAnswer.objects.get(qualification__worker__platform_id="p-pass")
    answer.provenance = {"feedback": record}
    answer.save(update_fields=["provenance"])

    worker = reverse("admin:campaigns_worker_change", args=[answer.qualification.worker_id])
    page = researcher_client.get(worker).content.decode()
    row = page[page.index("q-0 (qualification test)"):].split("</tr>")[0]
    assert "<td>feedback</td><td>130</td><td>2</td><td>130</td>" in row
    assert "<td>4.2</td>" in row and "<strong>mostly pasted</strong>" in row
    assert "<input" not in row  # shown, not editable

    url = reverse("admin:campaigns_campaign_submissions", args=[campaign.pk])
    rows = list(csv.DictReader(io.StringIO(
        researcher_client.get(url + "?download=qualification").content.decode())))
    given = {r["participant_id"]: r["provenance"] for r in rows}
    assert json.loads(given["p-pass"]) == {"feedback": record}
    assert given["p-fail"] == ""  # the page recorded nothing
