"""The bases the change-request API's serializers share: the URL of a route, the risk levels, page envelopes."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.reverse import reverse

from operations.risk import LEVELS

__all__ = ("NAMESPACE", "RISKS", "PageSerializer", "link", "operation_schema")

NAMESPACE = "operations_api"
RISKS = LEVELS  # the one risk model (operations.risk)

_TABLE_REF = {
    "type": "object",
    "required": ["database", "table"],
    "properties": {"database": {"type": "string"}, "table": {"type": "string"}},
}
_OPERATION_EXAMPLE = {
    "kind": "rename_table",
    "target": {"database": "sales", "table": "orders"},
    "new": {"database": "sales", "table": "orders_v2"},
}


def operation_schema(kinds: list[str], description: str) -> dict[str, Any]:
    """The OpenAPI schema of a structured operation of one of ``kinds``."""
    return {
        "type": "object",
        "description": description,
        "required": ["kind", "target"],
        "properties": {"kind": {"type": "string", "enum": kinds}, "target": _TABLE_REF},
        "additionalProperties": True,
        "example": _OPERATION_EXAMPLE,
    }


def link(name: str, context: dict[str, Any], **kwargs: Any) -> str:
    """The absolute URL of the route ``name`` of the change-request API (absolute when the context has the request)."""
    return reverse(f"{NAMESPACE}:{name}", kwargs=kwargs, request=context.get("request"))


# A keyset page's links (each subclass adds its ``results``); no docstring: it would describe every page's schema.
class PageSerializer(serializers.Serializer):
    next = serializers.URLField(allow_null=True, help_text="Absolute URL of the next page; null on the last page.")
    next_cursor = serializers.CharField(
        allow_null=True, help_text="Opaque cursor of the next page (pass as ?cursor=); null on the last page."
    )
