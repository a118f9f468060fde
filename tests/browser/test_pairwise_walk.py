"""Walk a pairwise campaign in Chromium, from the Prolific link to the completion code, on a
desktop and on a phone: outputs side by side or stacked, keys and clicks, a refused submit."""

import pytest
from django.contrib.auth import get_user_model

from campaigns.models import Annotation, Assignment, Item
from campaigns.work.completion import completion_code_for
from tests.browser.walk import SIZES, save, start, worker_page
from tests.factories import PAIRWISE_SCHEMA, make_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PARAMS = "PROLIFIC_PID=5f1a2b3c4d5e6f7a8b9c0d1e&STUDY_ID=study-9&SESSION_ID=session-9"


@pytest.mark.parametrize("size", list(SIZES))
def test_a_worker_walks_a_pairwise_campaign_to_the_completion_code(browser, live_server, size):
    context, page = worker_page(browser, size)
    owner = get_user_model().objects.create_user("pair-owner")
    campaign = make_campaign(owner=owner, schema=PAIRWISE_SCHEMA, slug="pair-walk",
                             items_per_assignment=2)
    for n in range(2):
        Item.objects.create(campaign=campaign, external_id=f"q{n}", slots_wanted=3, data={
            "prompt": f"Prompt {n}", "outputs": [
                {"system": "gpt-x", "text": f"First answer {n}. " * 30},
                {"system": "llama-y", "text": f"Second answer {n}."}]})
    start(page, f"{live_server.url}/c/{campaign.slug}/?{PARAMS}")
    assignment = Assignment.objects.get(campaign=campaign)

    panes = page.locator(".pair-pane")
    assert panes.count() == 2
    a, b = panes.nth(0).bounding_box(), panes.nth(1).bounding_box()
    if size == "desktop":
        assert abs(a["y"] - b["y"]) < 2 and b["x"] > a["x"] + a["width"] - 1  # side by side
    else:
        assert b["y"] >= a["y"] + a["height"] - 1  # stacked
        assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"]

    # Nothing chosen: refused, with the message on the page, nothing stored.
    save(page)
    assert page.locator("form.answers .has-error").count() == 1
    assert not Annotation.objects.exists()

    # First item by keyboard: b picks "B is better"; a tie clears the strength.
    page.wait_for_load_state("load")
    page.locator("body").click(position={"x": 1, "y": 1})
    page.keyboard.press("b")
    assert page.locator('input[name="q-preference.choice"][value="B"]').is_checked()
    page.locator('input[name="q-preference.strength"][value="clearly"]').check()
    page.locator("textarea").fill("Shorter and to the point.")
    save(page)
    # Second item by clicks.
    page.get_by_text("About the same").click()
    save(page)

    code = completion_code_for(assignment)
    assert page.url.endswith(f"/{assignment.token}/done/")
    assert page.locator("#completion-code").inner_text() == code
    answers = [Annotation.objects.get(item=assignment.slots.get(position=n).item)
               .answers["preference"] for n in (1, 2)]
    assert answers[0]["choice"] == "B" and answers[0]["strength"] == "clearly"
    assert answers[0]["reason"] == "Shorter and to the point."
    assert answers[1]["choice"] == "tie" and "strength" not in answers[1]
    assert all(sorted(x["order"]) == ["gpt-x", "llama-y"] for x in answers)
    context.close()
