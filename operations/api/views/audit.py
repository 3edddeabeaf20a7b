"""The append-only audit log: pages of it, one record, the export (CSV or JSON)."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from catalog_admin.errors import ApplicationError, ErrorCode, NotFound
from catalog_admin.selectors.pagination import page_size
from operations.api.serializers import AuditExportSerializer, AuditPageSerializer, AuditRecordSerializer
from operations.api.views.base import CURSOR, PAGE_SIZE, OperationsAPIView, errors
from operations.models import AuditRecord
from operations.selectors import AuditFilter, audit_records, list_audit
from operations.services.audit import export_audit

__all__ = ("EXPORT_TYPES", "AuditDetailView", "AuditExportView", "AuditListView")

EXPORT_TYPES = {"csv": "text/csv; charset=utf-8", "json": "application/json"}

_AUDIT_FILTERS = [
    OpenApiParameter("actor", str, description="Only this actor (username, or job)."),
    OpenApiParameter("action", str, description="Only this action (create, submit, approve, execute, finish …)."),
    OpenApiParameter("outcome", str, description="Only this outcome."),
    OpenApiParameter("metastore", str, description="Only this metastore."),
    OpenApiParameter("database", str, description="Only this database (exact)."),
    OpenApiParameter("table", str, description="Only this table (exact name)."),
    OpenApiParameter(
        "request",
        str,
        pattern=r"^\s*#?[0-9]*\s*$",
        description="Only the records of this change request (and its execution): its number, optionally as #N "
        "(empty: any).",
    ),
]


class AuditListView(OperationsAPIView):
    @extend_schema(
        tags=["audit"],
        operation_id="audit_list",
        parameters=[*_AUDIT_FILTERS, CURSOR, PAGE_SIZE],
        responses={200: AuditPageSerializer, **errors(400, 401)},
    )
    def get(self, request: Request) -> Response:
        """The append-only audit log, newest first, filtered (keyset pages). It cannot be changed: no writes."""
        params = request.query_params
        filters = AuditFilter.from_params(params)
        page = list_audit(filters, cursor=params.get("cursor", ""), size=page_size(params.get("page_size")))
        return self.page(page, AuditPageSerializer)


class AuditDetailView(OperationsAPIView):
    @extend_schema(
        tags=["audit"],
        operation_id="audit_retrieve",
        parameters=[OpenApiParameter("id", int, OpenApiParameter.PATH, description="Audit record number.")],
        responses={
            200: AuditRecordSerializer,
            **errors(401, 404, overrides={404: "not_found: no such audit record."}),
        },
    )
    def get(self, request: Request, pk: int) -> Response:
        """One audit record (read-only)."""
        record = AuditRecord.objects.filter(pk=pk).first()
        if record is None:
            raise NotFound("audit record", f"#{pk}")
        return Response(AuditRecordSerializer(record, context=self.context()).data)


class _ErrorsAsJson(BaseContentNegotiation):
    """The export's ``format`` names the file it returns, not a renderer: errors are always JSON."""

    def select_parser(self, request: Request, parsers: list[Any]) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(
        self, request: Request, renderers: list[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        return renderers[0], renderers[0].media_type


class AuditExportView(OperationsAPIView):
    renderer_classes = [JSONRenderer]
    content_negotiation_class = _ErrorsAsJson

    @extend_schema(
        tags=["audit"],
        operation_id="audit_export",
        parameters=[
            OpenApiParameter("format", str, enum=list(EXPORT_TYPES), default="csv", description="File format."),
            *_AUDIT_FILTERS,
        ],
        responses={
            (200, "text/csv"): OpenApiResponse(
                OpenApiTypes.STR, description="One row per record, chain order; a last line with the chain's anchor."
            ),
            (200, "application/json"): OpenApiResponse(
                AuditExportSerializer, description="The records (the columns of the CSV) and the chain's anchor."
            ),
            **errors(400, 401, overrides={400: "invalid_parameter: an unknown format or a malformed filter."}),
        },
    )
    def get(self, request: Request) -> HttpResponse:
        """Every matching audit record, oldest first (the hash chain's order), as a CSV or JSON download."""
        fmt = request.query_params.get("format", "csv")
        if fmt not in EXPORT_TYPES:
            raise ApplicationError(
                ErrorCode.INVALID_PARAMETER, f"format must be csv or json, not '{fmt}'.", {"parameter": "format"}
            )
        records = audit_records(AuditFilter.from_params(request.query_params))
        response = HttpResponse(export_audit(records, fmt), content_type=EXPORT_TYPES[fmt])
        response["Content-Disposition"] = f'attachment; filename="audit-{timezone.now():%Y%m%d-%H%M%S}.{fmt}"'
        return response
