"""In Chromium under the site's CSP: the dashboard draws its charts, the Markdown preview works."""
import os

import pytest
from django.urls import reverse

from campaigns.services.researchers import researcher_create
from tests.admin.conftest import add_items
from tests.admin.simulate import simulate
from tests.factories import make_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("SHOTS_DIR", "/tmp/shots")


def log_in(page, live_server, username: str, password: str) -> None:
    page.goto(f"{live_server.url}{reverse('admin:login')}")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    with page.expect_navigation():
        page.click("input[type=submit]")


def test_the_dashboard_draws_every_chart_and_the_markdown_preview_renders(admin_page,
                                                                          live_server):
    page = admin_page
    user, password = researcher_create(username="rhea", password="pw-rhea-12345")
    campaign = make_campaign(owner=user)
    add_items(campaign, 4)
    simulate(campaign, workers=3)
    log_in(page, live_server, "rhea", password)

    page.goto(live_server.url + reverse("admin:campaigns_campaign_dashboard",
                                        args=[campaign.pk]))
    page.wait_for_function("window.Chart && Object.keys(window.Chart.instances).length >= 4")
    # progress, per day, and one distribution per scored question (coherence, sentiment)
    assert page.evaluate("Object.keys(window.Chart.instances).length") == 4
    page.screenshot(path=f"{SHOTS}/admin-dashboard.png", full_page=True)

    page.goto(live_server.url + reverse("admin:campaigns_campaign_change", args=[campaign.pk]))
    page.fill("#id_instructions", "Rate **carefully**. <script>window.pwned = 1</script>")
    page.locator("#id_instructions ~ button.markdown-preview-button").click()
    preview = page.locator("#id_instructions ~ .markdown-preview.live")
    preview.locator("strong").wait_for()
    assert preview.locator("strong").inner_text() == "carefully"
    assert page.evaluate("window.pwned") is None
