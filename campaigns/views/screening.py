"""The screened-out page: a participant the intake's rules leave out (campaigns/work/screening.py).

Prolific participants go back with the study's screened-out code (Prolific's screen-out
flow pays them its fixed screen-out payment) after the same pause as the done page; without
that code they are asked to return the study. A participant who failed the qualification
test gets the failed-checks code instead (views/qualification.py). MTurk workers are asked
to return the HIT; a plain link's visitor is told there is nothing to do. Nothing of the
study's work is shown.
"""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from ..models import Campaign, Worker
from ..work.completion import screened_out_code, screened_out_redirect_url
from .assignment import REDIRECT_PAUSE_SECONDS, platform_name


def screened_out_page(request: HttpRequest, campaign: Campaign, platform: str,
                      reason: str = "", page_url: str = "") -> HttpResponse:
    """The same page for a first screen-out and for every return of that participant; a
    failed qualification test (`reason`) says so and gives the failed-checks code."""
    redirect_url = screened_out_redirect_url(campaign, platform, reason)
    context = {"campaign": campaign, "platform": platform, "page_url": page_url,
               "failed_test": reason == "qualification",
               "code": screened_out_code(campaign, reason) if redirect_url else "",
               "redirect_url": redirect_url, "redirect_pause": REDIRECT_PAUSE_SECONDS,
               "platform_name": platform_name(redirect_url) if redirect_url else ""}
    if platform not in (Worker.Platform.PROLIFIC, Worker.Platform.MTURK):
        context["platform"] = Worker.Platform.LINK
    return render(request, "campaigns/screened_out.html", context, status=200)
