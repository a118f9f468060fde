"""Worker-facing views (thin: they adapt the request and call services/selectors)."""
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from .models import Campaign
from .rendering import render_markdown
from .services.health import health_report


@require_GET
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    report = health_report()
    return JsonResponse(report, status=200 if report["ok"] else 503)


@require_GET
def campaign_entry(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign, slug=slug)
    return render(
        request,
        "campaigns/entry.html",
        {
            "campaign": campaign,
            "instructions_html": render_markdown(campaign.instructions),
            "examples_html": render_markdown(campaign.examples),
            "consent_html": render_markdown(campaign.consent_text),
        },
    )
