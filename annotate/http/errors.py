"""JSON error responses in the API's one shape, for code that runs outside DRF (middleware)."""
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import csrf, defaults


def wants_json(request: HttpRequest) -> bool:
    """API paths and clients that ask for JSON (not browsers) get JSON errors."""
    if request.path_info.startswith("/api/"):
        return True
    accept = request.META.get("HTTP_ACCEPT", "")
    return "application/json" in accept and "text/html" not in accept


def error_body(message: str, **extra) -> dict:
    """{"message": ..., "extra": {...}}: the shape of every error the API answers."""
    return {"message": message, "extra": extra}


def json_error(message: str, *, status: int, code: str, **extra) -> JsonResponse:
    """An error response in the one shape, with a machine-readable code in `extra`."""
    return JsonResponse(error_body(message, code=code, **extra), status=status)


# Django's error views, in the API's shape under /api/ and as Django's pages elsewhere
# (handler400/403/404 in annotate/urls.py, CSRF_FAILURE_VIEW in settings).


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A POST without a valid CSRF token: JSON under /api/ (e.g. a session-authenticated
    script, or a POST to a path that matches no endpoint), Django's page elsewhere."""
    if wants_json(request):
        return json_error("CSRF check failed: send the csrftoken cookie's value in the "
                          "X-CSRFToken header, or authenticate with a token.", status=403,
                          code="csrf_failed", reason=reason)
    return csrf.csrf_failure(request, reason=reason)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if wants_json(request):
        return json_error("Bad request.", status=400, code="bad_request")
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if wants_json(request):
        return json_error("You do not have permission to do this.", status=403,
                          code="permission_denied")
    return defaults.permission_denied(request, exception)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if wants_json(request):
        return json_error("Not found.", status=404, code="not_found")
    return defaults.page_not_found(request, exception)


def server_error_page(request: HttpRequest) -> HttpResponse:
    if wants_json(request):
        return json_error("Internal server error.", status=500, code="server_error")
    return defaults.server_error(request)
