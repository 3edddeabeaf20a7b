"""API errors as JSON ``{"code", "message", "details"}``, one vocabulary with the browser."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler

from catalog_admin.errors import ApplicationError, ErrorCode

__all__ = ("api_exception_handler",)

_DRF_CODES = {
    exceptions.NotAuthenticated: ErrorCode.NOT_AUTHENTICATED,
    exceptions.AuthenticationFailed: ErrorCode.NOT_AUTHENTICATED,
    exceptions.PermissionDenied: ErrorCode.PERMISSION_DENIED,
    exceptions.NotFound: ErrorCode.NOT_FOUND,
    exceptions.ValidationError: ErrorCode.INVALID_PARAMETER,
    exceptions.ParseError: ErrorCode.INVALID_PARAMETER,
}


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ApplicationError):
        return Response(exc.as_dict(), status=exc.code.http_status)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    response = exception_handler(exc, context)
    if response is None:
        return None
    code = next((c for cls, c in _DRF_CODES.items() if isinstance(exc, cls)), None)
    detail = response.data
    if isinstance(detail, dict) and set(detail) == {"detail"}:
        message, details = str(detail["detail"]), {}
    else:
        message, details = _validation_message(detail), {"fields": detail}
    response.data = {"code": str(code) if code else getattr(exc, "default_code", "error"), "message": message, "details": details}
    return response


def _validation_message(detail: Any) -> str:
    if isinstance(detail, dict):
        return "; ".join(f"{key}: {_validation_message(value)}" for key, value in detail.items())
    if isinstance(detail, list):
        return " ".join(str(item) for item in detail)
    return str(detail)
