"""Walk each seed campaign in Chromium, from the Prolific link to the completion code.

Each walk includes a rejected submit (the message next to the question, the page kept), a
reload of the study link that resumes, and going back to change a saved answer.
"""
import os
import re

import pytest
from django.contrib.auth import get_user_model

from campaigns.models import Annotation, Assignment, Campaign
from campaigns.services.seeds import seed_campaigns_load
from campaigns.work.completion import completion_code_for
from tests.browser.conftest import SHOTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PARAMS = "PROLIFIC_PID=5f1a2b3c4d5e6f7a8b9c0d1e&STUDY_ID=study-9&SESSION_ID=session-9"


# --- answering one item page, per question kind ------------------------------------------

def answer_likert(page, fieldset, choice):
    # Keyboard: focus the scale, then a number key selects that point. The page's deferred
    # scripts (the key handler among them) have run once the load event has fired; a press
    # straight after a save's redirect could come before it.
    page.wait_for_load_state("load")
    fieldset.locator("input[type=radio]").first.focus()
    page.keyboard.press(str(choice))
    assert fieldset.locator(f'input[value="{choice}"]').is_checked()


def answer_choice(page, fieldset, choice):
    fieldset.locator("label.option").nth(choice % 2).click()


def answer_lines(page, fieldset, choice):
    lines = fieldset.locator(".line-fieldset")
    for n in range(lines.count()):
        line = lines.nth(n)
        box = line.locator("[data-followup]")
        if n == 0:
            line.get_by_label("Inconsistent", exact=True).check()
            assert box.is_visible()  # the rewrite box appears with "inconsistent"
            box.locator("textarea").fill(f"A better line {choice}.")
        else:
            line.get_by_label("Consistent", exact=True).check()
            assert not box.is_visible()


def answer_rubric(page, fieldset, choice):
    criteria = fieldset.locator(".criterion")
    for n in range(criteria.count()):
        criteria.nth(n).locator("input[type=radio]").nth(1).check()  # one point each
    assert fieldset.locator("[data-rubric-total]").inner_text() == "15"


def answer_slider(page, fieldset, choice):
    slider = fieldset.locator("input[type=range]")
    before = int(slider.input_value())
    slider.focus()
    for _ in range(choice):
        page.keyboard.press("ArrowRight")  # the keyboard moves it too, and that counts
    assert fieldset.locator("output").inner_text() == str(before + choice)
    assert fieldset.locator('input[type=hidden][name$="__moved"]').input_value() == "1"


def answer_flags(page, fieldset, choice):
    fieldset.locator("input[type=checkbox]").first.check()


def answer_text(page, container, choice):
    field = container.locator("textarea, input[type=text]").first
    if container.get_attribute("data-kind") and not field.input_value():
        field.fill(f"note {choice}")


ANSWER = {"likert": answer_likert, "choice": answer_choice, "lines": answer_lines,
          "rubric": answer_rubric, "slider": answer_slider, "flags": answer_flags,
          "text": answer_text}


def answer_page(page, choice):
    questions = page.locator("form.answers [data-kind]")
    for n in range(questions.count()):
        question = questions.nth(n)
        ANSWER[question.get_attribute("data-kind")](page, question, choice)


def save(page):
    with page.expect_navigation():
        page.locator("button[data-submit]").click()


def start(page, base_url):
    page.goto(base_url)
    if page.locator("#consent").count():
        page.check("#consent")
    intake = page.locator("section.intake [data-kind]")
    for n in range(intake.count()):
        question = intake.nth(n)
        if question.get_attribute("data-kind") == "choice":
            question.locator("input[type=radio]").first.check()
        else:
            question.locator("input, textarea").first.fill("Edinburgh, Scotland, UK")
    save(page)


def shoot(page, browser, slug):
    os.makedirs(SHOTS, exist_ok=True)
    page.screenshot(path=f"{SHOTS}/{slug}-desktop.png", full_page=True)
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    phone_page = phone.new_page()
    phone_page.goto(page.url)
    width = phone_page.evaluate("document.documentElement.scrollWidth")
    phone_page.screenshot(path=f"{SHOTS}/{slug}-phone.png", full_page=True)
    phone.close()
    assert width <= 390, f"{slug}: the page is {width}px wide on a 390px phone"


# --- the walk ----------------------------------------------------------------------------

@pytest.mark.parametrize("slug", ["movie-continuation", "summary-consistency", "story-rating",
                                  "comparative-rubric", "translation-acceptability"])
def test_a_worker_walks_the_seed_campaign_to_the_completion_code(page, browser, live_server,
                                                                  slug):
    # The done page sends Prolific participants back to Prolific by itself: answered here.
    page.route("https://app.prolific.com/**", lambda route: route.fulfill(body="Prolific"))
    owner = get_user_model().objects.create_user("seed-owner")
    seed_campaigns_load(owner=owner, slugs=(slug,))
    Campaign.objects.filter(slug=slug, items_per_assignment__gt=3).update(items_per_assignment=3)
    entry_url = f"{live_server.url}/c/{slug}/?{PARAMS}"

    start(page, entry_url)
    assert re.search(r"/a/[\w-]+/1/$", page.url), page.url
    assignment = Assignment.objects.get(campaign__slug=slug)
    code = completion_code_for(assignment)
    total = assignment.slots.count()
    assert page.locator("#progress-label").inner_text() == f"0 of {total} answered"
    shoot(page, browser, slug)

    # A rejected submit: the message sits next to the question; nothing is stored.
    save(page)
    assert page.locator(".error-summary").is_visible()
    first_error = page.locator("form.answers .has-error").first
    assert first_error.locator(".error").first.is_visible()
    assert not Annotation.objects.exists()

    # Reloading the study link resumes the same assignment at the same item.
    page.goto(entry_url)
    assert page.url.endswith(f"/{assignment.token}/1/")

    answer_page(page, 2)
    save(page)
    assert Annotation.objects.count() == 1

    if total > 1:
        # Back and change before the end: the saved answers are shown, a new one replaces them.
        assert code not in page.content()
        page.goto(entry_url)  # resumes at the first unanswered item
        assert page.url.endswith(f"/{assignment.token}/2/")
        with page.expect_navigation():  # loaded: the widgets' scripts run before keys are pressed
            page.get_by_role("link", name="Back").click()
        assert page.url.endswith(f"/{assignment.token}/1/")
        assert page.locator("form.answers input:checked").count() > 0
        answer_page(page, 3)
        save(page)
        assert Annotation.objects.count() == 1
        for _ in range(2, total + 1):
            assert code not in page.content()
            answer_page(page, 4)
            save(page)

    # The save of the last item handed the work in and shows the code.
    assert page.url.endswith(f"/{assignment.token}/done/")
    assert page.locator("#completion-code").inner_text() == code
    assignment.refresh_from_db()
    assert assignment.status == "submitted" and assignment.completion_code == code
    assert Annotation.objects.filter(assignment=assignment).count() == total
    # Every seed is a Prolific study: the button (and the automatic redirect) go to Prolific.
    href = page.locator("#completion-link").get_attribute("href")
    assert href == f"https://app.prolific.com/submissions/complete?cc={code}"
