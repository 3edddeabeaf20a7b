"""The table page's data panels loaded on demand: the sample of rows (an htmx partial)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.selectors.metastores import get_metastore
from catalog_admin.selectors.partitions import get_partition, table_partition_keys
from catalog_admin.selectors.samples import sample_limit, table_sample
from catalog_admin.selectors.tables import get_table

__all__ = ("table_sample_panel",)

# Refusals shown inside the panel (the rest of the page stays usable); anything else is the error page's.
_PANEL_ERRORS = (
    ErrorCode.NO_DATA_FILES,
    ErrorCode.UNREADABLE_DATA,
    ErrorCode.OUTSIDE_ROOTS,
    ErrorCode.SYMLINK_REFUSED,
    ErrorCode.INVALID_PARAMETER,
)


@require_GET
def table_sample_panel(request: HttpRequest, metastore: str, database: str, table: str) -> HttpResponse:
    """The first rows of a table, or of ``?partition=NAME``, as a table; errors in the shared vocabulary."""
    current = get_metastore(metastore)
    found_database, found_table = get_table(current, database, table)
    name = request.GET.get("partition", "")
    context = {"metastore": current, "database": found_database, "table": found_table, "partition": name}
    try:
        partition = get_partition(current, found_table, name) if name else None
        keys = table_partition_keys(current, found_table)
        limit = sample_limit(request.GET.get("limit"))
        context["sample"] = table_sample(current, found_table, keys, limit=limit, partition=partition)
    except ApplicationError as exc:
        if exc.code not in _PANEL_ERRORS:
            raise
        context["error"] = exc
        return render(request, "catalog_admin/htmx/sample.html", context, status=exc.code.http_status)
    return render(request, "catalog_admin/htmx/sample.html", context)
