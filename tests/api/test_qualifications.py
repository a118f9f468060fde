"""The qualification setting over the API, and GET /api/campaigns/<slug>/qualifications/: the
test's outcomes and answers, apart from the annotations."""
import pytest

from campaigns.models import Item
from campaigns.work import assignment_claim, worker_get_or_create
from campaigns.work.qualification import qualification_answer
from tests.factories import make_campaign, make_items

pytestmark = pytest.mark.django_db


def with_a_failed_test(owner):
    campaign = make_campaign(owner=owner, slug="tested")
    make_items(campaign, 2)
    make_items(campaign, 1, control=Item.Control.GOLD, gold={"coherence": 4}, prefix="q")
    campaign.qualification = {"items": ["q-0"], "pass_mark": 1}
    campaign.save()
    worker = worker_get_or_create(campaign=campaign, platform="link", platform_id="=p1")
    try:
        assignment_claim(campaign=campaign, worker=worker)
    except Exception as exc:  # noqa: BLE001 (QualificationRequired carries the test)
        test = exc.qualification
    qualification_answer(token=test.token, position=1,
                         answers={"coherence": 1, "sentiment": 2}, seconds_spent=2.0)
    return campaign


def test_the_setting_is_read_and_written_and_checked(api, owner):
    campaign = make_campaign(owner=owner, slug="s")
    url = f"/api/campaigns/{campaign.slug}/"
    bad = api.patch(url, {"qualification": {"items": ["a"], "pass_mark": 5}}, format="json")
    assert bad.status_code == 400 and "qualification.pass_mark" in bad.content.decode()
    good = api.patch(url, {"qualification": {"items": ["a"], "pass_mark": 0.5}}, format="json")
    assert good.status_code == 200
    assert good.json()["qualification"] == {"items": ["a"], "pass_mark": 0.5}
    assert any("qualification test lists 1 item(s)" in w for w in good.json()["warnings"])


def test_the_answers_are_listed_with_the_outcome(api, owner):
    campaign = with_a_failed_test(owner)
    body = api.get(f"/api/campaigns/{campaign.slug}/qualifications/").json()
    assert body["counts"] == {"active": 0, "passed": 0, "failed": 1}
    [row] = body["answers"]
    assert row["participant_id"] == "=p1" and row["status"] == "failed"
    assert row["item"] == "q-0" and row["answer_correct"] is False


def test_the_csv_download_neutralises_formulas(api, owner):
    campaign = with_a_failed_test(owner)
    response = api.get(f"/api/campaigns/{campaign.slug}/qualifications/?download=csv")
    assert response["Content-Type"].startswith("text/csv")
    header, row = response.content.decode().splitlines()
    assert header.startswith("qualification,platform,participant_id,status")
    assert ",'=p1,failed," in row and "q-0" in row


def test_someone_elses_campaign_is_a_404(api, other_owner):
    campaign = make_campaign(owner=other_owner)
    assert api.get(f"/api/campaigns/{campaign.slug}/qualifications/").status_code == 404
