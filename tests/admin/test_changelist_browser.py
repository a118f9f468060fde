"""In Chromium at 1,400 px: the campaign list shows its "Dashboard" link whole."""
import os

import pytest
from django.urls import reverse

from campaigns.services.researchers import researcher_create
from tests.admin.conftest import add_items
from tests.admin.test_browser import log_in
from tests.factories import make_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("SHOTS_DIR", "/tmp/shots")


def test_the_dashboard_link_is_not_clipped_at_1400_px(admin_page, live_server):
    page = admin_page
    page.set_viewport_size({"width": 1400, "height": 900})
    user, password = researcher_create(username="rhea", password="pw-rhea-12345")
    from campaigns.services.seeds import seed_campaigns_load

    seed_campaigns_load(owner=user)  # the five seed campaigns, as `make demo` shows them
    campaign = make_campaign(owner=user, name="Averyveryverylongcampaignnamewithoutanyspaces",
                             slug="averyveryverylongcampaignslugwithoutanyhyphens")
    add_items(campaign, 2)
    log_in(page, live_server, "rhea", password)
    page.goto(live_server.url + reverse("admin:campaigns_campaign_changelist"))
    link = page.locator("td.field-links a").first
    box = link.bounding_box()
    cell = page.locator("td.field-links").first.bounding_box()
    visible = page.evaluate("""() => {
        const a = document.querySelector('td.field-links a');
        const r = a.getBoundingClientRect();
        const wrap = document.querySelector('#changelist-form .results') || document.body;
        const w = wrap.getBoundingClientRect();
        return r.right <= w.right + 0.5 && wrap.scrollWidth <= wrap.clientWidth + 1
               && r.right <= window.innerWidth;
    }""")
    page.screenshot(path=f"{SHOTS}/admin-campaign-list-1400.png", full_page=True)
    assert link.inner_text() == "Dashboard"
    assert visible, (box, cell)
    assert box["x"] + box["width"] <= cell["x"] + cell["width"] + 0.5
