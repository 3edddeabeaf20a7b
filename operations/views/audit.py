"""The audit log: read-only, filtered, in keyset pages, and exported as CSV or JSON."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.utils.htmx import render_list
from catalog_admin.utils.paging import Paging
from operations.selectors import AuditFilter, audit_records, list_audit
from operations.services.audit import export_audit

__all__ = ("audit_export", "audit_log")

EXPORT_TYPES = {"csv": "text/csv; charset=utf-8", "json": "application/json"}


@require_GET
def audit_log(request: HttpRequest) -> HttpResponse:
    """Every recorded action, newest first; filters by actor, action, outcome, metastore, database, table, request."""
    filters = AuditFilter.from_params(request.GET)
    paging = Paging.from_request(request)
    context = {
        "filters": filters,
        "page": list_audit(filters, cursor=paging.cursor, size=paging.size),
        "paging": paging,
    }
    return render_list(request, "operations/audit.html", "operations/htmx/audit_list.html", context)


@require_GET
def audit_export(request: HttpRequest, fmt: str) -> HttpResponse:
    """The filtered records (all of them, in chain order) as a CSV or JSON download."""
    if fmt not in EXPORT_TYPES:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER, f"format must be csv or json, not '{fmt}'.", {"parameter": "format"}
        )
    records = audit_records(AuditFilter.from_params(request.GET))
    response = HttpResponse(export_audit(records, fmt), content_type=EXPORT_TYPES[fmt])
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    response["Content-Disposition"] = f'attachment; filename="audit-{stamp}.{fmt}"'
    return response
