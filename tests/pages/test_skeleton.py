"""pages.skeleton: a page rendered once per layout and filled in per request gives the same
HTML as the template, escaping included, and falls back to the template where it cannot."""
import re

import pytest
from django.conf import settings
from django.test import RequestFactory
from django.urls import reverse

from campaigns.pages import skeleton
from campaigns.pages.skeleton import filled
from campaigns.views.assignment import _render_item
from campaigns.work import assignment_with_page
from tests.factories import make_campaign, make_items
from tests.views.conftest import PROLIFIC, page_url

pytestmark = pytest.mark.django_db

SIGNED = re.compile(r'name="(started|form_key)" value="[^"]*"')  # signed anew per page


@pytest.fixture(autouse=True)
def _fresh_layouts():
    skeleton._LAYOUTS.clear()
    yield
    skeleton._LAYOUTS.clear()


def _render_counting(template):
    calls = []

    def render(values):
        calls.append(dict(values))
        return template.format(**values)
    return render, calls


def test_a_kept_layout_is_filled_in_with_escaped_values_without_rendering():
    render, calls = _render_counting("<p title='{a}'>{b}</p>")
    assert filled("k", render, {"a": "x", "b": "y"}) == "<p title='x'>y</p>"
    rendered = len(calls)
    html = filled("k", render, {"a": "<script>", "b": "O'Hara & co"})
    assert len(calls) == rendered  # filled in, not rendered
    assert html == "<p title='&lt;script&gt;'>O&#x27;Hara &amp; co</p>"


def test_a_template_that_changes_a_value_is_rendered_every_time():
    render, calls = _render_counting("<p>{a}</p>")
    upper = lambda values: render({"a": str(values["a"]).upper()})  # noqa: E731
    assert filled("u", upper, {"a": "abc"}) == "<p>ABC</p>"
    assert filled("u", upper, {"a": "def"}) == "<p>DEF</p>"
    assert skeleton._LAYOUTS[("u", "en-us", frozenset({"a"}))] is None


def test_an_empty_value_is_a_layout_of_its_own():
    render, _ = _render_counting("{a}|{b}")
    assert filled("e", render, {"a": "1", "b": ""}) == "1|"
    assert filled("e", render, {"a": "1", "b": "2"}) == "1|2"
    assert filled("e", render, {"a": "3", "b": ""}) == "3|"


def _claim_page(client, campaign, pid):
    response = client.post(reverse("campaigns:entry", args=[campaign.slug]),
                           {**PROLIFIC, "PROLIFIC_PID": pid})
    assert response.status_code == 200
    return response.content.decode(), page_url(response)


def test_a_filled_item_page_equals_the_rendered_one(client, owner):
    campaign = make_campaign(owner=owner, slug="filled", items_per_assignment=1)
    make_items(campaign, 3)
    _claim_page(client, campaign, "a" * 24)  # keeps the layout
    html, address = _claim_page(client, campaign, "b" * 24)  # filled in
    token = address.split("/")[2]
    assignment, page = assignment_with_page(token=token, position=1)
    skeleton._LAYOUTS.clear()
    request = RequestFactory().get(address)
    request.worker_language = "en"
    direct = _render_item(request, assignment, page, page_url=True).content.decode()
    assert SIGNED.sub("", html) == SIGNED.sub("", direct)
    assert 'name="form_key" value="' in html and 'name="started" value="' in html


FILLED_TEMPLATES = ("base.html", "campaigns/item.html", "campaigns/done.html",
                    "campaigns/_instructions.html", "campaigns/_questions.html",
                    "campaigns/_display.html")
PER_REQUEST = re.compile(r"\b(request|user|perms|messages|csrf_token)\b")


@pytest.mark.parametrize("name", FILLED_TEMPLATES)
def test_filled_pages_read_nothing_of_the_request_but_their_language(name):
    source = (settings.BASE_DIR / "templates" / name).read_text()
    tags = re.findall(r"{[{%].*?[%}]}", source, re.S)
    assert not [t for t in tags if PER_REQUEST.search(t)], name


FILLED_VALUES = {  # template -> the values filled in per request (views/assignment.py, item.py)
    "base.html": ["page_url"],
    "campaigns/item.html": ["display_html", "started", "form_key", "form_action", "back_url"],
    "campaigns/done.html": ["code", "mturk_submit_url", "mturk_assignment_id",
                            "redirect_url", "another_url"],
    "campaigns/_display.html": ["d.value"],
}


@pytest.mark.parametrize("name", FILLED_VALUES)
def test_filled_values_are_printed_as_they_are(name):
    """A filter on a filled value could agree with the plain value on the page that built
    the layout and not on the next one: filled values are printed as {{ name }} only."""
    source = (settings.BASE_DIR / "templates" / name).read_text()
    for value in FILLED_VALUES[name]:
        printed = re.findall(r"{{\s*([^}]*\b" + re.escape(value) + r"\b[^}]*?)\s*}}", source)
        assert printed and set(printed) == {value}, (name, value, printed)
