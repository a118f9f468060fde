"""Free-text answers in Chromium: typing replayed key by key at a person's pace raises no
flag; a clipboard paste does, and so does a script's fill; both show in the suggested action
and go out in the export; with
the campaign's settings, pasting and copying are refused with a message in the page's
language, and the page stays accessible."""
import csv
import io
import json
import random

import pytest
from django.contrib.auth import get_user_model
from django.core.files.storage import storages

from campaigns.analysis.answer_provenance import (
    MAX_CHARS_PER_SECOND,
    MOSTLY_PASTED,
    TYPED_TOO_FAST,
    answer_flags,
)
from campaigns.models import Annotation, Assignment, Item
from campaigns.selectors.approvals import campaign_submissions
from campaigns.services.exports import export_job_create, export_job_run
from tests.browser.axe import assert_accessible
from tests.browser.walk import SIZES, save, start, worker_page
from tests.factories import make_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PARAMS = "PROLIFIC_PID=5f1a2b3c4d5e6f7a8b9c0d1e&STUDY_ID=study-7&SESSION_ID=session-7"
SCHEMA = {
    "display": [{"field": "story", "label": "Story"}],
    "questions": [{"id": "summary", "kind": "text", "text": "Summarise the story.",
                   "max_length": 500}],
}
STORY = ("The lighthouse keeper counted the ships each night. One winter a ship did not come "
         "back, and he kept the lamp burning until spring.")
TYPED = "A keeper waits all winter for a lost ship."
PASTED = ("In this poignant tale, a dedicated lighthouse keeper maintains his nightly vigil, "
          "keeping the lamp lit through winter in hope of a missing ship's return.")


def _campaign(items=2, **fields):
    owner = get_user_model().objects.create_user(f"prov-owner-{random.random()}")
    campaign = make_campaign(owner=owner, schema=SCHEMA, items_per_assignment=items, **fields)
    for n in range(items):
        Item.objects.create(campaign=campaign, external_id=f"story-{n}", slots_wanted=3,
                            data={"story": STORY})
    return campaign


def _type_like_a_person(page, text: str, rng: random.Random) -> None:
    """Key by key with inter-key intervals as a fast typist's: log-normal around 110 ms
    (about 110 words a minute), bursts down to a few tens of ms, a pause after words."""
    for char in text:
        page.keyboard.type(char)
        delay = rng.lognormvariate(mu=4.6, sigma=0.45)  # median e^4.6 = 100 ms
        if char == " ":
            delay += rng.uniform(0, 120)
        page.wait_for_timeout(max(25, delay))


def _paste(page, text: str) -> None:
    page.evaluate("(text) => navigator.clipboard.writeText(text)", text)
    page.keyboard.press("ControlOrMeta+V")


def _exported_rows(campaign, settings, tmp_path) -> list[dict]:
    settings.EXPORT_SPOOL_DIR = tmp_path / "spool"
    settings.STORAGES = {**settings.STORAGES, "exports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "exports")}}}
    job = export_job_create(campaign=campaign, requested_by=None, fmt="csv", enqueue=False)
    export_job_run(job_id=job.pk)
    job.refresh_from_db()
    with storages["exports"].open(job.file, "rb") as handle:
        return list(csv.DictReader(io.StringIO(handle.read().decode("utf-8"))))


def test_typing_is_not_flagged_and_a_paste_is_flagged_reviewed_and_exported(
        browser, live_server, settings, tmp_path):
    context, page = worker_page(browser, "desktop")
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    campaign = _campaign(items=3)
    start(page, f"{live_server.url}/c/{campaign.slug}/?{PARAMS}")
    assignment = Assignment.objects.get(campaign=campaign)

    page.locator("textarea").focus()
    _type_like_a_person(page, TYPED, random.Random(7))
    save(page)
    page.locator("textarea").focus()
    _paste(page, PASTED)
    assert page.locator("textarea").input_value() == PASTED
    save(page)
    page.locator("textarea").fill(PASTED)  # as a script writes it: one insertion, no keys
    save(page)
    assert page.url.endswith(f"/{assignment.token}/done/")

    typed, pasted, filled = (Annotation.objects.get(item=assignment.slots.get(position=n).item)
                             for n in (1, 2, 3))
    record = typed.provenance["summary"]
    assert (record["typed"], record["pasted"], record["pastes"]) == (len(TYPED), 0, 0)
    assert record["chars"] == len(TYPED) and record["ms"] >= 1000
    assert answer_flags(record) == []
    # The margin: a fast typist's replay (about 8 characters a second) stays well under it.
    assert record["typed"] / (record["ms"] / 1000) < 0.6 * MAX_CHARS_PER_SECOND
    record = pasted.provenance["summary"]
    assert (record["typed"], record["pasted"], record["pastes"]) == (0, len(PASTED), 1)
    assert answer_flags(record) == [MOSTLY_PASTED]
    record = filled.provenance["summary"]
    assert (record["typed"], record["pastes"]) == (len(PASTED), 0)
    assert answer_flags(record) == [TYPED_TOO_FAST]

    row, = campaign_submissions(campaign=campaign)
    assert row["mostly_pasted_answers"] == 1 and row["typed_too_fast_answers"] == 1
    assert row["action"] == "review" and row["reason"].endswith(
        "1 free-text answer mostly pasted; 1 free-text answer typed faster than a person types")

    exported = {r["item_id"]: r for r in _exported_rows(campaign, settings, tmp_path)}
    by_text = {r["summary"]: json.loads(r["provenance"]) for r in exported.values()}
    assert by_text[TYPED]["summary"]["typed"] == len(TYPED)
    assert sorted(r["summary"]["pastes"] for r in map(json.loads, (
        e["provenance"] for e in exported.values()))) == [0, 0, 1]
    context.close()


def test_pasting_and_copying_are_refused_when_the_campaign_turns_them_off(browser, live_server):
    context, page = worker_page(browser, "desktop")
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    campaign = _campaign(block_paste=True, block_copy=True, language="de")
    start(page, f"{live_server.url}/c/{campaign.slug}/?{PARAMS}")

    box = page.locator("textarea")
    box.focus()
    _paste(page, PASTED)
    assert box.input_value() == ""
    note = page.get_by_role("status")
    assert note.inner_text() == "Einfügen ist in dieser Studie ausgeschaltet."
    assert page.evaluate("document.activeElement.tagName") == "TEXTAREA"  # focus stays put

    page.evaluate("navigator.clipboard.writeText('before')")
    page.locator(".item-text").first.select_text()
    page.keyboard.press("ControlOrMeta+C")
    assert page.evaluate("navigator.clipboard.readText()") == "before"
    assert note.inner_text() == "Kopieren ist in dieser Studie ausgeschaltet."

    # Typing still works, and copying within one's own answer is left alone.
    box.click()
    page.keyboard.type("Ein Leuchtturm wartet.")
    box.select_text()
    page.keyboard.press("ControlOrMeta+C")
    assert page.evaluate("navigator.clipboard.readText()") == "Ein Leuchtturm wartet."
    assert_accessible(page, "an item page after a refused paste and copy")
    save(page)
    record = Annotation.objects.get().provenance["summary"]
    assert record["pasted"] == 0 and record["pastes"] == 0
    context.close()


def test_on_a_phone_a_free_text_item_with_pasting_off_fits_and_stays_accessible(
        browser, live_server):
    context, page = worker_page(browser, "phone", touch=True)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    campaign = _campaign(items=1, block_paste=True)
    start(page, f"{live_server.url}/c/{campaign.slug}/?{PARAMS}")
    phone = SIZES["phone"]["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= phone
    assert_accessible(page, "a free-text item on a phone with pasting off")

    box = page.locator("textarea")
    box.tap()
    _paste(page, PASTED)
    assert box.input_value() == ""
    assert page.get_by_role("status").inner_text() == "Pasting is turned off for this study."
    assert page.evaluate("document.activeElement.tagName") == "TEXTAREA"
    assert page.evaluate("document.documentElement.scrollWidth") <= phone
    assert_accessible(page, "a free-text item on a phone after a refused paste")
    page.keyboard.type(TYPED)
    save(page)
    record = Annotation.objects.get().provenance["summary"]
    assert (record["typed"], record["pasted"], record["pastes"]) == (len(TYPED), 0, 0)
    context.close()
