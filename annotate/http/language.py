"""Each request starts in the site's language and leaves no language behind.

The worker pages switch to their campaign's language once the view knows the campaign
(campaigns/pages/language.py); Django keeps an activated language for the thread, so without
this the next request served by the same thread (a researcher's page) would inherit it.
"""
from __future__ import annotations

from django.utils import translation


class LanguageResetMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        translation.deactivate()
        try:
            response = self.get_response(request)
            language = getattr(request, "worker_language", None)
            if language and "Content-Language" not in response:
                response["Content-Language"] = language
            return response
        finally:
            translation.deactivate()
