"""
API errors as JSON ``{"code", "message", "details"}``, one vocabulary with the browser.

* :class:`~catalog_admin.errors.ApplicationError` keeps its code and the code's HTTP status;
* DRF's exceptions (authentication, permission, parsing, 404, 405 …) get the matching code;
* anything else is a bug: it is logged with its traceback and answered with a JSON 500 that
  reveals nothing of the stack (``got_request_exception`` is still sent, as Django would).
"""

from __future__ import annotations

import logging
from typing import Any

from django.core import signals
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler, set_rollback

from catalog_admin.errors import ApplicationError, ErrorCode

__all__ = ("INTERNAL_ERROR", "api_exception_handler")

# Not an ErrorCode: no service raises it; it only says "a bug, logged on the server".
INTERNAL_ERROR = "internal_error"

logger = logging.getLogger("django.request")

_DRF_CODES = {
    exceptions.NotAuthenticated: ErrorCode.NOT_AUTHENTICATED,
    exceptions.AuthenticationFailed: ErrorCode.NOT_AUTHENTICATED,
    exceptions.PermissionDenied: ErrorCode.PERMISSION_DENIED,
    exceptions.NotFound: ErrorCode.NOT_FOUND,
    exceptions.ValidationError: ErrorCode.INVALID_PARAMETER,
    exceptions.ParseError: ErrorCode.INVALID_PARAMETER,
}


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    if isinstance(exc, ApplicationError):
        return Response(exc.as_dict(), status=exc.code.http_status)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    response = exception_handler(exc, context)
    if response is None:
        return _internal_error(exc, context)
    code = next((c for cls, c in _DRF_CODES.items() if isinstance(exc, cls)), None)
    detail = response.data
    if isinstance(detail, dict) and set(detail) == {"detail"}:
        message, details = str(detail["detail"]), {}
    else:
        message, details = _validation_message(detail), {"fields": detail}
    response.data = {
        "code": str(code) if code else getattr(exc, "default_code", "error"),
        "message": message,
        "details": details,
    }
    return response


def _internal_error(exc: Exception, context: dict[str, Any]) -> Response:
    request = context.get("request")
    django_request = getattr(request, "_request", request)
    path = getattr(django_request, "path", "")
    set_rollback()
    signals.got_request_exception.send(sender=None, request=django_request)
    logger.error(
        "Internal Server Error: %s",
        path,
        exc_info=(type(exc), exc, exc.__traceback__),
        extra={"status_code": 500, "request": django_request},
    )
    response = Response(
        {
            "code": INTERNAL_ERROR,
            "message": "An unexpected error occurred; it has been logged on the server.",
            "details": {},
        },
        status=500,
    )
    response._has_been_logged = True  # type: ignore[attr-defined]  # Django would log it again, without a traceback
    return response


def _validation_message(detail: Any) -> str:
    if isinstance(detail, dict):
        return "; ".join(f"{key}: {_validation_message(value)}" for key, value in detail.items())
    if isinstance(detail, list):
        return " ".join(str(item) for item in detail)
    return str(detail)
