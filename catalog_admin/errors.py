"""
The one error vocabulary of the console: stable codes with messages, shared by the UI and the API.

Services and selectors raise :class:`ApplicationError` (or a subclass); the API's exception
handler renders ``{"code", "message", "details"}`` with the code's HTTP status, and views show
the same message.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from catalog_admin.utils.text import first_line

__all__ = ("ApplicationError", "ErrorCode", "NotFound", "metastore_unavailable")


class ErrorCode(StrEnum):
    """Stable error codes; never rename one, automation matches on them."""

    NOT_FOUND = "not_found"
    INVALID_PARAMETER = "invalid_parameter"
    INVALID_JSON = "invalid_json"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    METASTORE_UNAVAILABLE = "metastore_unavailable"
    UNSUPPORTED_SCHEMA_VERSION = "unsupported_schema_version"
    WRITE_FORBIDDEN = "write_forbidden"
    NOT_AUTHENTICATED = "not_authenticated"
    PERMISSION_DENIED = "permission_denied"
    SELF_APPROVAL_FORBIDDEN = "self_approval_forbidden"
    DDL_PARSE_ERROR = "ddl_parse_error"
    HIVE_RULE_VIOLATION = "hive_rule_violation"
    STALE_PREVIEW = "stale_preview"
    EXECUTION_FAILED = "execution_failed"
    INVALID_STATE = "invalid_state"
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"
    INTERNAL_ERROR = "internal_error"
    NO_DATA_FILES = "no_data_files"
    UNREADABLE_DATA = "unreadable_data"
    OUTSIDE_ROOTS = "outside_roots"
    SYMLINK_REFUSED = "symlink_refused"

    @property
    def http_status(self) -> int:
        return _HTTP_STATUS.get(self, 400)


_HTTP_STATUS = {
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.INVALID_PARAMETER: 400,
    ErrorCode.INVALID_JSON: 400,
    ErrorCode.PAYLOAD_TOO_LARGE: 413,
    ErrorCode.METASTORE_UNAVAILABLE: 503,
    ErrorCode.UNSUPPORTED_SCHEMA_VERSION: 503,
    ErrorCode.WRITE_FORBIDDEN: 403,
    ErrorCode.NOT_AUTHENTICATED: 401,
    ErrorCode.PERMISSION_DENIED: 403,
    ErrorCode.SELF_APPROVAL_FORBIDDEN: 403,
    ErrorCode.DDL_PARSE_ERROR: 400,
    ErrorCode.HIVE_RULE_VIOLATION: 422,
    ErrorCode.STALE_PREVIEW: 409,
    ErrorCode.EXECUTION_FAILED: 500,
    ErrorCode.INVALID_STATE: 409,
    ErrorCode.IDEMPOTENCY_KEY_REUSED: 422,
    ErrorCode.INTERNAL_ERROR: 500,
    ErrorCode.NO_DATA_FILES: 404,
    ErrorCode.UNREADABLE_DATA: 422,
    ErrorCode.OUTSIDE_ROOTS: 422,
    ErrorCode.SYMLINK_REFUSED: 422,
}


class ApplicationError(Exception):
    """An expected failure with a code, a human message and machine-readable details."""

    def __init__(self, code: ErrorCode, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": str(self.code),
            "message": self.message,
            "details": self.details,
        }


class NotFound(ApplicationError):
    """A metastore, database, table or partition that does not exist."""

    def __init__(self, kind: str, name: str, **details: Any) -> None:
        super().__init__(
            ErrorCode.NOT_FOUND,
            f"{kind.capitalize()} '{name}' was not found.",
            {"kind": kind, "name": name, **details},
        )


def metastore_unavailable(exc: BaseException, metastore: str | None = None) -> ApplicationError:
    """
    The one error for a database connection that failed (503 ``metastore_unavailable``), naming the metastore
    when it is known, with the first line of the driver's message (never a stack trace).
    """
    if metastore is None:
        return ApplicationError(ErrorCode.METASTORE_UNAVAILABLE, f"A database is unavailable: {first_line(exc)}")
    return ApplicationError(
        ErrorCode.METASTORE_UNAVAILABLE,
        f"Metastore '{metastore}' is unavailable: {first_line(exc)}",
        {"metastore": metastore},
    )
