"""The statistics endpoint: the analysis selector's tables for one campaign."""
import pytest

from tests.api.conftest import make_annotation, make_items

pytestmark = pytest.mark.django_db


def test_the_stats_endpoint_returns_the_analysis_tables(api, campaign):
    for item in make_items(campaign, 2):
        make_annotation(campaign, item, worker_id="W1", answers={"coherence": 4, "sentiment": 2})
        make_annotation(campaign, item, worker_id="W2", answers={"coherence": 3, "sentiment": 2})
    response = api.get(f"/api/campaigns/{campaign.slug}/stats/")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["campaign"] == campaign.slug and body["exclude_flagged"] is False
    assert body["counts"]["annotations"] == 4 and body["counts"]["workers"] == 2


def test_the_stats_of_an_empty_campaign_are_not_an_error(api, campaign):
    response = api.get(f"/api/campaigns/{campaign.slug}/stats/?exclude_flagged=true")
    assert response.status_code == 200
    assert response.json()["counts"]["annotations"] == 0
