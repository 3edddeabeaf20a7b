"""The tables of a database (filter, sort, keyset pages) and the page of one table."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from catalog_admin.models import TableType
from catalog_admin.selectors.acid import partition_reports
from catalog_admin.selectors.databases import database_params, get_database
from catalog_admin.selectors.metastores import get_metastore
from catalog_admin.selectors.table_ddl import show_create_statement
from catalog_admin.selectors.tables import TABLE_SORTS, TableFilter, get_table_detail, list_tables
from catalog_admin.utils.htmx import render_list
from catalog_admin.utils.paging import Paging

__all__ = ("table_detail", "table_list")

SORT_LABELS = {"name": "Name A–Z", "-name": "Name Z–A", "created": "Oldest first", "-created": "Newest first"}


@require_GET
def table_list(request: HttpRequest, metastore: str, database: str) -> HttpResponse:
    """One page of a database's tables; htmx requests (the filter form, paging) get only the list."""
    current = get_metastore(metastore)
    db = get_database(current, database)
    filters = TableFilter.from_params(request.GET)
    paging = Paging.from_request(request)
    context = {
        "metastore": current,
        "database": db,
        "database_params": database_params(current, db),
        "filters": filters,
        "page": list_tables(current, db, filters, cursor=paging.cursor, size=paging.size),
        "paging": paging,
        "table_types": TableType.choices,
        "sorts": [(key, SORT_LABELS.get(key, key)) for key in TABLE_SORTS],
    }
    return render_list(request, "catalog_admin/tables.html", "catalog_admin/htmx/table_list.html", context)


@require_GET
def table_detail(request: HttpRequest, metastore: str, database: str, table: str) -> HttpResponse:
    """Everything about one table: columns, storage, parameters, statistics, privileges, ACID state."""
    current = get_metastore(metastore)
    detail = get_table_detail(current, database, table)
    context = {
        "metastore": current,
        "database": detail.database,
        "table": detail.table,
        "detail": detail,
        "show_create": show_create_statement(current, detail),
    }
    if detail.is_transactional:  # the first directories as Hive's readers see them; the ACID page has them all
        context["acid_directories"] = partition_reports(current, detail.database.name, detail.table, size=10)
    return render(request, "catalog_admin/table.html", context)
