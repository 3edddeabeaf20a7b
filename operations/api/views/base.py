"""
What the change-request API's views share: the error responses of the OpenAPI schema, the common parameters,
the schema of a command on one request, and the base view (body validation, one request's representation, pages).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from catalog_admin.api.inputs import RejectsNulCharacters
from catalog_admin.api.serializers import ErrorSerializer
from catalog_admin.selectors.pagination import Page
from operations.api.idempotency import IDEMPOTENCY_KEY_PARAMETER
from operations.api.serializers import ChangeRequestSerializer
from operations.models import ChangeRequest

__all__ = (
    "CREATE_ERRORS",
    "CURSOR",
    "FRESH_ERRORS",
    "PAGE_SIZE",
    "PK",
    "OperationsAPIView",
    "command_schema",
    "errors",
)

_ERRORS = {
    400: "invalid_parameter: a malformed body, Idempotency-Key, cursor, page_size or filter (details name the "
    "parameter).",
    401: "not_authenticated: no token or session, a wrong token, or an expired one.",
    403: "permission_denied: your role does not allow it.",
    404: "not_found: no such change request.",
    409: "invalid_state: the request's state does not allow the action (details: state, action).",
    415: "unsupported_media_type: a body that is not JSON, form or multipart data (send application/json).",
    422: "idempotency_key_reused: the Idempotency-Key was used with another body.",
    503: "metastore_unavailable: the metastore cannot be read.",
}
CREATE_ERRORS = {
    400: "invalid_parameter (statement and operation both or neither given, a malformed operation) or "
    "ddl_parse_error: the statement does not parse (details: position, line, column, supported).",
    404: "not_found: the metastore, database or table does not exist (details: kind, name).",
}
FRESH_ERRORS = {
    409: "invalid_state (details: state, action) or stale_preview: the table changed since the preview "
    "(details: previewed_fingerprint, current_fingerprint, previewed_diff, current_diff); refresh it first.",
    422: "hive_rule_violation: a Hive rule blocks the change (details: rule, blockers), or idempotency_key_reused.",
}


def errors(*statuses: int, overrides: dict[int, str] | None = None) -> dict[int, OpenApiResponse]:
    """The error responses ``statuses`` with their codes (``overrides``: this endpoint's own descriptions)."""
    descriptions = {**_ERRORS, **(overrides or {})}
    return {status: OpenApiResponse(ErrorSerializer, description=descriptions[status]) for status in statuses}


PK = OpenApiParameter("id", int, OpenApiParameter.PATH, description="Change request number.")
CURSOR = OpenApiParameter("cursor", str, description="Opaque cursor from next_cursor; omit for the first page.")
PAGE_SIZE = OpenApiParameter(
    "page_size",
    {"type": "integer", "minimum": 1, "maximum": settings.CATALOG_MAX_PAGE_SIZE},
    description=f"Results per page, 1 to {settings.CATALOG_MAX_PAGE_SIZE} (default {settings.CATALOG_PAGE_SIZE}).",
)


def command_schema(operation_id: str, summary: str, request: Any, responses: dict[int, Any], **extra: Any) -> Any:
    """The schema of a command on one change request (path id, Idempotency-Key, its errors).

    Every command answers 400 to a malformed Idempotency-Key, whether or not its body can be malformed, and 415 to a
    body it cannot parse (the key's check reads the body).
    """
    responses = dict(sorted({**errors(400, 415), **responses}.items()))
    return extend_schema(
        tags=["change-requests"],
        operation_id=operation_id,
        summary=summary,
        parameters=[PK, IDEMPOTENCY_KEY_PARAMETER],
        request=request,
        responses=responses,
        **extra,
    )


# Base ----------------------------------------------------------------------------------------------------------------


class OperationsAPIView(RejectsNulCharacters, APIView):
    """Helpers shared by the views: body validation, one change request's representation, cursor pages."""

    def context(self, **extra: Any) -> dict[str, Any]:
        return {"request": self.request, **extra}

    def validated(self, serializer_class: type[serializers.Serializer], **context: Any) -> dict[str, Any]:
        serializer = serializer_class(data=self.request.data, context=self.context(**context))
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)

    def change_request(self, change: ChangeRequest, status: int = 200) -> Response:
        return Response(ChangeRequestSerializer(change, context=self.context()).data, status=status)

    def page(self, page: Page, serializer_class: type[serializers.Serializer]) -> Response:
        """``{"results", "next", "next_cursor"}``; ``next`` keeps the other query parameters."""
        next_url = None
        if page.next_cursor:
            next_url = replace_query_param(self.request.build_absolute_uri(), "cursor", page.next_cursor)
        data = {"results": page.items, "next": next_url, "next_cursor": page.next_cursor or None}
        return Response(serializer_class(data, context=self.context()).data)
