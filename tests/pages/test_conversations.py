"""The item page's conversations and Markdown (campaigns/pages/conversations.py and the
"markdown"/"chat" display formats): rendered safely, shared turns once, directions."""
import json
from html.parser import HTMLParser

import pytest
from django.test import RequestFactory

from campaigns.pages import render_item_preview
from campaigns.pages.markdown import render_item_markdown
from campaigns.services.items import items_import
from tests.factories import make_campaign

pytestmark = pytest.mark.django_db

XSS = ('<script>alert(1)</script><img src=x onerror=alert(2)> [click](javascript:alert(3)) '
       '<a href="https://example.org" onclick="alert(4)">x</a>')
REPLY = ("Here:\n\n| n | square |\n|---|---|\n| 2 | 4 |\n\n```python\nprint('hi')\n```\n\n"
         "[docs](https://example.org)")
CONTEXT = [{"role": "system", "content": "You are terse."},
           {"role": "user", "content": "Show a table of squares."}]
SCHEMA = {"display": [{"field": "notes", "label": "Notes", "format": "markdown"}],
          "outputs_format": "markdown", "role_labels": {"user": "Customer"},
          "questions": [{"id": "pref", "kind": "pairwise", "text": "Which reply is better?"}]}


class ActiveMarkup(HTMLParser):
    """Collects what could run: script elements, event handlers, javascript: URLs, images."""

    def __init__(self, html: str):
        super().__init__()
        self.found: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "img", "iframe", "style"):
            self.found.append(tag)
        for name, value in attrs:
            if name.startswith("on") or (value or "").strip().lower().startswith("javascript:"):
                self.found.append(f"{tag}[{name}]")


def page(campaign, external_id: str) -> str:
    item = campaign.items.get(external_id=external_id)
    return render_item_preview(RequestFactory().get("/"), campaign, item).content.decode()


def test_item_markdown_keeps_tables_and_code_and_drops_anything_active():
    html = str(render_item_markdown(f"{REPLY}\n\n{XSS}"))
    assert "<table>" in html and '<pre tabindex="0"><code>print(\'hi\')' in html
    assert '<a href="https://example.org" rel="noopener noreferrer nofollow">docs</a>' in html
    assert ActiveMarkup(html).found == []
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # raw HTML shows as text
    assert render_item_markdown(REPLY) is render_item_markdown(REPLY)  # rendered once


def test_a_pair_of_conversations_shows_the_shared_turns_once_and_each_reply(owner):
    campaign = make_campaign(owner=owner, schema=SCHEMA)
    rows = [{"id": "q1", "notes": "**Read** both.", "outputs": [
        {"system": "a", "messages": [*CONTEXT, {"role": "assistant", "content": REPLY}]},
        {"system": "b", "messages": [*CONTEXT, {"role": "assistant", "content": XSS}]}]}]
    items_import(campaign=campaign, content=json.dumps(rows).encode(), filename="i.json")
    html = page(campaign, "q1")
    assert html.count("Show a table of squares.") == 1
    assert html.count("The conversation so far") == 2  # the heading and the region's name
    assert "<details class=\"chat-turn chat-turn--system\">" in html
    assert ">Customer</p>" in html and "<strong>Read</strong> both." in html
    assert "<table>" in html and "print('hi')" in html
    assert "&lt;script&gt;alert(1)" in html and "<script>alert" not in html
    body = html.split('<div class="item">', 1)[1].split("</form>", 1)[0]
    assert ActiveMarkup(body).found == []
    assert 'dir="auto"' in html


def test_a_chat_field_scrolls_and_the_campaign_may_force_a_direction(owner):
    schema = {"display": [{"field": "conversation", "label": "Conversation", "format": "chat"}],
              "text_direction": "rtl",
              "questions": [{"id": "ok", "kind": "text", "text": "Comments?"}]}
    campaign = make_campaign(owner=owner, schema=schema)
    turns = [{"role": "user", "content": "ما هي عاصمة مصر؟"},
             {"role": "assistant", "content": "عاصمة مصر هي **القاهرة**."}]
    items_import(campaign=campaign, content=json.dumps([{"id": "ar", "conversation": turns}])
                 .encode(), filename="i.json")
    html = page(campaign, "ar")
    assert ('class="chat-scroll" tabindex="0" role="region" '
            'aria-label="Conversation (scrolls)"') in html
    assert '<div class="chat-content md" dir="rtl"><p>عاصمة مصر هي <strong>القاهرة</strong>' \
        in html
