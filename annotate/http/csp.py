"""django-csp's middleware with each distinct policy built once per process.

django-csp builds the Content-Security-Policy header again for every response (the policy's
parts copied with dataclasses.asdict, then joined), the same few strings each time: the
site's policy, and the worker pages' with MTurk's frame ancestors (annotate.http.frames). A
response whose policy takes a nonce is built as django-csp does, every time.
"""
from __future__ import annotations

from dataclasses import asdict

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject
from csp.middleware import CSPMiddleware as BaseCSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest
from django.http.response import HttpResponseBase

__all__ = ["CSPMiddleware"]

_BUILT: dict[tuple[bool, str], str] = {}
_BUILT_MAX = 64


@receiver(setting_changed)
def _forget_policies(setting: str, **_kwargs) -> None:
    """A changed policy setting (tests only) builds the policies again."""
    if setting.startswith("CONTENT_SECURITY_POLICY"):
        _BUILT.clear()


class CSPMiddleware(BaseCSPMiddleware):
    def process_response(self, request: HttpRequest,
                         response: HttpResponseBase) -> HttpResponseBase:
        if getattr(request, "_csp_nonce", None) is not None or (
                settings.DEBUG and response.status_code in (404, 500)):
            return super().process_response(request, response)
        for report_only, header, name in (
                (False, HEADER, "CONTENT_SECURITY_POLICY"),
                (True, HEADER_REPORT_ONLY, "CONTENT_SECURITY_POLICY_REPORT_ONLY")):
            policy = self._policy(request, response, report_only)
            exempt = getattr(response, "_csp_exempt_ro" if report_only else "_csp_exempt", False)
            prefixes = (getattr(settings, name, None) or {}).get("EXCLUDE_URL_PREFIXES") or ()
            if (policy and header not in response and exempt is False
                    and not request.path_info.startswith(tuple(prefixes))):
                response[header] = policy
        # As django-csp: a nonce asked for after the header is written is an error.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response

    def _policy(self, request: HttpRequest, response: HttpResponseBase,
                report_only: bool) -> str:
        parts = self.get_policy_parts(request=request, response=response,
                                      report_only=report_only)
        key = (report_only, repr(parts))
        policy = _BUILT.get(key)
        if policy is None:
            policy = build_policy(**asdict(parts), report_only=report_only)
            if len(_BUILT) >= _BUILT_MAX:
                _BUILT.clear()
            _BUILT[key] = policy
        return policy
