"""Worker pages inside MTurk's frame: every response on /c/, /a/ and /q/ (errors included) may be
framed by MTurk's hosts and by nobody else; every other page by nobody.

An ExternalQuestion HIT shows the task in an iframe on www.mturk.com or
workersandbox.mturk.com. A 404 or 403 inside that frame sent with `X-Frame-Options: DENY`
shows the worker "refused to connect" instead of its message, so the rule is applied to the
response whatever the view did (raised or returned), not per view.
"""
from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from .ratelimit import WORKER_PATH

__all__ = ["WorkerFrameMiddleware", "is_worker_path"]


def is_worker_path(path: str) -> bool:
    return WORKER_PATH.match(path) is not None


class WorkerFrameMiddleware:
    """Just inside CSPMiddleware, so it sees every worker response, the early ones too."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if is_worker_path(request.path_info):
            # XFrameOptionsMiddleware (further in) may have said DENY, e.g. on a 404 raised
            # by the view; CSP's frame-ancestors is the rule that browsers apply instead.
            if "X-Frame-Options" in response:
                del response["X-Frame-Options"]
            # settings.WORKER_FRAME_ANCESTORS: MTurk's hosts unless the operator says otherwise.
            response._csp_replace = {"frame-ancestors": list(settings.WORKER_FRAME_ANCESTORS)}
        return response
