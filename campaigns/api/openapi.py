"""OpenAPI helpers: the documented error responses every operation shares."""
from drf_spectacular.utils import OpenApiResponse

from .errors import ErrorSerializer

_DESCRIPTIONS = {
    400: "Bad input; `extra` names the fields, JSON paths or rows at fault.",
    401: "Not authenticated (no token, or an unknown one).",
    403: "Authenticated but not allowed (e.g. a session request without its CSRF token).",
    404: "No such campaign for you (or no such object in it).",
    405: "Method not allowed.",
    409: "Conflicts with the current state.",
    413: "The request body is larger than the configured limit.",
    415: "Unsupported media type.",
    429: "Rate limit exceeded; retry after `extra.wait_seconds`.",
    503: "The database or task queue is briefly unavailable; retry after `Retry-After`.",
}

READ = (400, 401, 403, 404, 405, 429, 503)
WRITE = (400, 401, 403, 404, 405, 409, 413, 415, 429, 503)


def errors(codes=READ) -> dict:
    """extend_schema `responses` entries for the given error statuses."""
    return {code: OpenApiResponse(ErrorSerializer, description=_DESCRIPTIONS[code])
            for code in codes}
