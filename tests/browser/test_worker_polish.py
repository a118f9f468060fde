"""Worker page details on the seed campaigns: focus after a rejected save, number keys for
scales, lines and rubrics, key hints only where there are keys, the slider for screen readers,
a progress bar that counts answers, scroll boxes a keyboard reaches."""
import pytest
from django.contrib.auth import get_user_model

from campaigns.models import Campaign
from campaigns.services.seeds import seed_campaigns_load
from tests.browser.test_seed_campaigns import PARAMS, answer_page, save, start

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _open(page, live_server, slug, items=None):
    seed_campaigns_load(owner=get_user_model().objects.create_user(f"o-{slug}"), slugs=(slug,))
    if items:
        Campaign.objects.filter(slug=slug).update(items_per_assignment=items)
    start(page, f"{live_server.url}/c/{slug}/?{PARAMS}")


def active(page, expression="document.activeElement.id"):
    return page.evaluate(expression)


def test_after_a_rejected_save_focus_is_on_the_first_unanswered_rubric_criterion(page,
                                                                                live_server):
    _open(page, live_server, "comparative-rubric")
    for n in range(1, 9):
        page.locator(f"#f-rubric-C{n}-1").check()
    save(page)
    assert active(page).startswith("f-rubric-C9-"), active(page)


def test_after_a_rejected_save_focus_is_on_the_first_unanswered_summary_line(page, live_server):
    _open(page, live_server, "summary-consistency")
    save(page)  # nothing answered at all
    assert active(page) == "f-lines-1-1"
    page.locator("#f-lines-1-1").check()
    save(page)
    assert active(page) == "f-lines-2-1"


def test_number_keys_answer_each_line_then_move_on_or_into_the_rewrite_box(page, live_server):
    _open(page, live_server, "summary-consistency")
    page.locator("#f-lines-1-1").focus()
    page.keyboard.press("1")  # consistent
    assert page.locator("#f-lines-1-1").is_checked()
    assert active(page) == "f-lines-2-1"  # the next line
    page.keyboard.press("2")  # inconsistent: the rewrite box opens and takes the focus
    assert page.locator("#f-lines-2-2").is_checked()
    assert active(page) == "f-lines-2-followup"
    page.keyboard.type("3 is typed, not a key")
    assert page.locator("#f-lines-2-followup").input_value() == "3 is typed, not a key"
    assert not page.locator("#f-lines-3-3").count() or not page.locator("#f-lines-3-3").is_checked()


def test_number_keys_give_each_criterion_its_points_and_move_to_the_next(page, live_server):
    _open(page, live_server, "comparative-rubric")
    page.locator("#f-rubric-C1-0").focus()
    for n, key in zip(range(1, 16), "101010101210101", strict=True):
        assert active(page).startswith(f"f-rubric-C{n}-")
        page.keyboard.press(key)
        assert page.locator(f"#f-rubric-C{n}-{key}").is_checked()
    assert page.locator("[data-rubric-total]").inner_text() == "10"


def test_key_hints_show_with_a_keyboard_and_not_on_a_touch_screen(page, browser, live_server):
    _open(page, live_server, "movie-continuation")
    assert page.locator(".keys-hint").first.is_visible()
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                has_touch=True)
    phone_page = phone.new_page()
    phone_page.goto(page.url)
    assert phone_page.locator(".keys-hint").count() and not phone_page.locator(
        ".keys-hint").first.is_visible()
    phone.close()


def test_the_slider_tells_screen_readers_its_value_and_anchors(page, live_server):
    _open(page, live_server, "translation-acceptability", items=2)
    slider = page.locator('input[type="range"]')
    assert slider.get_attribute("aria-valuetext") == "not set yet"
    slider.focus()
    page.keyboard.press("End")
    text = slider.get_attribute("aria-valuetext")
    assert text.startswith(slider.input_value()) and ", near " in text
    scale = page.locator(".slider-scale")
    assert scale.is_visible()
    assert not page.evaluate("!!document.querySelector('.slider-scale').closest('[aria-hidden]')")
    described = slider.get_attribute("aria-describedby")
    assert page.locator(f"#{described} li").count() >= 2  # the anchors' descriptions


def test_the_progress_bar_counts_answers_not_the_position(page, live_server):
    _open(page, live_server, "movie-continuation", items=3)
    assert page.locator("#progress").get_attribute("value") == "0"
    answer_page(page, 3)
    save(page)
    assert page.locator("#progress-label").inner_text() == "1 of 3 answered"
    page.get_by_role("link", name="Back").click()  # position 1, still one answer
    assert page.locator("#progress-label").inner_text() == "1 of 3 answered"
    assert page.locator(".progress-position").inner_text() == "Item 1 of 3"


def test_the_rubric_example_table_scrolls_in_a_box_the_keyboard_reaches(browser, live_server):
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                has_touch=True)
    page = phone.new_page()
    seed_campaigns_load(owner=get_user_model().objects.create_user("t"),
                        slugs=("comparative-rubric",))
    page.goto(f"{live_server.url}/c/comparative-rubric/?{PARAMS}")
    box = page.locator(".table-scroll").first
    assert box.get_attribute("tabindex") == "0" and box.get_attribute("aria-label")
    assert page.evaluate("(b) => b.scrollWidth > b.clientWidth", box.element_handle())
    for _ in range(80):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('table-scroll')"):
            break
    else:
        raise AssertionError("Tab never reached the table's scroll box")
    phone.close()
