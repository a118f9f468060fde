"""Progress: annotation slot counts overall and per system."""
import pytest

from tests.api.conftest import make_annotation, make_items

pytestmark = pytest.mark.django_db


def test_it_counts_overall_and_per_system(api, campaign):
    a_items = make_items(campaign, 2, system="a")
    make_items(campaign, 1, system="b")
    make_annotation(campaign, a_items[0], worker_id="W1")
    make_annotation(campaign, a_items[0], worker_id="W2")
    body = api.get(f"/api/campaigns/{campaign.slug}/progress/").json()
    assert body["status"] == "live" and body["annotations"] == 2
    assert body["overall"]["items"] == 3 and body["overall"]["wanted"] == 9
    assert body["overall"]["done"] == 2
    per_system = {p["system"]: p for p in body["per_system"]}
    assert per_system["a"]["done"] == 2 and per_system["a"]["wanted"] == 6
    assert per_system["b"]["done"] == 0 and per_system["b"]["remaining"] == 3


def test_an_empty_campaign_has_zero_progress(api, campaign):
    body = api.get(f"/api/campaigns/{campaign.slug}/progress/").json()
    assert body["overall"]["items"] == 0 and body["overall"]["percent_done"] == 0.0
    assert body["per_system"] == []
