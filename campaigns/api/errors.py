"""The one exception handler: every API error is {"message": ..., "extra": {...}}."""
from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DataError, IntegrityError, InterfaceError, OperationalError
from django.http import Http404, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import set_rollback

from annotate.http.errors import error_body, json_error

from ..errors import ServiceError
from ..importing import ImportRejected
from ..schema import AnswerInvalid, SchemaInvalid

logger = logging.getLogger(__name__)


class ErrorSerializer(serializers.Serializer):
    """The error shape, for the OpenAPI schema."""

    message = serializers.CharField()
    extra = serializers.DictField(child=serializers.JSONField())


def _first_message(detail) -> str:
    """The first human message of a DRF error detail, prefixed with its field."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            inner = _first_message(value)
            return inner if key == "non_field_errors" else f"{key}: {inner}"
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    return str(detail)


def _row_label(error: dict) -> str:
    where = "file" if error["row"] is None else f"row {error['row']}"
    return f"{where}, {error['field']}" if error["field"] else where


def _describe_api_exception(exc: exceptions.APIException) -> tuple[int, dict, dict]:
    headers = {}
    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = exc.auth_header
    if isinstance(exc, exceptions.ValidationError):
        body = error_body(f"Invalid input. {_first_message(exc.detail)}", code="invalid",
                          fields=exc.detail)
        return exc.status_code, body, headers
    extra = {"code": exc.default_code if isinstance(exc.get_codes(), dict) else exc.get_codes()}
    if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
        headers["Retry-After"] = str(int(exc.wait))
        extra["wait_seconds"] = int(exc.wait)
    return exc.status_code, error_body(str(exc.detail), **extra), headers


def _describe(exc: Exception) -> tuple[int, dict, dict]:
    """Map an exception to (status, body, headers)."""
    if isinstance(exc, ServiceError):
        return exc.status, error_body(exc.message, code=exc.code, **exc.extra), {}
    if isinstance(exc, ImportRejected):
        errors = [{"row": e.row, "line": e.line, "field": e.field, "message": e.message}
                  for e in exc.errors]
        first = f"{_row_label(errors[0])}: {errors[0]['message']}" if errors else ""
        message = f"Nothing was imported: {exc.total} problem(s). {first}"
        return 400, error_body(message.strip(), code="import_rejected", total=exc.total,
                               errors=errors), {}
    if isinstance(exc, SchemaInvalid):
        errors = [{"path": i.path, "message": i.message} for i in exc.issues]
        return 400, error_body(f"The campaign configuration is invalid: {exc}",
                               code="schema_invalid", errors=errors), {}
    if isinstance(exc, AnswerInvalid):
        errors = [{"path": p, "message": m} for p, m in exc.errors.items()]
        return 400, error_body(f"The answers are invalid: {exc}", code="answers_invalid",
                               errors=errors), {}
    if isinstance(exc, exceptions.APIException):
        return _describe_api_exception(exc)
    if isinstance(exc, Http404):
        return 404, error_body("Not found.", code="not_found"), {}
    if isinstance(exc, PermissionDenied):
        message = "You do not have permission to do this."
        return 403, error_body(message, code="permission_denied"), {}
    if isinstance(exc, DjangoValidationError):
        return 400, error_body(f"Invalid input. {'; '.join(exc.messages)}", code="invalid"), {}
    if isinstance(exc, RequestDataTooBig):
        # A body without Content-Length that grew past the limit while Django read it.
        message = "The request body is larger than the configured limit."
        return 413, error_body(message, code="payload_too_large"), {}
    if isinstance(exc, SuspiciousOperation):
        return 400, error_body(f"Bad request: {exc}", code="bad_request"), {}
    if isinstance(exc, IntegrityError):
        # A concurrent write took a unique value between our check and the insert.
        return 409, error_body("This conflicts with existing data; retry.", code="conflict"), {}
    if isinstance(exc, DataError):
        return 400, error_body("A value cannot be stored (a NUL character or a number out of "
                               "range).", code="unstorable_value"), {}
    logger.exception("Unexpected error in an API view")
    return 500, error_body("Internal server error.", code="server_error"), {}


def exception_handler(exc: Exception, context: dict) -> Response | None:
    """REST_FRAMEWORK["EXCEPTION_HANDLER"]: one shape, the right status, never a bare 500 page."""
    if isinstance(exc, OperationalError | InterfaceError):
        # A database outage: re-raised for annotate.http.outage, which answers 503 "retry" and
        # drops the broken connection.
        return None
    status_code, body, headers = _describe(exc)
    set_rollback()
    return Response(body, status=status_code, headers=headers)


@csrf_exempt  # a POST to no endpoint is a 404, not a CSRF failure
def not_found(request, *args, **kwargs) -> HttpResponse:
    """Any /api/ path that matches no route: a JSON 404 instead of Django's HTML page."""
    return json_error("No such API endpoint.", status=404, code="not_found")
