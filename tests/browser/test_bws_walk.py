"""Walk a best-worst campaign in Chromium, from the Prolific link to the completion code, on a
desktop and on a phone: every output shown, digit keys for best and shift+digit for worst, one
output never both, a refused submit."""

import pytest
from django.contrib.auth import get_user_model

from campaigns.models import Annotation, Assignment, Item
from campaigns.work.completion import completion_code_for
from tests.browser.walk import SIZES, save, start, worker_page
from tests.factories import BWS_SCHEMA, make_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PARAMS = "PROLIFIC_PID=5f1a2b3c4d5e6f7a8b9c0d1f&STUDY_ID=study-8&SESSION_ID=session-8"
SYSTEMS = ["gpt-x", "llama-y", "mistral-z", "qwen-w"]
BEST, WORST = 'input[name="q-bestworst.best"]', 'input[name="q-bestworst.worst"]'


def checked(page, selector):
    return [r.get_attribute("value") for r in page.locator(selector).all() if r.is_checked()]


@pytest.mark.parametrize("size", list(SIZES))
def test_a_worker_walks_a_best_worst_campaign_to_the_completion_code(browser, live_server,
                                                                      size):
    context, page = worker_page(browser, size)
    owner = get_user_model().objects.create_user("bws-owner")
    campaign = make_campaign(owner=owner, schema=BWS_SCHEMA, slug="bws-walk",
                             items_per_assignment=2)
    for n in range(2):
        Item.objects.create(campaign=campaign, external_id=f"q{n}", slots_wanted=3, data={
            "prompt": f"Prompt {n}", "outputs": [
                {"system": s, "text": f"Answer of {s} to {n}. " * (20 if i == 0 else 2)}
                for i, s in enumerate(SYSTEMS)]})
    start(page, f"{live_server.url}/c/{campaign.slug}/?{PARAMS}")
    assignment = Assignment.objects.get(campaign=campaign)

    rows = page.locator(".bws-row")
    assert rows.count() == 4
    assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"]
    for n in range(4):
        assert rows.nth(n).locator(".pair-text").is_visible()

    # Nothing chosen: refused, with the message on the page, nothing stored.
    save(page)
    assert page.locator("form.answers .has-error").count() == 1
    assert not Annotation.objects.exists()

    # First item by keyboard: 2 makes B best; shift+2 makes B worst and clears B as best;
    # 1 makes A best.
    page.wait_for_load_state("load")
    page.locator("body").click(position={"x": 1, "y": 1})
    page.keyboard.press("2")
    assert checked(page, BEST) == ["B"]
    page.keyboard.press("Shift+2")
    assert checked(page, WORST) == ["B"] and checked(page, BEST) == []
    page.keyboard.press("1")
    assert checked(page, BEST) == ["A"] and checked(page, WORST) == ["B"]
    save(page)

    # Second item by taps or clicks: D worst, then D best clears D as worst; C worst.
    page.locator("label[for$='-worst-D']").click()
    page.locator("label[for$='-best-D']").click()
    assert checked(page, BEST) == ["D"] and checked(page, WORST) == []
    page.locator("label[for$='-worst-C']").click()
    save(page)

    code = completion_code_for(assignment)
    assert page.url.endswith(f"/{assignment.token}/done/")
    assert page.locator("#completion-code").inner_text() == code
    answers = [Annotation.objects.get(item=assignment.slots.get(position=n).item)
               .answers["bestworst"] for n in (1, 2)]
    assert [(a["best"], a["worst"]) for a in answers] == [("A", "B"), ("D", "C")]
    assert all(sorted(a["order"]) == SYSTEMS for a in answers)
    context.close()
