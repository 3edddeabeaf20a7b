"""
Inputs every API view refuses before it runs: NUL (0x00) characters in the path or the query string.

No metastore or console name holds one, and PostgreSQL cannot even compare a text with one (the driver raises
before the query is sent), so a NUL would otherwise end as a 500. A path parameter with one names nothing (404
``not_found``); a query parameter with one is malformed (400 ``invalid_parameter``). Bodies need no check here:
every ``CharField`` of DRF already refuses NUL characters.
"""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request

from catalog_admin.errors import ApplicationError, ErrorCode

__all__ = ("RejectsNulCharacters", "reject_nul_characters")

NUL = "\x00"


def reject_nul_characters(request: Request, kwargs: dict[str, Any]) -> None:
    for name, value in kwargs.items():
        if isinstance(value, str) and NUL in value:
            raise ApplicationError(
                ErrorCode.NOT_FOUND, f"No {name} has a NUL (0x00) character in its name.", {"parameter": name}
            )
    for name, values in request.query_params.lists():
        if NUL in name or any(NUL in value for value in values):
            shown = name.replace(NUL, "\\x00")
            raise ApplicationError(
                ErrorCode.INVALID_PARAMETER,
                f"Query parameter '{shown}' holds a NUL (0x00) character.",
                {"parameter": shown},
            )


class RejectsNulCharacters:
    """Mixin for an ``APIView``: :func:`reject_nul_characters` once the caller is authenticated."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # type: ignore[misc]
        reject_nul_characters(request, kwargs)
