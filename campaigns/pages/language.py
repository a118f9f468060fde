"""The worker pages' language: the campaign's, or the participant's browser's among ours.

A campaign names its language as a BCP 47 tag (`de`, `ar`, `zh-Hans`, `pt-BR`). Its pages say
so in `<html lang>` and take `dir="rtl"` for a right-to-left language; the product's own
strings (buttons, progress, messages) come from the translations shipped in locale/ for the
language or its nearest shipped variant (`de-AT` reads German), else stay in English. With
`language_from_browser`, a browser whose Accept-Language prefers a shipped language gets it.
The researcher's texts are shown as written.
"""
from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from django.utils import translation
from django.utils.translation import gettext, gettext_noop
from django.utils.translation.trans_real import parse_accept_lang_header

from ..models import Campaign

__all__ = ["RTL_LANGUAGES", "activate_worker_language", "page_language", "shipped_language",
           "worker_language"]

# Languages written right to left (their base subtag), beside Django's own list.
RTL_LANGUAGES = frozenset({*settings.LANGUAGES_BIDI, "he", "iw", "yi", "ps", "sd", "dv", "syr"})
SHIPPED = tuple(code for code, _ in settings.LANGUAGES)


def shipped_language(tag: str) -> str | None:
    """The shipped translation a language tag reads (its nearest variant), or None."""
    try:
        code = translation.get_supported_language_variant(tag.lower())
    except LookupError:
        return None
    return code if code in SHIPPED else None


def worker_language(campaign: Campaign, accept_language: str = "") -> str:
    """The tag the campaign's pages are in for this participant."""
    if campaign.language_from_browser and accept_language:
        for tag, _quality in parse_accept_lang_header(accept_language[:500]):
            if tag != "*" and shipped_language(tag):
                return tag
    return campaign.language or "en"


def activate_worker_language(request: HttpRequest, campaign: Campaign) -> str:
    """Switch this request to the campaign's language (LanguageResetMiddleware ends it)."""
    tag = worker_language(campaign, request.META.get("HTTP_ACCEPT_LANGUAGE", ""))
    translation.activate(shipped_language(tag) or "en")
    request.worker_language = tag
    return tag


def page_language(request: HttpRequest) -> dict:
    """Template context: `page_lang` and `page_dir` for `<html>`, and on a page in a shipped
    language other than English, `worker_strings` (the scripts' words, for i18n.js)."""
    tag = getattr(request, "worker_language", None) or "en"
    base = tag.split("-")[0].lower()
    context = {"page_lang": tag, "page_dir": "rtl" if base in RTL_LANGUAGES else "ltr"}
    shipped = shipped_language(tag)
    if shipped and shipped != "en":
        context["worker_strings"] = {text: gettext(text) for text in WORKER_SCRIPT_STRINGS}
    return context


# The words static/campaigns/*.js write (they read them through i18n.js); each is a msgid of
# the translations, with %(name)s where the script puts a value.
WORKER_SCRIPT_STRINGS = (
    gettext_noop("You stay on this page. Press the button when you are ready to return."),
    gettext_noop("Mark the selected span (or cancel it) before saving."),
    gettext_noop("Edit"), gettext_noop("Delete"),
    gettext_noop("Edit span “%(text)s”"),
    gettext_noop("Delete span “%(text)s”"),
    gettext_noop("Save changes"), gettext_noop("Mark span"),
    gettext_noop("Selected: %(text)s. Choose a severity and a category."),
    gettext_noop("Selected: %(text)s. Choose a severity."),
    gettext_noop("Deleted the span “%(text)s”."),
    gettext_noop("Choose a severity."), gettext_noop("Choose a category."),
    gettext_noop("This overlaps the span “%(text)s”: edit or delete that one instead."),
    gettext_noop("At most %(max)s spans."),
    gettext_noop("Marked “%(text)s” as %(label)s. 1 span marked."),
    gettext_noop("Marked “%(text)s” as %(label)s. %(n)s spans marked."),
    gettext_noop("End of text"), gettext_noop("space"),
    gettext_noop("Nothing selected: hold shift and use the arrow keys to select."),
    gettext_noop("%(value)s, near %(label)s"),
    gettext_noop("A span must mark a word or more, not only spaces."),
    gettext_noop("%(text)s, marked %(labels)s"),
    gettext_noop("Pasting is turned off for this study."),
    gettext_noop("Copying is turned off for this study."),
)
