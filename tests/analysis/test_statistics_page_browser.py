"""The statistics page in headless Chromium: charts drawn, no script errors, no CSP violations."""
import pytest
from django.test import Client
from django.urls import reverse

from tests.browser.conftest import _no_rate_limits  # noqa: F401 (fixture)
from tests.selectors.test_analysis import _study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("few_resamples")]


def test_the_statistics_page_draws_its_charts_under_the_csp(page, live_server, admin_user,
                                                            owner, celery_worker):
    campaign = _study(owner)
    client = Client()
    client.force_login(admin_user)
    page.context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value,
                               "url": live_server.url}])
    url = reverse("admin:campaigns_campaign_statistics", args=[campaign.pk])
    page.goto(f"{live_server.url}{url}?exclude_flagged=1")
    # The figures are computed by the worker; the "being computed" page refreshes itself into
    # the statistics page once they are stored.
    page.wait_for_function("() => window.Chart && document.querySelector('#chart-agreement')"
                           ".getAttribute('width') !== null", timeout=60_000)
    drawn = page.evaluate("() => Array.from(document.querySelectorAll('canvas'))"
                          ".filter(c => window.Chart.getChart(c)).length")
    assert drawn == page.locator("canvas").count() >= 4
    assert page.get_by_text("What excluding flagged workers changes").is_visible()
    page.screenshot(path="/tmp/shots/analysis-statistics.png", full_page=True)
