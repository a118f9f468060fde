"""Keyboard alone: a worker starts, rates and saves an item without a mouse, focus visible."""
import pytest
from django.contrib.auth import get_user_model

from campaigns.models import Annotation
from campaigns.services.seeds import seed_campaigns_load

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def focus_outline(page) -> str:
    return page.evaluate("getComputedStyle(document.activeElement).outlineStyle")


def tab_to(page, selector: str, limit: int = 60) -> None:
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


def test_a_worker_can_rate_an_item_with_the_keyboard_alone(page, live_server):
    seed_campaigns_load(owner=get_user_model().objects.create_user("kb"),
                        slugs=("movie-continuation",))
    page.goto(f"{live_server.url}/c/movie-continuation/?PROLIFIC_PID=6b0000000000000000000001&STUDY_ID=s&SESSION_ID=x")
    tab_to(page, "button[data-submit]")
    assert focus_outline(page) != "none"
    with page.expect_navigation():
        page.keyboard.press("Enter")

    tab_to(page, 'input[name="q-coherence"]')
    assert focus_outline(page) != "none"
    page.keyboard.press("4")  # number keys choose a point of the focused scale...
    # ...and focus moves on to the next scale
    assert page.evaluate("document.activeElement.name") == "q-sentiment"
    page.keyboard.press("2")
    tab_to(page, "button[data-submit]")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "/done/" in page.url  # the only item saved: the work is handed in
    assert page.locator("#completion-code").is_visible()
    assert Annotation.objects.get().answers == {"coherence": 4, "sentiment": 2}
