"""
The API's JSON parser: DRF's, with a bound on nesting.

A body nested deeper than :data:`MAX_JSON_DEPTH` (no request of the API needs more than a few levels) is refused as
``400 invalid_json`` before any view sees it; Python's decoder would otherwise recurse until ``RecursionError`` (a 500).
The body's size is bounded earlier, by :class:`~catalog_admin.middleware.RequestBodyLimitMiddleware`.
"""

from __future__ import annotations

from typing import Any

from rest_framework import parsers

from catalog_admin.errors import ApplicationError, ErrorCode

__all__ = ("MAX_JSON_DEPTH", "DepthLimitedJSONParser", "json_depth")

MAX_JSON_DEPTH = 32


class DepthLimitedJSONParser(parsers.JSONParser):
    """``application/json`` bodies of at most :data:`MAX_JSON_DEPTH` nested arrays and objects."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict[str, Any] | None = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:  # deeper than the interpreter's recursion limit
            data, too_deep = None, True
        else:
            too_deep = json_depth(data) > MAX_JSON_DEPTH
        if too_deep:
            raise ApplicationError(
                ErrorCode.INVALID_JSON,
                f"The JSON body is nested more than {MAX_JSON_DEPTH} levels deep.",
                {"max_depth": MAX_JSON_DEPTH},
            )
        return data


def json_depth(value: Any) -> int:
    """How many arrays and objects are nested in a decoded JSON value (0 for a scalar); iterative, never recursive."""
    deepest = 0
    pending = [(value, 1)]
    while pending:
        item, level = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        pending.extend((child, level + 1) for child in children)
    return deepest
