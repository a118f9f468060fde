"""Safe Markdown rendering: researcher-written text (instructions, examples, consent) and
item texts shown with the "markdown" format (display fields, outputs, conversation turns).

Both go through one sanitiser (`sanitise`): no raw HTML, scripts, styles or event handlers,
`javascript:` links dropped, links `rel="noopener noreferrer nofollow"`. Images are kept only
from the hosts the operator allowed (IMAGE_HOSTS) or the uploaded item images: the same rule as
the Content-Security-Policy's img-src, so nothing is blocked silently.
"""
from functools import lru_cache

import markdown
import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

from ..schema.images import image_src

_ALLOWED_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt",
    "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "kbd", "li", "mark", "ol", "p", "pre",
    "s", "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "th",
    "thead", "tr", "u", "ul", "img",
}


def _image_filter(tag: str, attribute: str, value: str) -> str | None:
    """An <img src> only from an allowed host or the uploaded images (else dropped)."""
    if tag == "img" and attribute == "src":
        if value.startswith("/item-images/"):
            return value if image_src(value.removeprefix("/item-images/")) else None
        return (image_src(value) or None) if "://" in value else None
    return value


def render_markdown(text: str) -> SafeString:
    """Markdown to HTML, then sanitised (nh3): no scripts, styles, handlers or javascript: links."""
    if not text:
        return mark_safe("")  # noqa: S308 - constant
    html = markdown.markdown(text, extensions=["extra", "sane_lists"], output_format="html")
    return sanitise(html)


# Item texts are CommonMark with GFM tables and strikethrough; raw HTML in them is shown as
# text (html=False), and the sanitiser runs on the result all the same.
_ITEM_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


@lru_cache(maxsize=4096)
def render_item_markdown(text: str) -> SafeString:
    """An item's Markdown text as safe HTML, rendered once per distinct text and process (a
    page view of an item seen before reads it from here)."""
    if not text:
        return mark_safe("")  # noqa: S308 - constant
    # Code blocks scroll sideways: focusable, so a keyboard user can scroll them too (safe on
    # the sanitiser's output, where a literal "<pre>" can only be a tag without attributes).
    return mark_safe(sanitise(_ITEM_MARKDOWN.render(text), table_role="group").replace(  # noqa: S308
        "<pre>", '<pre tabindex="0">'))


def sanitise(html: str, *, table_role: str = "region") -> SafeString:
    """The one rule for HTML made from Markdown (nh3): what survives is safe to show. Tables
    scroll in a box named "Table n" with `table_role`: a page's instructions are one text, so
    their tables are landmarks; an item's texts are many (outputs, turns, each maybe shown
    twice), so theirs are groups, whose names need not be unique on the page."""
    clean = nh3.clean(
        html,
        tags=_ALLOWED_TAGS,
        attributes={"a": {"href", "title"}, "abbr": {"title"}, "td": {"align"}, "th": {"align"},
                    "img": {"src", "alt", "title"}},
        attribute_filter=_image_filter,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(_scrollable_tables(clean, table_role))  # noqa: S308 - sanitised above


def _scrollable_tables(html: str, role: str) -> str:
    """Each table in a box that scrolls sideways on a narrow screen, focusable and named so a
    keyboard user can scroll it too. Safe on nh3's output: there a literal "<table>" can only be
    a tag (text is escaped, and tables keep no attributes)."""
    parts = html.split("<table>")
    out = [parts[0]]
    for n, part in enumerate(parts[1:], start=1):
        out.append(f'<div class="table-scroll" tabindex="0" role="{role}" '
                   f'aria-label="Table {n} (scrolls sideways)"><table>{part}')
    return "".join(out).replace("</table>", "</table></div>")
