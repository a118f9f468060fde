"""Worker pages rendered once per layout and filled in per request (the hot worker path).

The item page of a fresh item and the done page are the same HTML for every worker of a
campaign but for a few values: the form's key, the page timer, the addresses, the item's own
fields, the completion code. `render_filled()` renders the template once with a marker in place
of each such value, keeps the HTML cut at the markers under a key naming everything else the
page reads (the caller's `key`, the page's language), and answers later requests by joining the
pieces with the values, escaped as the template escapes them (safe strings, such as the item's
fields rendered by their own template, as they are).

The template stays the one description of the page: a layout is kept only when the filled-in
HTML equals the template's own rendering of the same request (a template that alters a marker
is rendered every time). That check sees one request only, so the templates print each filled
value as it is (`{{ name }}`, no filter), and read nothing of the request (no `request`,
`user`, `messages` or `csrf_token` from the context processors) but the page's language,
which is part of the key: tests/pages/test_skeleton.py keeps them so.
"""
from __future__ import annotations

import secrets
from collections.abc import Callable, Hashable, Mapping

from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

__all__ = ["Same", "filled", "render_filled"]

_LAYOUTS: dict[Hashable, tuple[tuple[str, ...], tuple[str, ...]] | None] = {}
_LAYOUTS_MAX = 512  # item pages per (campaign, language, position, progress): a few each
_MARK = f"fill{secrets.token_hex(6)}x"  # letters and digits: no escaping changes it


@receiver(setting_changed)
def _forget_layouts(**_kwargs) -> None:
    """A changed setting (tests only) may change any page: static addresses, languages."""
    _LAYOUTS.clear()


class Same:
    """A key part that is this very object (a parsed schema, which has no hash of its own):
    the key keeps it alive, so its id stays its own while the layout is kept."""

    __slots__ = ("thing",)

    def __init__(self, thing: object):
        self.thing = thing

    def __hash__(self) -> int:
        return id(self.thing)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Same) and other.thing is self.thing


def _mark(name: str) -> SafeString:
    return mark_safe(f"{_MARK}{name}{_MARK}")  # noqa: S308 (letters, digits and _ only)


def _cut(html: str, names: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The HTML between the markers and the value names in page order (None: a marker is
    missing, or altered by the template)."""
    pieces = html.split(_MARK)
    if len(pieces) % 2 == 0:
        return None
    order = tuple(pieces[1::2])
    if not set(order) <= set(names) or set(names) - set(order):
        return None
    return tuple(pieces[0::2]), order


def _fill(layout: tuple[tuple[str, ...], tuple[str, ...]], values: Mapping[str, str]) -> str:
    texts, order = layout
    out = [texts[0]]
    for name, text in zip(order, texts[1:], strict=True):
        out.append(conditional_escape(values[name]))
        out.append(text)
    return "".join(out)


def render_filled(request: HttpRequest, template: str, *, key: Hashable | None,
                  values: Mapping[str, str], context: Callable[[], dict],
                  status: int = 200) -> HttpResponse:
    """The template rendered with `context()` and `values`; with a `key` (None: not cacheable),
    a known layout is filled in with `values` instead, and `context()` is not called.

    `key` must name everything the page shows besides `values` and the page's language.
    """
    if key is None:
        return HttpResponse(render_to_string(template, {**context(), **values}, request),
                            status=status)
    made: dict = {}

    def render(shown: Mapping[str, str]) -> str:
        if not made:
            made.update(context())
        return render_to_string(template, {**made, **values, **shown}, request)

    return HttpResponse(filled((template, key, getattr(request, "worker_language", None)),
                               render, values), status=status)


def filled(key: Hashable, render: Callable[[Mapping[str, str]], str],
           values: Mapping[str, str]) -> str:
    """`render(values)`, or the layout kept under `key` (and the active language) filled in
    with `values`. `render` is given the values, or a marker in place of each."""
    full_key = (key, get_language(), frozenset(name for name, value in values.items() if value))
    layout = _LAYOUTS.get(full_key, False)
    if layout:
        return _fill(layout, values)
    html = render(values)
    if layout is False:  # first time: keep the layout if filling it in gives the same page
        names = tuple(name for name, value in values.items() if value)
        found = _cut(render({**values, **{name: _mark(name) for name in names}}), names)
        if len(_LAYOUTS) >= _LAYOUTS_MAX:
            _LAYOUTS.clear()
        _LAYOUTS[full_key] = found if found and _fill(found, values) == html else None
    return html
