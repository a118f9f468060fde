"""A German and an Arabic study walked in Chromium from the Prolific link to the completion
code: every page in the campaign's language (the product's words translated, <html lang dir>
set, right to left mirrored for Arabic) and no axe violation on any of them."""
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model

from campaigns.models import Assignment, Campaign
from campaigns.services.seeds import seed_campaigns_load
from tests.browser.axe import assert_accessible
from tests.browser.test_seed_campaigns import PARAMS, answer_page, save, start

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# What the researcher wrote (kept as written) and the item's own text: left out of the check.
RESEARCHER_TEXT = (".instructions, .examples, .item, .q-text, .hint[id], .option-label, "
                   ".option-desc, .point-name, .point-desc, .campaign-name, .lead, "
                   ".sample-questions, .line-text, .anchors, .slider-scale, .consent-text, "
                   "dl, .followup > label, label.other, h1, .code, title, script")
PRODUCT_TEXT_JS = """(skip) => {
  const copy = document.documentElement.cloneNode(true);
  copy.querySelectorAll(skip).forEach((el) => el.remove());
  const named = copy.querySelectorAll('[aria-label], [aria-roledescription]');
  const labels = [...named].map((el) => (el.getAttribute('aria-label') || '') + ' '
                                       + (el.getAttribute('aria-roledescription') || ''));
  return (copy.querySelector('body') || copy).textContent + ' ' + labels.join(' ');
}"""


def english_phrases() -> list[str]:
    """The product's English sentences and labels (the catalogue's msgids), long enough not to
    be a word a researcher's text could share by chance."""
    po = Path(settings.BASE_DIR, "locale", "de", "LC_MESSAGES", "django.po").read_text("utf-8")
    ids = ["".join(re.findall(r'"(.*)"', m)) for m in re.findall(
        r'^msgid ((?:".*"\n)+)', po, re.M)]
    return [i for i in ids if len(i) >= 10 and "%(" not in i and "<" not in i]


def assert_in_language(page, language: str, direction: str, state: str) -> None:
    assert page.evaluate("document.documentElement.lang") == language, state
    assert page.evaluate("document.documentElement.dir") == direction, state
    text = " ".join(page.evaluate(PRODUCT_TEXT_JS, RESEARCHER_TEXT).split())
    left_in_english = [p for p in english_phrases() if p in text]
    assert not left_in_english, f"{state}: English left on the page: {left_in_english}"
    assert_accessible(page, state)


@pytest.mark.parametrize(("language", "direction", "slug", "finished"), [
    ("de", "ltr", "translation-acceptability", "Vielen Dank! Ihre Arbeit wurde gespeichert."),
    ("ar", "rtl", "summary-consistency", "شكرًا لك! تم حفظ عملك."),
])
def test_a_study_in_the_participants_language_is_walked_to_its_code(
        page, live_server, language, direction, slug, finished):
    page.route("https://app.prolific.com/**", lambda route: route.fulfill(body="Prolific"))
    owner = get_user_model().objects.create_user("seed-owner")
    (campaign, _), = seed_campaigns_load(owner=owner, slugs=(slug,))
    Campaign.objects.filter(pk=campaign.pk).update(language=language)
    page.goto(f"{live_server.url}/c/{slug}/?{PARAMS}")
    assert_in_language(page, language, direction, "the study page")
    start(page, f"{live_server.url}/c/{slug}/?{PARAMS}")
    position = 1
    while "/done/" not in page.url:
        assert re.search(r"/a/[\w-]+/\d+/$", page.url), page.url
        assert_in_language(page, language, direction, f"item {position}")
        if position == 1 and direction == "rtl":
            # Mirrored: the first column of the page starts at the right.
            box = page.locator("main").bounding_box()
            heading = page.locator(".task-header h1").bounding_box()
            assert heading["x"] + heading["width"] > box["x"] + box["width"] - 40
        answer_page(page, 3)
        save(page)
        position += 1
    assert page.locator("h1").inner_text() == finished
    assert_in_language(page, language, direction, "the done page")
    assert Assignment.objects.get().status == Assignment.Status.SUBMITTED
