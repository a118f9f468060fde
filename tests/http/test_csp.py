"""annotate.http.csp: the policy built once per distinct policy is django-csp's, header for
header, on worker pages (MTurk may frame them) and on every other page."""
import pytest
from csp.constants import NONCE, SELF
from csp.middleware import CSPMiddleware as DjangoCSPMiddleware
from django.http import HttpResponse
from django.test import RequestFactory

from annotate.http import csp
from annotate.http.frames import WorkerFrameMiddleware

pytestmark = pytest.mark.django_db


def _headers(middleware_class, path):
    inner = WorkerFrameMiddleware(lambda request: HttpResponse("ok"))
    middleware = middleware_class(inner)
    return [middleware(RequestFactory().get(path)).headers.get("Content-Security-Policy")
            for _ in range(2)]


@pytest.mark.parametrize("path", ["/a/some-token/1/", "/c/study/", "/admin/login/"])
def test_the_header_is_django_csps(path):
    csp._BUILT.clear()
    ours = _headers(csp.CSPMiddleware, path)
    assert ours == _headers(DjangoCSPMiddleware, path)
    assert ("mturk.com" in ours[0]) == path.startswith(("/a/", "/c/"))


def test_a_changed_policy_is_built_again(settings):
    _headers(csp.CSPMiddleware, "/admin/login/")
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"default-src": ["'none'"]}}
    assert _headers(csp.CSPMiddleware, "/admin/login/")[0] == "default-src 'none'"


def test_a_page_with_a_nonce_gets_its_own_policy(settings):
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"script-src": [SELF, NONCE]}}

    def view(request):
        return HttpResponse(str(request.csp_nonce))

    middleware = csp.CSPMiddleware(view)
    response = middleware(RequestFactory().get("/admin/login/"))
    policy = response.headers["Content-Security-Policy"]
    assert f"script-src 'self' 'nonce-{response.content.decode()}'" in policy
