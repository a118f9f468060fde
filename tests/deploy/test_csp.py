"""A strict Content-Security-Policy on every page, and templates the policy allows."""
import re
from pathlib import Path

import pytest
from django.conf import settings

pytestmark = pytest.mark.django_db

TEMPLATE_ROOTS = [Path(settings.BASE_DIR) / "templates", Path(settings.BASE_DIR) / "campaigns"]
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)
EVENT_HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.IGNORECASE)
INLINE_STYLE = re.compile(r"<style[\s>]|\sstyle\s*=", re.IGNORECASE)
JS_URL = re.compile(r"""(?:href|src|action)\s*=\s*["']?\s*javascript:""", re.IGNORECASE)


def policy(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


def assert_no_inline_script(html: str, where: str) -> None:
    assert not INLINE_SCRIPT.search(html), f"inline <script> in {where}"
    assert not EVENT_HANDLER.search(html), f"inline event handler in {where}"
    assert not JS_URL.search(html), f"javascript: URL in {where}"


def test_worker_entry_page_has_a_strict_policy_and_no_inline_script(client, campaign):
    response = client.get(f"/c/{campaign.slug}/")
    assert response.status_code == 200
    directives = policy(response)
    assert directives["default-src"] == ["'self'"]
    assert directives["script-src"] == ["'self'"]
    assert "'unsafe-inline'" not in response["Content-Security-Policy"]
    assert_no_inline_script(response.content.decode(), "/c/<slug>/")


def test_item_finish_and_done_pages_have_the_policy_and_no_inline_script(client, owner):
    from campaigns.work import annotation_submit, assignment_claim, worker_get_or_create
    from tests.factories import SUMMARY_SCHEMA, make_campaign, make_items, prolific_pid

    campaign = make_campaign(owner=owner, schema=SUMMARY_SCHEMA)
    make_items(campaign, 1)
    campaign.items.update(data={"story": "A story.", "summary": "One. Two."})
    worker = worker_get_or_create(campaign=campaign, platform="prolific", platform_id="P1")
    assignment = assignment_claim(campaign=campaign, worker=worker)
    pages = [f"/c/{campaign.slug}/?PROLIFIC_PID={prolific_pid('P2')}&STUDY_ID=s&SESSION_ID=x",
             f"/a/{assignment.token}/1/"]
    pages.append(f"/a/{assignment.token}/finish/")  # what is left to answer
    for path in pages:
        response = client.get(path)
        assert response.status_code == 200, path
        assert policy(response)["script-src"] == ["'self'"], path
        assert_no_inline_script(response.content.decode(), path)
    annotation_submit(assignment=assignment, position=1, answers={
        "lines": [{"label": "consistent"}, {"label": "consistent"}],
        "summary_consistent": "consistent"})  # the last item: handed in
    done = client.get(f"/a/{assignment.token}/done/")
    assert done.status_code == 200 and "Content-Security-Policy" in done
    assert_no_inline_script(done.content.decode(), "done page")


def test_error_pages_carry_the_policy_too(client):
    assert "Content-Security-Policy" in client.get("/c/no-such-campaign/")


def test_no_template_contains_an_inline_script_or_event_handler():
    templates = [p for root in TEMPLATE_ROOTS for p in root.rglob("*.html")]
    assert templates
    for path in templates:
        assert_no_inline_script(path.read_text(encoding="utf-8"), str(path))


def test_no_template_contains_inline_styles_which_style_src_self_blocks():
    for path in (p for root in TEMPLATE_ROOTS for p in root.rglob("*.html")):
        assert not INLINE_STYLE.search(path.read_text(encoding="utf-8")), f"inline style: {path}"
