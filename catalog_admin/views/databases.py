"""The databases of one metastore."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from catalog_admin.selectors.databases import list_databases
from catalog_admin.selectors.metastores import get_metastore

__all__ = ("database_list",)


@require_GET
def database_list(request: HttpRequest, metastore: str) -> HttpResponse:
    """Every database of ``metastore`` with its table, view and external-table counts."""
    current = get_metastore(metastore)
    context = {"metastore": current, "databases": list_databases(current)}
    return render(request, "catalog_admin/databases.html", context)
