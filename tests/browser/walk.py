"""What the browser walks of a study share: the screen sizes, a worker's browser with Prolific's
site stubbed, starting from the study link, and saving a page."""
import re

SIZES = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}


def worker_page(browser, size: str, *, touch: bool = False):
    """A fresh browser context of this size (a phone is a mobile one) and its page; the done
    page's redirect to Prolific lands on a stub instead of the internet."""
    context = browser.new_context(viewport=SIZES[size], is_mobile=size == "phone",
                                  has_touch=touch and size == "phone")
    page = context.new_page()
    page.route("https://app.prolific.com/**", lambda route: route.fulfill(body="Prolific"))
    return context, page


def save(page):
    with page.expect_navigation():
        page.locator("button[data-submit]").click()


def start(page, url: str) -> None:
    """Open the study link, agree if asked, start, and land on the first item."""
    page.goto(url)
    if page.locator("#consent").count():
        page.check("#consent")
    save(page)
    assert re.search(r"/a/[\w-]+/1/$", page.url), page.url
