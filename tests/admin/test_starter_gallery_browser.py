"""In Chromium under the site's CSP: a researcher picks a template in the gallery, previews the
form as the worker will see it, and saves the campaign."""
import pytest
from django.urls import reverse

from campaigns.models import Campaign
from campaigns.services.researchers import researcher_create
from campaigns.starters import starter_get
from tests.admin.test_browser import SHOTS, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("name", ["mqm", "pairwise-preference"])
def test_a_template_prefills_the_form_previews_as_the_worker_page_and_saves(admin_page,
                                                                          live_server, name):
    page = admin_page
    _, password = researcher_create(username="rhea", password="pw-rhea-12345")
    log_in(page, live_server, "rhea", password)
    page.goto(live_server.url + reverse("admin:campaigns_campaign_add"))
    card = page.locator(".starter-card", has_text=starter_get(name).title)
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
