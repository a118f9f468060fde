"""Walk an ESA and an MQM campaign in Chromium, from the Prolific link to the completion code,
on a desktop and on a phone: spans marked with the mouse (drag, or taps on a phone) on the
first item and with the keyboard on the second; edited, deleted, refused; the stored offsets
are code points into the item's exact text."""
import os
import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from campaigns.models import Annotation, Assignment, Item
from campaigns.work.completion import completion_code_for
from tests.browser.axe import assert_accessible
from tests.browser.conftest import SHOTS
from tests.browser.walk import SIZES, save, start, worker_page
from tests.factories import ESA_SCHEMA, MQM_SCHEMA, make_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PARAMS = "PROLIFIC_PID=5f1a2b3c4d5e6f7a8b9c0d1e&STUDY_ID=study-9&SESSION_ID=session-9"
# The emoji is one code point (Python's index) but two UTF-16 units (JavaScript's).
FIRST = "Der Hund 🐕 bellt laut, und die Katze schläft."
SECOND = "Ein kleiner Test mit zwei Fehlern hier."


def stored(text, start, end, severity, category=None):
    assert text[start:end]
    return {"start": start, "end": end, "text": text[start:end], "severity": severity,
            "category": category}


def at(text, word):
    """Where a whole word starts (code points)."""
    return re.search(rf"\b{word}\b", text).start()


def word(page, text, w):
    return page.locator(f'.spans-text [data-start="{at(text, w)}"]')


def point_at(page, text, first, last, size):
    """Select from word `first` to word `last`: a mouse drag, or two taps on a phone."""
    if size == "phone":
        word(page, text, first).tap()
        word(page, text, last).tap()
        return
    a, b = word(page, text, first).bounding_box(), word(page, text, last).bounding_box()
    page.mouse.move(a["x"] + 1, a["y"] + a["height"] / 2)
    page.mouse.down()
    page.mouse.move(b["x"] + b["width"] - 1, b["y"] + b["height"] / 2, steps=5)
    page.mouse.up()


def pick(page, size, target):
    """Click (or tap) a word, a label or a button."""
    if size == "phone":
        target.tap()
    else:
        target.click()


def editor(page):
    return page.locator(".spans-editor")


def move_slider(page):
    page.locator("input[type=range]").focus()
    page.keyboard.press("ArrowRight")


def start_walk(browser, live_server, size, schema, slug):
    context, page = worker_page(browser, size, touch=True)
    owner = get_user_model().objects.create_user(f"{slug}-owner")
    campaign = make_campaign(owner=owner, schema=schema, slug=slug, items_per_assignment=2)
    for n, target in enumerate((FIRST, SECOND)):
        Item.objects.create(campaign=campaign, external_id=f"s{n}", system="mt-a",
                            slots_wanted=3, data={"source": f"Source {n}.", "target": target})
    start(page, f"{live_server.url}/c/{campaign.slug}/?{PARAMS}")
    page.wait_for_load_state("load")
    if size == "phone":
        assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"]
    return context, page, Assignment.objects.get(campaign=campaign)


def answers_of(assignment, question):
    return [Annotation.objects.get(item=assignment.slots.get(position=n).item).answers[question]
            for n in (1, 2)]


def finish(page, assignment):
    assert page.url.endswith(f"/{assignment.token}/done/")
    assert page.locator("#completion-code").inner_text() == completion_code_for(assignment)


@pytest.mark.parametrize("size", list(SIZES))
def test_a_worker_walks_an_esa_campaign_to_the_completion_code(browser, live_server, size):
    context, page, assignment = start_walk(browser, live_server, size, ESA_SCHEMA, f"esa-{size}")
    # No span and "No errors" not ticked: the page asks once, and stores nothing.
    page.locator("button[data-submit]").click()
    expect(page.locator(".spans-confirm")).to_be_visible()
    assert "No errors in this text?" in page.locator(".spans-confirm").inner_text()
    assert not Annotation.objects.exists()
    # Saved again, it goes; no score yet: refused by the server, nothing stored, the page
    # comes back working.
    save(page)
    assert page.locator("form.answers .has-error").count() == 1
    assert not Annotation.objects.exists()
    page.wait_for_load_state("load")

    # First item, pointer: "bellt laut" major; "Katze" minor, then edited to major; "und"
    # marked and deleted; "die Katze" refused as overlapping.
    point_at(page, FIRST, "bellt", "laut", size)
    assert editor(page).locator(".spans-quote").inner_text() == "bellt laut"
    assert not editor(page).locator('[data-action="delete"]').is_visible()  # a new span
    pick(page, size, editor(page).get_by_text("Major"))
    pick(page, size, editor(page).get_by_role("button", name="Mark span"))
    assert editor(page).is_hidden()
    expect(page.locator(".q-spans [role=status]")).to_have_text(
        "Marked “bellt laut” as Major. 1 span marked: “bellt laut”, Major.")  # read aloud
    for w in ("Katze", "und"):
        pick(page, size, word(page, FIRST, w))
        pick(page, size, editor(page).get_by_text("Minor"))
        pick(page, size, editor(page).get_by_role("button", name="Mark span"))
    assert page.locator(".spans-list li").count() == 3
    pick(page, size, page.get_by_role("button", name="Delete span “und”"))
    pick(page, size, page.get_by_role("button", name="Edit span “Katze”"))
    pick(page, size, editor(page).get_by_text("Major"))
    pick(page, size, editor(page).get_by_role("button", name="Save changes"))
    point_at(page, FIRST, "die", "Katze", size)
    pick(page, size, editor(page).get_by_text("Minor"))
    pick(page, size, editor(page).get_by_role("button", name="Mark span"))
    assert "overlaps the span “Katze”" in editor(page).locator(".spans-problem").inner_text()
    pick(page, size, editor(page).get_by_role("button", name="Cancel"))
    assert page.locator(".spans-list li").all_inner_texts()[0].startswith("bellt laut Major")
    assert page.locator(".spans-text mark").count() == 4  # "bellt", " ", "laut" and "Katze"
    os.makedirs(SHOTS, exist_ok=True)
    page.screenshot(path=f"{SHOTS}/spans-esa-{size}.png", full_page=True)
    assert_accessible(page, f"ESA item with spans marked ({size})")
    move_slider(page)
    save(page)

    # Second item, keyboard: ctrl+shift+arrow selects "Test", Enter, 2 (major), Enter;
    # then shift+arrows select the letters "Feh" and 1 marks them minor at once.
    text = page.locator(".spans-text")
    text.focus()
    for key in ("Home", "Control+ArrowRight", "Control+ArrowRight", "Control+Shift+ArrowRight",
                "Enter", "2", "Enter"):
        page.keyboard.press(key)
    assert page.evaluate("document.activeElement.classList.contains('spans-text')")
    for key in ("Control+ArrowRight", "Control+ArrowRight", "ArrowRight", "Shift+ArrowRight",
                "Shift+ArrowRight", "Shift+ArrowRight", "1"):
        page.keyboard.press(key)
    assert page.locator(".spans-list li").count() == 2
    move_slider(page)
    save(page)

    finish(page, assignment)
    first, second = answers_of(assignment, "errors")
    katze = at(FIRST, "Katze")
    assert first == [stored(FIRST, at(FIRST, "bellt"), at(FIRST, "laut") + 4, "major"),
                     stored(FIRST, katze, katze + 5, "major")]
    assert second == [stored(SECOND, 12, 16, "major"), stored(SECOND, 26, 29, "minor")]
    assert second[1]["text"] == "Feh"
    context.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_a_worker_walks_an_mqm_campaign_to_the_completion_code(browser, live_server, size):
    context, page, assignment = start_walk(browser, live_server, size, MQM_SCHEMA, f"mqm-{size}")

    # First item, pointer: a critical mistranslation; the category is asked for first.
    point_at(page, FIRST, "bellt", "laut", size)
    pick(page, size, editor(page).get_by_text("Critical"))
    pick(page, size, editor(page).get_by_role("button", name="Mark span"))
    assert editor(page).locator(".spans-problem").inner_text() == "Choose a category."
    editor(page).locator("select").select_option("accuracy/mistranslation")
    pick(page, size, editor(page).get_by_role("button", name="Mark span"))
    # Spans may overlap in this schema (as in WMT's data): "laut" inside "bellt laut".
    pick(page, size, word(page, FIRST, "laut"))
    assert editor(page).locator(".spans-quote").inner_text() == "laut"
    pick(page, size, editor(page).get_by_text("Minor"))
    editor(page).locator("select").select_option("fluency/grammar")
    pick(page, size, editor(page).get_by_role("button", name="Mark span"))
    # A selection left open is not lost by saving: the page asks to mark or cancel it.
    pick(page, size, word(page, FIRST, "Katze"))
    # (The editor floats over the page next to the selection: the form is sent as Enter in a
    # field would send it.)
    page.locator("button[data-submit]").evaluate("b => b.form.requestSubmit(b)")
    assert "Mark the selected span" in editor(page).locator(".spans-problem").inner_text()
    os.makedirs(SHOTS, exist_ok=True)
    page.screenshot(path=f"{SHOTS}/spans-mqm-editor-{size}.png", full_page=True)
    assert_accessible(page, f"MQM item with the span editor open ({size})")
    pick(page, size, editor(page).get_by_text("Minor"))
    editor(page).locator("select").select_option("fluency/punctuation")
    pick(page, size, editor(page).get_by_role("button", name="Mark span"))
    page.screenshot(path=f"{SHOTS}/spans-mqm-{size}.png", full_page=True)
    labels = page.locator(".spans-list li .spans-labels").all_inner_texts()
    assert labels == ["Critical · Accuracy / Mistranslation", "Minor · Fluency / Grammar",
                      "Minor · Fluency / Punctuation"]
    save(page)

    # Second item, keyboard: 3 (critical) asks for the category; arrow down picks the first,
    # Enter marks.
    page.locator(".spans-text").focus()
    for key in ("Home", "Control+ArrowRight", "Control+ArrowRight", "Control+Shift+ArrowRight",
                "3"):
        page.keyboard.press(key)
    assert page.evaluate("document.activeElement.tagName") == "SELECT"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    assert page.locator(".spans-list li").count() == 1
    save(page)

    finish(page, assignment)
    first, second = answers_of(assignment, "mqm")
    katze = at(FIRST, "Katze")
    assert first == [
        stored(FIRST, at(FIRST, "bellt"), at(FIRST, "laut") + 4, "critical",
               "accuracy/mistranslation"),
        stored(FIRST, at(FIRST, "laut"), at(FIRST, "laut") + 4, "minor", "fluency/grammar"),
        stored(FIRST, katze, katze + 5, "minor", "fluency/punctuation")]
    assert second == [stored(SECOND, 12, 16, "critical", "accuracy/mistranslation")]
    context.close()
