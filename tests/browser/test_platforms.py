"""The platform round trip in Chromium: Prolific's redirect and returning participants, MTurk's
cross-site frame from preview to externalSubmit, broken links, no work, time on task.

Nothing leaves the machine: requests to Prolific and MTurk are intercepted (page.route), and
MTurk's frame is a parent page served from another site (127.0.0.1 against the live server's
localhost, or the other way round) on a port of its own.
"""
import re
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from campaigns.models import Annotation, Assignment, Campaign, Item
from campaigns.services.seeds import seed_campaigns_load

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PROLIFIC = "PROLIFIC_PID=5f1a2b3c4d5e6f7a8b9c0d1e&STUDY_ID=study-9&SESSION_ID=session-9"
COMPLETE = "https://app.prolific.com/submissions/complete"


@pytest.fixture
def movie(db):
    owner = get_user_model().objects.create_user("seed-owner")
    (campaign, _), = seed_campaigns_load(owner=owner, slugs=("movie-continuation",))
    return campaign


@pytest.fixture
def prolific_visits(page):
    """Every navigation to Prolific's completion URL, answered here (no network)."""
    visits = []

    def fulfil(route):
        visits.append(route.request.url)
        route.fulfill(status=200, content_type="text/html",
                      body="<!doctype html><title>Prolific</title><p>Submission complete</p>")
    page.route(f"{COMPLETE}*", fulfil)
    return visits


def answer_and_save(frame, choice=3):
    """Answer every question of the item page shown in `frame` (a page or an iframe)."""
    for fieldset in frame.locator("form.answers [data-kind=likert]").all():
        fieldset.locator("input[type=radio]").nth(choice - 1).check()
    with frame.expect_navigation():
        frame.locator("button[data-submit]").click()


def start(frame):
    with frame.expect_navigation():
        frame.locator("button[data-submit]").click()


def test_the_done_page_returns_a_prolific_participant_by_itself(page, live_server, movie,
                                                                  prolific_visits):
    page.goto(f"{live_server.url}/c/movie-continuation/?{PROLIFIC}")
    start(page)
    answer_and_save(page)
    assert page.url.endswith("/done/")
    assert page.locator("#completion-code").inner_text() == movie.completion_code
    # No click: after the pause the page goes to Prolific with the study's code.
    page.wait_for_url(f"{COMPLETE}*", timeout=10_000)
    assert prolific_visits == [f"{COMPLETE}?cc={movie.completion_code}"]


def test_a_participant_can_stop_the_automatic_return_and_go_when_ready(page, live_server, movie,
                                                                         prolific_visits):
    page.goto(f"{live_server.url}/c/movie-continuation/?{PROLIFIC}")
    start(page)
    answer_and_save(page)
    page.get_by_role("button", name="Stay on this page").click()
    expect(page.locator("#return-status")).to_contain_text("You stay on this page")
    page.wait_for_timeout(5_000)  # longer than the pause: nothing moves the page on
    assert page.url.endswith("/done/") and prolific_visits == []
    page.locator("#completion-link").click()
    page.wait_for_url(f"{COMPLETE}*")
    assert prolific_visits == [f"{COMPLETE}?cc={movie.completion_code}"]


def test_a_returning_prolific_participant_gets_the_same_code(page, live_server, movie,
                                                             prolific_visits):
    Campaign.objects.filter(pk=movie.pk).update(completion_mode="per_assignment")
    entry = f"{live_server.url}/c/movie-continuation/?{PROLIFIC}"
    page.goto(entry)
    start(page)
    answer_and_save(page)
    code = page.locator("#completion-code").inner_text()
    assert code == Assignment.objects.get().completion_code
    page.wait_for_url(f"{COMPLETE}*")
    # The same link again, from a fresh browser session: the same done page, the same code.
    page.context.clear_cookies()
    page.goto(entry)
    assert page.url.endswith("/done/")
    assert page.locator("#completion-code").inner_text() == code
    page.wait_for_url(f"{COMPLETE}*")
    assert prolific_visits == [f"{COMPLETE}?cc={code}"] * 2
    assert Assignment.objects.count() == 1


@pytest.mark.parametrize("query", ["", "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}",
                                   "?PROLIFIC_PID=", "?STUDY_ID=s1"])
def test_a_link_without_a_usable_prolific_id_says_to_open_the_study_from_prolific(
        page, live_server, movie, query):
    response = page.goto(f"{live_server.url}/c/movie-continuation/{query}")
    assert response.status == 400
    assert page.locator("h1").inner_text() == "Please open this study from Prolific"
    assert page.locator("button[data-submit]").count() == 0
    assert not Assignment.objects.exists()


def test_no_work_says_when_to_come_back_and_gives_the_no_work_code(page, live_server, movie,
                                                                   prolific_visits):
    # Another participant holds every item for 20 more minutes.
    Item.objects.filter(campaign=movie, control="").update(slots_wanted=1)
    Campaign.objects.filter(pk=movie.pk).update(annotations_per_item=1,
                                                items_per_assignment=100)
    page.goto(f"{live_server.url}/c/movie-continuation/?PROLIFIC_PID=70000000000000000000a01d&STUDY_ID=s&SESSION_ID=a")
    start(page)
    Assignment.objects.update(deadline=timezone.now() + timedelta(minutes=19, seconds=30))
    page.goto(f"{live_server.url}/c/movie-continuation/?{PROLIFIC}")
    start(page)
    assert page.locator("h1").inner_text() == "No work right now"
    assert "come back in about 20 minutes" in page.locator("#no-work-wait").inner_text()
    assert page.locator("#no-work-code").inner_text() == movie.completion_code_no_work
    page.locator("#no-work-link").click()
    page.wait_for_url(f"{COMPLETE}*")
    assert prolific_visits == [f"{COMPLETE}?cc={movie.completion_code_no_work}"]


def test_a_resave_keeps_the_first_and_adds_to_the_time_on_task(page, live_server, movie):
    Campaign.objects.filter(pk=movie.pk).update(items_per_assignment=2)
    page.goto(f"{live_server.url}/c/movie-continuation/?{PROLIFIC}")
    start(page)
    time.sleep(1.5)
    answer_and_save(page, 2)
    first = Annotation.objects.get()
    assert first.seconds_first == first.seconds_spent >= 1.5
    page.get_by_role("link", name="Back").click()
    answer_and_save(page, 4)  # a quick change of mind
    again = Annotation.objects.get()
    assert again.answers["coherence"] == 4
    assert again.seconds_first == first.seconds_first
    assert again.seconds_spent > first.seconds_spent


# --- MTurk's frame ----------------------------------------------------------------------------

class _ParentPage(BaseHTTPRequestHandler):
    """MTurk's side of an ExternalQuestion: a page that frames the HIT's URL."""

    frame_src = ""

    def do_GET(self):  # noqa: N802 (http.server's name)
        src = self.frame_src + "?" + urlsplit(self.path).query
        body = (f'<!doctype html><title>HIT</title><iframe id="hit" src="{src}" '
                'width="1200" height="800"></iframe>').encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def mturk_parent(live_server, settings):
    """(URL of a parent page on another site, the app's entry URL it frames)."""
    app_host = urlsplit(live_server.url).hostname
    parent_host = "127.0.0.1" if app_host == "localhost" else "localhost"
    handler = type("Parent", (_ParentPage,), {
        "frame_src": f"{live_server.url}/c/movie-continuation/"})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    parent = f"http://{parent_host}:{server.server_address[1]}"
    # The stand-in for MTurk's hosts may frame the worker pages, as MTurk's may in production.
    settings.WORKER_FRAME_ANCESTORS = ["'self'", parent]
    yield parent
    server.shutdown()
    server.server_close()


def test_an_mturk_hit_runs_in_a_cross_site_frame_from_preview_to_external_submit(
        page, live_server, movie, mturk_parent):
    # Preview: MTurk shows the HIT before the worker accepts it; nothing can start.
    page.goto(f"{mturk_parent}/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1")
    hit = page.frame_locator("#hit")
    assert "This is a preview" in hit.locator("p.notice").first.inner_text()
    assert hit.locator("button[data-submit]").count() == 0

    # Accepted: MTurk reloads the frame with the worker's ids.
    posts = []

    def external_submit(route):
        posts.append((route.request.method, route.request.url, route.request.post_data))
        route.fulfill(status=200, content_type="text/html", body="<p>HIT submitted</p>")
    page.route("https://workersandbox.mturk.com/**", external_submit)
    page.goto(f"{mturk_parent}/?workerId=A1B2C3D4E5F6G7&assignmentId=3XASSIGN&hitId=H1"
              "&turkSubmitTo=https%3A%2F%2Fworkersandbox.mturk.com")
    frame = page.frame(url=re.compile(r"/c/movie-continuation/"))
    start(frame)
    assert re.search(r"/a/[\w-]+/1/$", frame.url)
    answer_and_save(frame)
    assert frame.url.endswith("/done/")
    code = frame.locator("#completion-code").inner_text()
    # The frame kept no cookie of the app's: nothing above depended on one.
    assert not [c for c in page.context.cookies() if c["name"] == "csrftoken"]
    frame.locator("#mturk-submit button").click()
    page.wait_for_timeout(500)
    deadline = time.monotonic() + 5
    while not posts and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    (method, url, body), = posts
    assert (method, url) == ("POST", "https://workersandbox.mturk.com/mturk/externalSubmit")
    assert parse_qs(body) == {"assignmentId": ["3XASSIGN"], "completion_code": [code]}
    assignment = Assignment.objects.get()
    assert (assignment.status, assignment.mturk_assignment_id) == ("submitted", "3XASSIGN")


def test_a_site_that_is_not_mturk_cannot_frame_the_worker_pages(browser, live_server, movie,
                                                                 mturk_parent, settings):
    settings.WORKER_FRAME_ANCESTORS = ["'self'", "https://www.mturk.com",
                                       "https://workersandbox.mturk.com"]  # the default
    # A context of its own: the shared page fixture fails a test on any CSP refusal.
    context = browser.new_context()
    try:
        page = context.new_page()
        refusals = []
        page.on("console", lambda msg: refusals.append(msg.text)
                if "frame-ancestors" in msg.text else None)
        page.goto(f"{mturk_parent}/?workerId=A10000000000001&assignmentId=3X&hitId=H1")
        page.wait_for_timeout(500)
        assert refusals, "the browser framed the page for a site that is not MTurk"
        assert movie.name not in page.frame_locator("#hit").locator("body").inner_text()
    finally:
        context.close()
