"""Admin pages in Chromium under the site's CSP: the dashboard's charts, the Markdown preview, the
campaign list at 1,400 px, and the starter gallery."""
import os

import pytest
from django.urls import reverse

from campaigns.models import Campaign
from campaigns.services.researchers import researcher_create
from campaigns.starters import starter_get
from tests.admin.conftest import add_items
from tests.admin.simulate import simulate
from tests.factories import make_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


# In Chromium under the site's CSP: the dashboard draws its charts, the Markdown preview works.


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


# In Chromium at 1,400 px: the campaign list shows its "Dashboard" link whole.


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


# In Chromium under the site's CSP: a researcher picks a template in the gallery, previews the
# form as the worker will see it, and saves the campaign.


@pytest.mark.parametrize("name", ["mqm", "pairwise-preference"])
def test_a_template_prefills_the_form_previews_as_the_worker_page_and_saves(admin_page,
                                                                          live_server, name):
    page = admin_page
    _, password = researcher_create(username="rhea", password="pw-rhea-12345")
    log_in(page, live_server, "rhea", password)
    page.goto(live_server.url + reverse("admin:campaigns_campaign_add"))
    title = page.get_by_role("heading", name=starter_get(name).title, exact=True)
    card = page.locator(".starter-card", has=title)
    with page.expect_navigation():
        card.get_by_role("link", name="Use this template").click()
    assert page.input_value("#id_name") == starter_get(name).title
    assert f'"kind": "{starter_get(name).kinds[-1]}"' in page.input_value("#id_schema")
    page.screenshot(path=f"{SHOTS}/admin-gallery-{name}.png", full_page=True)

    errors = []  # listened for on the context: the preview opens in a new tab
    page.context.on("weberror", lambda e: errors.append(str(e.error)))
    page.context.on("console", lambda m: errors.append(m.text) if "Refused to" in m.text else None)
    with page.context.expect_page() as opened:
        page.get_by_role("button", name="Show the form as the worker will see it").click()
    preview = opened.value
    preview.wait_for_load_state()
    kind = starter_get(name).schema["questions"][0]["kind"]
    preview.locator(f'[data-kind="{kind}"]').first.wait_for()
    assert "nothing you enter here is recorded" in preview.content().lower()
    assert errors == []
    preview.close()

    page.fill("#id_slug", f"my-{name}")
    with page.expect_navigation():
        page.locator("input[name=_save]").first.click()
    assert Campaign.objects.get(slug=f"my-{name}").schema == starter_get(name).schema
