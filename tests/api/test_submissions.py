"""GET /api/campaigns/<slug>/submissions/: the approve / reject / bonus list over the API."""
import pytest

from tests.selectors.test_approvals import PLAN, _study

pytestmark = pytest.mark.django_db


def test_the_list_has_one_row_per_submission_with_action_and_bonus(api, owner):
    campaign = _study(owner)
    body = api.get(f"/api/campaigns/{campaign.slug}/submissions/").json()
    rows = {r["participant_id"]: r for r in body["submissions"]}
    assert set(rows) == set(PLAN)
    assert rows["p-attention"]["action"] == "reject"
    assert rows["p-ok2"]["bonus"] == "0.90" and rows["p-ok2"]["submission_id"] == "sess-p-ok2"


def test_the_bonus_download_is_prolifics_csv(api, owner):
    campaign = _study(owner)
    response = api.get(f"/api/campaigns/{campaign.slug}/submissions/?download=bonus")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    lines = response.content.decode().splitlines()
    assert len(lines) == len(PLAN) - 2 and all(len(line.split(",")) == 2 for line in lines)


def test_an_unknown_download_is_a_400_naming_the_parameter(api, owner):
    campaign = _study(owner)
    response = api.get(f"/api/campaigns/{campaign.slug}/submissions/?download=xlsx")
    assert response.status_code == 400 and "download" in response.json()["extra"]["fields"]


def test_someone_elses_campaign_is_a_404(api, other_owner):
    campaign = _study(other_owner)
    assert api.get(f"/api/campaigns/{campaign.slug}/submissions/").status_code == 404
