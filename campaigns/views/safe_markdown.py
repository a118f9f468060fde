"""Safe Markdown rendering for researcher-written text (instructions, examples, consent)."""
import markdown
import nh3
from django.utils.safestring import SafeString, mark_safe

_ALLOWED_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt",
    "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "kbd", "li", "mark", "ol", "p", "pre",
    "s", "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "th",
    "thead", "tr", "u", "ul",
}


def render_markdown(text: str) -> SafeString:
    """Markdown to HTML, then sanitised (nh3): no scripts, styles, handlers or javascript: links."""
    if not text:
        return mark_safe("")  # noqa: S308 - constant
    html = markdown.markdown(text, extensions=["extra", "sane_lists"], output_format="html")
    clean = nh3.clean(
        html,
        tags=_ALLOWED_TAGS,
        attributes={"a": {"href", "title"}, "abbr": {"title"}, "td": {"align"}, "th": {"align"}},
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(clean)  # noqa: S308 - sanitised by nh3 above
