"""The site's own pages: the home page, the favicon, the schema help, a researcher's API token."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.safestring import SafeString
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_http_methods
from rest_framework.authtoken.models import Token

from ..pages import render_markdown
from ..services.researchers import api_token_create, api_token_revoke

FAVICON = Path(settings.BASE_DIR) / "static" / "favicon.ico"
SCHEMA_DOC = Path(settings.BASE_DIR) / "docs" / "schema.md"


def home(request: HttpRequest) -> HttpResponse:
    """What this service is, with the way in for researchers and for scripts."""
    return render(request, "site/home.html")


@cache_control(max_age=86400, public=True)
def favicon(request: HttpRequest) -> HttpResponse:
    return HttpResponse(FAVICON.read_bytes(), content_type="image/x-icon")


@lru_cache(maxsize=1)
def _schema_help() -> SafeString:
    return render_markdown(SCHEMA_DOC.read_text(encoding="utf-8"))


def schema_help(request: HttpRequest) -> HttpResponse:
    """The task-schema format (the same text as docs/schema.md), served by the app."""
    return render(request, "site/schema_help.html", {"body": _schema_help()})


@staff_member_required
@require_http_methods(["GET", "POST"])
def api_token_page(request: HttpRequest) -> HttpResponse:
    """A researcher creates (or replaces) and revokes their own API token; POSTs need CSRF."""
    shown = None
    if request.method == "POST":
        if request.POST.get("action") == "revoke":
            api_token_revoke(user=request.user)
            return redirect("api-token")
        if request.POST.get("action") == "create":
            shown = api_token_create(user=request.user).key  # shown once, on this response
        else:
            return HttpResponse("Unknown action.", status=400, content_type="text/plain")
    has_token = Token.objects.filter(user=request.user).exists()
    response = render(request, "site/api_token.html", {"token": shown, "has_token": has_token})
    response["Cache-Control"] = "no-store"
    return response
