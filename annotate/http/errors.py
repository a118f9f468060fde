"""JSON error responses in the API's one shape, for code that runs outside DRF (middleware)."""
from django.http import HttpRequest, JsonResponse


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
