"""The statistics and report pages' figures in headless Chromium under the site's CSP: every
figure's image is drawn (its SVG loads), has its text alternative and data table, the headline
comes first, and axe finds nothing in the figures and the headline."""
import pytest
from django.test import Client
from django.urls import reverse

from tests.analysis.figures.samples import sample_campaign
from tests.browser.axe import AXE, TAGS
from tests.browser.conftest import _no_rate_limits  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("few_resamples")]
SECTIONS = [[".stats-headline"], [".stats-figures"]]


def _violations(page) -> list[str]:
    page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate("([include, tags]) => axe.run({include}, "
                           "{runOnly: {type: 'tag', values: tags}})", [SECTIONS, TAGS])
    return [f"{v['id']}: {v['help']} at " + "; ".join(" ".join(n["target"])
                                                      for n in v["nodes"][:5])
            for v in result["violations"]]


def _open(page, live_server, admin_user, url):
    client = Client()
    client.force_login(admin_user)
    page.context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value,
                               "url": live_server.url}])
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{live_server.url}{url}")
    # computed by the worker; the "being computed" page refreshes itself into the page
    page.wait_for_selector(".stats-figure img", timeout=90_000)
    page.wait_for_function("() => Array.from(document.querySelectorAll('.stats-figure img'))"
                           ".every(i => i.complete && i.naturalWidth > 0)", timeout=30_000)
    return errors


@pytest.mark.parametrize("page_name", ["statistics", "report"])
def test_every_figure_is_drawn_with_its_alternative_and_table_and_axe_finds_nothing(
        page, live_server, admin_user, owner, celery_worker, page_name):
    campaign = sample_campaign(owner, "pairwise-preference")
    url = reverse(f"admin:campaigns_campaign_{page_name}", args=[campaign.pk])
    errors = _open(page, live_server, admin_user, url)
    figures = page.locator(".stats-figure")
    keys = [figures.nth(i).get_attribute("data-key") for i in range(figures.count())]
    assert {"bradley_terry:preference", "win_rates:preference", "agreement"} <= set(keys)
    for i in range(figures.count()):
        figure = figures.nth(i)
        assert len(figure.locator("img").get_attribute("alt")) > 20
        assert figure.locator("table tbody tr").count() >= 1
    headline = page.locator(".stats-headline")
    assert "Bradley-Terry" in headline.inner_text() and "Krippendorff" in headline.inner_text()
    assert headline.bounding_box()["y"] < page.locator(".stats-figures").bounding_box()["y"]
    assert not [e for e in errors if "Content Security Policy" in e], errors
    assert _violations(page) == []
    page.screenshot(path=f"/tmp/shots/figures-{page_name}.png", full_page=False)
