"""The qualification step in Chromium: a Prolific participant below the pass mark is returned
with the failed-checks code (the navigation intercepted) with nothing claimed; one who passes,
with feedback after each answer, goes on to the main items and their completion code. Every
page of the test has zero axe violations, on a phone too (390x844), where it fits the width
and a campaign that turns pasting off refuses a paste into a free-text answer."""
import re

import pytest

from campaigns.models import (
    Annotation,
    Assignment,
    Campaign,
    Item,
    Qualification,
    QualificationAnswer,
    Worker,
)
from tests.browser.axe import assert_accessible
from tests.browser.test_screening import COMPLETE, link, movie, prolific_visits  # noqa: F401
from tests.browser.walk import SIZES, save, worker_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GOLD = {"coherence": 4, "sentiment": 5}


def with_test(campaign, *, feedback):
    for n in (1, 2):
        Item.objects.create(
            campaign=campaign, external_id=f"qual-{n}", control=Item.Control.GOLD, gold=GOLD,
            slots_wanted=0, data={"prompt": f"I loved this film from start to finish, and {n}",
                                  "completion": " the acting was wonderful throughout."})
    Campaign.objects.filter(pk=campaign.pk).update(
        qualification={"items": ["qual-1", "qual-2"], "pass_mark": 1, "feedback": feedback},
        completion_code_failed_checks="FAIL77")


def rate(page, coherence, sentiment):
    page.locator(f'input[name="q-coherence"][value="{coherence}"]').check()
    page.locator(f'input[name="q-sentiment"][value="{sentiment}"]').check()


def test_a_failed_test_returns_the_participant_with_the_failed_checks_code(
        page, live_server, movie, prolific_visits):  # noqa: F811
    with_test(movie, feedback=False)
    page.goto(link(live_server, "failer"))
    save(page)
    assert re.search(r"/q/[\w-]+/1/$", page.url), page.url
    assert page.locator("#qualification-intro").is_visible()
    assert_accessible(page, "the test's first item")
    rate(page, 4, 5)
    save(page)
    assert page.url.endswith("/2/")
    rate(page, 1, 5)
    save(page)
    assert page.locator("h1").inner_text() == "Thank you for taking the test"
    assert page.locator("#screened-out-code").inner_text() == "FAIL77"
    assert_accessible(page, "the failed test's page")
    page.wait_for_url(f"{COMPLETE}*", timeout=10_000)  # by itself, after the pause
    assert prolific_visits == [f"{COMPLETE}?cc=FAIL77"]
    assert not Assignment.objects.exists()
    assert not Item.objects.filter(slots_taken__gt=0).exists()
    assert Worker.objects.get().screened_out_reason == "qualification"
    assert Qualification.objects.get().status == "failed"


def test_a_passed_test_with_feedback_goes_on_to_the_main_items_and_the_code(
        page, live_server, movie, prolific_visits):  # noqa: F811
    with_test(movie, feedback=True)
    page.goto(link(live_server, "passer"))
    save(page)
    rate(page, 4, 5)
    save(page)
    assert page.locator("#feedback-heading").inner_text() == "Correct"
    assert page.locator("#feedback-table td").first.inner_text() == "good"  # the label
    assert_accessible(page, "the feedback page")
    with page.expect_navigation():
        page.locator("#continue-link").click()
    assert page.url.endswith("/2/")
    rate(page, 4, 5)
    save(page)
    assert page.locator("#continue-link").inner_text().startswith("See the result")
    with page.expect_navigation():
        page.locator("#continue-link").click()
    assert page.locator("h1").inner_text() == "You passed the test"
    assert_accessible(page, "the passed test's page")
    assert not Assignment.objects.exists()  # nothing claimed until the main task begins
    save(page)
    assert re.search(r"/a/[\w-]+/1/$", page.url), page.url
    rate(page, 3, 3)
    save(page)
    assert page.locator("#completion-code").inner_text() == movie.completion_code
    page.wait_for_url(f"{COMPLETE}*", timeout=10_000)
    assert prolific_visits == [f"{COMPLETE}?cc={movie.completion_code}"]
    assert Annotation.objects.count() == 1 and QualificationAnswer.objects.count() == 2
    assert not Annotation.objects.filter(item__external_id__startswith="qual-").exists()


WIDER_THAN_THE_SCREEN = """(limit) => [...document.querySelectorAll("body *")]
    .filter((el) => el.getBoundingClientRect().right > limit + 1)
    .map((el) => `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}.${el.className}`)
    .slice(0, 8)"""


def fits_a_phone(page) -> None:
    """No horizontal scroll at 390 px; else the elements that stick out, to say why."""
    limit = SIZES["phone"]["width"]
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= limit, (f"{page.url} is {width}px wide on a {limit}px phone: "
                            f"{page.evaluate(WIDER_THAN_THE_SCREEN, limit)}")


def test_on_a_phone_the_test_fits_refuses_a_paste_and_keeps_the_typing_record(
        browser, live_server, movie):  # noqa: F811
    with_test(movie, feedback=True)
    Campaign.objects.filter(pk=movie.pk).update(block_paste=True)
    context, page = worker_page(browser, "phone", touch=True)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(link(live_server, "phone"))
    save(page)
    assert re.search(r"/q/[\w-]+/1/$", page.url), page.url
    fits_a_phone(page)
    assert_accessible(page, "the test's first item on a phone")

    rate(page, 4, 5)
    box = page.locator('textarea[name="q-feedback"]')
    box.tap()
    page.evaluate("navigator.clipboard.writeText('Pasted from somewhere else.')")
    page.keyboard.press("ControlOrMeta+V")
    assert box.input_value() == ""
    assert page.get_by_role("status").inner_text() == "Pasting is turned off for this study."
    fits_a_phone(page)
    assert_accessible(page, "the test's item on a phone after a refused paste")
    page.keyboard.type("Clear enough.")
    save(page)
    assert page.locator("#feedback-heading").inner_text() == "Correct"
    fits_a_phone(page)
    assert_accessible(page, "the feedback page on a phone")
    record = QualificationAnswer.objects.get().provenance["feedback"]
    assert (record["typed"], record["pasted"], record["pastes"]) == (len("Clear enough."), 0, 0)
    assert record["chars"] == len("Clear enough.")

    with page.expect_navigation():
        page.locator("#continue-link").tap()
    rate(page, 4, 5)
    save(page)
    with page.expect_navigation():
        page.locator("#continue-link").tap()
    assert page.locator("h1").inner_text() == "You passed the test"
    fits_a_phone(page)
    assert_accessible(page, "the passed test's page on a phone")
    context.close()
    assert not errors, errors
