"""One request per answered item, as a worker's browser sees it: the start and every save are
answered with the next page itself (no redirect and GET), the address bar names that page, and
reload, back and forward fetch the pages with plain GETs, never resending a form."""
import re

import pytest
from django.contrib.auth import get_user_model

from campaigns.models import Annotation, Assignment
from tests.browser.walk import SIZES, save, worker_page
from tests.factories import make_campaign, make_items

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PARAMS = "PROLIFIC_PID=5f1a2b3c4d5e6f7a8b9c0d1e&STUDY_ID=study-3&SESSION_ID=session-3"


def documents(page) -> list[tuple[str, str]]:
    """Every page (document) the browser fetches from now on, as (method, path)."""
    seen: list[tuple[str, str]] = []
    page.on("request", lambda r: seen.append((r.method, re.sub(r"^https?://[^/]+", "", r.url)))
            if r.resource_type == "document" else None)
    return seen


def rate(page, coherence: int) -> None:
    page.wait_for_load_state("load")
    page.locator(f'input[name="q-coherence"][value="{coherence}"]').check()
    page.locator('input[name="q-sentiment"][value="3"]').check()


@pytest.mark.parametrize("size", list(SIZES))
def test_each_answer_is_one_request_and_reload_back_forward_are_plain_gets(browser, live_server,
                                                                          size):
    owner = get_user_model().objects.create_user(f"flow-{size}")
    campaign = make_campaign(owner=owner, slug=f"flow-{size}", items_per_assignment=3)
    make_items(campaign, 3)
    context, page = worker_page(browser, size)
    page.goto(f"{live_server.url}/c/{campaign.slug}/?{PARAMS}")
    fetched = documents(page)
    save(page)  # start: answered with the first item itself
    assignment = Assignment.objects.get()
    item = f"/a/{assignment.token}/{{}}/"
    assert page.url.endswith(item.format(1)) and "Item 1 of 3" in page.title()
    study = f"/c/{campaign.slug}/?{PARAMS}"
    assert fetched == [("POST", study)]

    rate(page, 4)
    save(page)
    assert page.url.endswith(item.format(2)) and "Item 2 of 3" in page.title()
    assert fetched[-1] == ("POST", item.format(1))  # the save, answered with item 2

    page.reload()  # a plain GET of item 2, not the save again
    assert fetched[-1] == ("GET", item.format(2)) and "Item 2 of 3" in page.title()
    page.go_back()  # item 1, its saved answer shown
    assert page.url.endswith(item.format(1)) and fetched[-1] == ("GET", item.format(1))
    assert page.locator('input[name="q-coherence"][value="4"]').is_checked()
    page.go_forward()
    assert page.url.endswith(item.format(2)) and fetched[-1] == ("GET", item.format(2))

    rate(page, 2)
    save(page)
    rate(page, 5)
    save(page)  # the last item: handed in, answered with the code
    done = f"/a/{assignment.token}/done/"
    assert page.url.endswith(done) and page.locator("#completion-code").is_visible()
    posts = [path for method, path in fetched if method == "POST"]
    assert posts == [study, item.format(1), item.format(2), item.format(3)]
    page.reload()
    assert fetched[-1] == ("GET", done) and page.locator("#completion-code").is_visible()
    assert Annotation.objects.count() == 3
    assert sorted(a.answers["coherence"] for a in Annotation.objects.all()) == [2, 4, 5]
    context.close()
