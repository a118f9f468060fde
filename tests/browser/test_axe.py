"""axe-core on every worker page state of the five seed campaigns: zero violations.

States: the entry page, each item page, an item page after a rejected save, the finish page
(items left), the done page; the item page on a phone too (narrow layout, scroll boxes).
"""
import pytest
from django.contrib.auth import get_user_model

from campaigns.models import Assignment, Campaign
from campaigns.services.seeds import seed_campaigns_load
from tests.browser.axe import assert_accessible, axe_violations
from tests.browser.test_seed_campaigns import PARAMS, answer_page, save, start

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SEEDS = ["movie-continuation", "summary-consistency", "story-rating", "comparative-rubric",
         "translation-acceptability"]


def open_every_details(page):
    """Instructions, examples and label help open: their content is checked too."""
    page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")


@pytest.mark.parametrize("slug", SEEDS)
def test_every_worker_page_of_the_seed_has_no_axe_violation(page, browser, live_server, slug):
    seed_campaigns_load(owner=get_user_model().objects.create_user("axe"), slugs=(slug,))
    Campaign.objects.filter(slug=slug, items_per_assignment__gt=2).update(items_per_assignment=2)
    entry_url = f"{live_server.url}/c/{slug}/?{PARAMS}"
    page.goto(entry_url)
    assert_accessible(page, f"{slug} entry")

    start(page, entry_url)
    assert_accessible(page, f"{slug} item 1")
    open_every_details(page)
    assert_accessible(page, f"{slug} item 1, instructions open")
    save(page)  # nothing answered: rejected
    assert page.locator(".error-summary").is_visible()
    assert_accessible(page, f"{slug} item 1 after a rejected save")

    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                has_touch=True)
    phone_page = phone.new_page()
    phone_page.goto(page.url)
    open_every_details(phone_page)
    assert_accessible(phone_page, f"{slug} item 1 on a phone, instructions open")
    phone_page.goto(entry_url)
    assert_accessible(phone_page, f"{slug} entry on a phone")
    phone.close()

    token = Assignment.objects.get(campaign__slug=slug).token
    page.goto(f"{live_server.url}/a/{token}/finish/")
    assert_accessible(page, f"{slug} finish page with items left")

    page.goto(f"{live_server.url}/a/{token}/1/")
    while "/done/" not in page.url:
        answer_page(page, 2)
        save(page)
        if "/done/" not in page.url:
            assert_accessible(page, f"{slug} {page.url}")
    assert_accessible(page, f"{slug} done page")


def test_the_harness_reports_a_violation_it_is_shown(page, live_server):
    page.goto(f"{live_server.url}/c/no-such-campaign/")
    page.evaluate("""() => { const i = document.createElement('img');
                             i.src = 'data:,'; document.body.append(i); }""")
    assert any(v.startswith("image-alt") for v in axe_violations(page))
