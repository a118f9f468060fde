"""The spans widget on a long text and a small screen, in Chromium: the severity box opens next
to the selection inside the viewport, keys answer within 50 ms on a 3,000-word text, a span of
only spaces is refused, the live region reads each span's severity and category, "no errors"
is asked once; best-worst radios are named without their shortcut keys."""
import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from campaigns.models import Annotation, Item
from tests.browser.walk import SIZES, start, worker_page
from tests.factories import MQM_SCHEMA, make_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PARAMS = "PROLIFIC_PID=5f1a2b3c4d5e6f7a8b9c0d1e&STUDY_ID=study-9&SESSION_ID=session-9"
WORDS = ("the quick brown fox jumps over a lazy dog while rain falls on quiet hills and "
         "rivers run to the sea ").split()
LONG = " ".join(WORDS[i % len(WORDS)] for i in range(3000)) + "."
KEY_BUDGET_MS = 50


def _open(browser, live_server, size, slug, text=LONG):
    context, page = worker_page(browser, size, touch=True)
    owner = get_user_model().objects.create_user(f"{slug}-owner")
    campaign = make_campaign(owner=owner, schema=MQM_SCHEMA, slug=slug)
    Item.objects.create(campaign=campaign, external_id="long", system="mt-a", slots_wanted=3,
                        data={"source": "Quelle.", "target": text})
    start(page, f"{live_server.url}/c/{campaign.slug}/?{PARAMS}")
    page.wait_for_load_state("load")
    return context, page


def _key_ms(page, key: str) -> float:
    """Milliseconds the page's key handling takes for one key press (performance.now around
    dispatching the keydown to the text, which runs every handler synchronously)."""
    return page.evaluate("""(key) => {
        const box = document.querySelector('.spans-text');
        const shift = key.startsWith('Shift+');
        const name = shift ? key.slice(6) : key;
        const t0 = performance.now();
        box.dispatchEvent(new KeyboardEvent('keydown', {key: name, shiftKey: shift,
                                                       bubbles: true, cancelable: true}));
        return performance.now() - t0;
    }""", key)


@pytest.mark.parametrize("size", list(SIZES))
def test_on_a_long_text_the_box_opens_by_the_selection_in_view_and_keys_are_quick(
        browser, live_server, size):
    context, page = _open(browser, live_server, size, f"long-{size}")
    page.locator(".spans-text").focus()
    page.keyboard.press("Home")
    times = [_key_ms(page, "ArrowRight") for _ in range(20)]
    times += [_key_ms(page, "Shift+ArrowRight") for _ in range(10)]
    times += [_key_ms(page, key) for key in ("End", "ArrowLeft", "Home")]
    assert max(times) < KEY_BUDGET_MS, " ".join(str(round(t)) for t in times)
    # A selection far down the text: the box opens next to it, inside the viewport.
    page.evaluate("""() => {
        const box = document.querySelector('.spans-text');
        box.focus();
    }""")
    page.keyboard.press("End")
    for _ in range(4):
        page.keyboard.press("Control+ArrowLeft")
    page.keyboard.press("Control+Shift+ArrowRight")
    editor = page.locator(".spans-editor")
    expect(editor).to_be_visible()
    viewport = SIZES[size]
    box = editor.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"] + 1
    assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"] + 1
    selected = page.locator(".spans-text .spans-pending").last.bounding_box()
    assert 0 <= selected["y"] <= viewport["height"]
    assert abs((box["y"]) - (selected["y"] + selected["height"])) < 40 or \
        abs(box["y"] + box["height"] - selected["y"]) < 40  # just below it, or just above
    context.close()


def test_spaces_alone_are_refused_and_the_live_region_reads_severity_and_category(
        browser, live_server):
    text = "Ein  Test mit   Fehlern."
    context, page = _open(browser, live_server, "desktop", "spaces", text=text)
    box = page.locator(".spans-text")
    box.focus()
    page.keyboard.press("Home")
    for _ in range(3):
        page.keyboard.press("ArrowRight")  # between the two spaces after "Ein"
    page.keyboard.press("Shift+ArrowRight")
    editor = page.locator(".spans-editor")
    editor.get_by_text("Minor").click()
    editor.locator("select").select_option("fluency/grammar")
    editor.get_by_role("button", name="Mark span").click()
    assert "not only spaces" in editor.locator(".spans-problem").inner_text()
    editor.get_by_role("button", name="Cancel").click()
    assert page.locator(".spans-list li").count() == 0
    # A word marked: the live region reads its severity and category, also when the caret
    # comes back onto it.
    box.focus()
    for key in ("Home", "Control+ArrowRight", "Control+Shift+ArrowRight", "1"):
        page.keyboard.press(key)
    editor.locator("select").select_option("fluency/grammar")
    editor.get_by_role("button", name="Mark span").click()
    status = page.locator(".q-spans [role=status]")
    expect(status).to_contain_text("“Test”, Minor · Fluency / Grammar")
    box.focus()
    for key in ("Home", "Control+ArrowRight", "ArrowRight", "ArrowRight"):
        page.keyboard.press(key)
    expect(status).to_have_text("Test, marked Minor · Fluency / Grammar")
    context.close()


def test_no_errors_is_asked_once_unless_ticked(browser, live_server):
    context, page = _open(browser, live_server, "desktop", "noerr", text="Kein Fehler.")
    page.locator("button[data-submit]").click()
    expect(page.locator(".spans-confirm")).to_be_visible()
    assert not Annotation.objects.exists()
    page.locator(".spans-no-errors-box").check()
    expect(page.locator(".spans-confirm")).to_be_hidden()
    with page.expect_navigation():
        page.locator("button[data-submit]").click()
    assert Annotation.objects.get().answers == {"mqm": []}
    context.close()


def test_best_worst_radios_are_named_without_their_shortcut_keys(browser, live_server):
    context, page = worker_page(browser, "desktop")
    owner = get_user_model().objects.create_user("bws-names-owner")
    campaign = make_campaign(owner=owner, slug="bws-names", schema={"questions": [
        {"id": "bws", "kind": "bws", "text": "Best and worst?"}]})
    Item.objects.create(campaign=campaign, external_id="b1", slots_wanted=3, data={
        "outputs": [{"system": s, "text": f"Reply {s}."} for s in ("a", "b", "c")]})
    start(page, f"{live_server.url}/c/{campaign.slug}/?{PARAMS}")
    assert page.get_by_role("radio", name="Worst", exact=True).count() == 3
    assert page.get_by_role("radio", name="Best", exact=True).count() == 3
    assert page.get_by_role("radio", name="shift").count() == 0
    context.close()
