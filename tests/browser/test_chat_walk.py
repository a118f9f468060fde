"""Walk an LLM chat study in Chromium: a campaign created through the API with a `chat`
display, Markdown outputs, a pairwise question and a per-output likert, items imported from
JSONL through the API (messages lists, a Markdown table and fenced code, an XSS payload in a
reply, an Arabic conversation), to the completion code at desktop and phone sizes with zero axe
violations; its statistics then hold per-system scores and Bradley-Terry strengths."""
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile

from campaigns.models import Annotation, Assignment
from campaigns.selectors.analysis import campaign_statistics
from campaigns.work.completion import completion_code_for
from tests.api.conftest import token_client
from tests.browser.axe import assert_accessible
from tests.browser.walk import SIZES, save, start, worker_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PARAMS = "PROLIFIC_PID=5f1a2b3c4d5e6f7a8b9c0d1e&STUDY_ID=study-7&SESSION_ID=session-7"
SCHEMA = {
    "display": [{"field": "conversation", "label": "Conversation", "format": "chat"}],
    "outputs_format": "markdown",
    "role_labels": {"user": "User", "assistant": "Assistant"},
    "questions": [{"id": "pref", "kind": "pairwise", "text": "Which reply is better?"},
                  {"id": "quality", "kind": "likert", "for_each_output": True,
                   "text": "How good is this reply?",
                   "points": [{"value": v, "label": str(v)} for v in range(1, 6)]}]}
CODE_REPLY = ("Squares:\n\n| n | n² |\n|---|---|\n| 2 | 4 |\n| 3 | 9 |\n\n"
              "```python\nfor n in (2, 3):\n    print(n * n)  # a long comment that scrolls "
              "sideways on a phone rather than widening the page\n```")
XSS = ('<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"> '
       '[click me](javascript:window.pwned=3)')
ITEMS = [
    {"id": "code", "conversation": [
        {"role": "system", "content": "You are a concise assistant."},
        {"role": "user", "content": "Print the squares of 2 and 3."},
        {"role": "assistant", "content": "In which language?"},
        {"role": "user", "content": "Python, with a table of the results."}],
     "outputs": [{"system": "model-a", "text": CODE_REPLY},
                 {"system": "model-b", "text": "Use `n ** 2`."}]},
    {"id": "xss", "conversation": [{"role": "user", "content": "Say something *risky*."}],
     "outputs": [{"system": "model-a", "text": XSS},
                 {"system": "model-b", "text": "**No.**"}]},
    {"id": "arabic", "conversation": [
        {"role": "user", "content": "ما هي عاصمة مصر؟"},
        {"role": "assistant", "content": "عاصمة مصر هي القاهرة."},
        {"role": "user", "content": "وما عدد سكانها؟"}],
     "outputs": [{"system": "model-a", "text": "يبلغ عدد سكان القاهرة نحو **عشرة ملايين**."},
                 {"system": "model-b", "text": "لا أعرف."}]},
]


def chat_study(slug: str):
    owner = get_user_model().objects.create_user(f"{slug}-owner")
    api = token_client(owner)
    created = api.post("/api/campaigns/", {"slug": slug, "name": "Chat study", "schema": SCHEMA,
                                           "items_per_assignment": 3}, format="json")
    assert created.status_code == 201, created.json()
    upload = SimpleUploadedFile("items.jsonl", "\n".join(json.dumps(i, ensure_ascii=False)
                                                         for i in ITEMS).encode())
    imported = api.post(f"/api/campaigns/{slug}/items/import/", {"file": upload},
                        format="multipart")
    assert imported.status_code == 201, imported.json()
    assert api.post(f"/api/campaigns/{slug}/status/", {"status": "live"},
                    format="json").status_code == 200


@pytest.mark.parametrize("size", list(SIZES))
def test_a_worker_walks_a_chat_study_to_the_completion_code(browser, live_server, size):
    chat_study(f"chat-{size}")
    context, page = worker_page(browser, size)
    start(page, f"{live_server.url}/c/chat-{size}/?{PARAMS}")
    assignment = Assignment.objects.get(campaign__slug=f"chat-{size}")
    seen = set()
    for position in range(1, 4):
        item = assignment.slots.get(position=position).item.external_id
        seen.add(item)
        chat = page.locator(".chat-scroll")
        assert chat.get_attribute("role") == "region"
        if item == "code":
            # The system prompt is folded; the conversation box opens at its last turn.
            assert not page.locator("details.chat-turn--system").evaluate("d => d.open")
            assert page.locator(".pair-pane table").count() == 1
            assert page.locator(".pair-pane pre code").count() == 1
        if item == "xss":
            assert page.evaluate("window.pwned") is None
            assert page.locator(".pair-pane script, .pair-pane img").count() == 0
            assert "<script>" in page.locator(".pair-pane").first.inner_text() \
                or "<script>" in page.locator(".pair-pane").nth(1).inner_text()
        if item == "arabic":
            turn = page.locator(".chat-content").first
            assert turn.get_attribute("dir") == "auto"
            assert turn.evaluate("e => getComputedStyle(e).direction") == "rtl"
        assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"]
        assert_accessible(page, f"{size}, item {item}")
        # A, B, then a tie: with a tie (half a win each) the Bradley-Terry fit is finite.
        choice = ("A", "B", "tie")[position - 1]
        page.locator(f'input[name="q-pref.choice"][value="{choice}"]').check()
        for shown in (0, 1):
            page.locator(f'input[name="q-quality.o{shown}"][value="{5 - 3 * shown}"]').check()
        save(page)
    assert seen == {"code", "xss", "arabic"}
    assert page.url.endswith(f"/{assignment.token}/done/")
    assert page.locator("#completion-code").inner_text() == completion_code_for(assignment)
    assert_accessible(page, f"{size}, done page")
    assert Annotation.objects.filter(item__campaign__slug=f"chat-{size}").count() == 3
    context.close()
    statistics = campaign_statistics(campaign=assignment.campaign, n_boot=20)
    scores = {r["system"]: r for r in statistics["system_scores"] if r["question"] == "quality"}
    # Response A (the first shown) got 5, B got 2, whichever system each was.
    assert set(scores) == {"model-a", "model-b"} and [r["n"] for r in scores.values()] == [3, 3]
    assert sum(r["mean"] * r["n"] for r in scores.values()) == pytest.approx(3 * (5 + 2))
    [preference] = statistics["pairwise_preference"]
    assert {r["system"] for r in preference["bradley_terry"]} == {"model-a", "model-b"}
    assert preference["judgments"] == 3


def test_the_hh_rlhf_sample_shows_its_shared_context_once_and_the_replies_side_by_side(
        browser, live_server):
    from campaigns.services.items import items_import
    from tests.factories import make_campaign
    from tests.importing.test_conversations import HH_FILE, PAIR_SCHEMA, hh_rows
    owner = get_user_model().objects.create_user("hh-owner")
    campaign = make_campaign(owner=owner, schema=PAIR_SCHEMA, slug="hh-walk",
                             items_per_assignment=2)
    items_import(campaign=campaign, content=hh_rows(2), filename=HH_FILE, transcripts="hh-rlhf")
    context, page = worker_page(browser, "desktop")
    start(page, f"{live_server.url}/c/hh-walk/?{PARAMS}")
    for _ in range(2):
        assert page.locator(".pair-context").count() == 1
        assert page.locator(".pair-context .chat-turn").count() >= 1
        panes = page.locator(".pair-pane")
        a, b = panes.nth(0).bounding_box(), panes.nth(1).bounding_box()
        assert abs(a["y"] - b["y"]) < 2 and b["x"] > a["x"] + a["width"] - 1
        assert panes.nth(0).locator(".chat-role").first.inner_text() == "Assistant"
        assert_accessible(page, "HH-RLHF pair")
        page.locator('input[name="q-pref.choice"][value="tie"]').check()
        save(page)
    assert page.url.endswith("/done/")
    context.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_the_arena_template_page_passes_axe_with_its_per_output_ratings(browser, live_server,
                                                                         size):
    from campaigns.services.seeds import starter_campaigns_load
    owner = get_user_model().objects.create_user(f"arena-owner-{size}")
    [(arena, _)] = starter_campaigns_load(owner=owner)
    context, page = worker_page(browser, size)
    start(page, f"{live_server.url}/c/{arena.slug}/?{PARAMS}")
    assert page.locator(".pair-context").count() == 1
    assert page.locator(".per-output").count() == 2
    assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"]
    assert_accessible(page, f"{size}, Arena template")
    context.close()
