"""Global search over the databases and tables of a metastore."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.selectors.metastores import get_metastore, metastore_configs
from catalog_admin.selectors.search import MIN_QUERY_LENGTH, search_catalog

__all__ = ("search", "search_suggestions")

SUGGESTIONS = 8


@require_GET
def search(request: HttpRequest) -> HttpResponse:
    """
    Databases, tables, columns and comments matching ``q`` in ``metastore`` (the default when not given).

    An empty query shows the form; a query the selector refuses (too short) is shown with its reason, as a 400.
    """
    current = get_metastore(request.GET.get("metastore") or None)
    query = request.GET.get("q", "").strip()
    context = {"metastore": current, "query": query, "configs": metastore_configs(), "results": None, "error": None}
    if not query:
        return render(request, "catalog_admin/search.html", context)
    try:
        context["results"] = search_catalog(current, query)
    except ApplicationError as exc:
        if exc.code != ErrorCode.INVALID_PARAMETER:
            raise
        context["error"] = exc
        return render(request, "catalog_admin/search.html", context, status=exc.code.http_status)
    return render(request, "catalog_admin/search.html", context)


@require_GET
def search_suggestions(request: HttpRequest) -> HttpResponse:
    """The typeahead under the top bar's search box (htmx): a few tables and columns; nothing for a short query."""
    current = get_metastore(request.GET.get("metastore") or None)
    query = request.GET.get("q", "").strip()
    results = search_catalog(current, query, limit=SUGGESTIONS) if len(query) >= MIN_QUERY_LENGTH else None
    context = {"metastore": current, "query": query, "results": results}
    return render(request, "catalog_admin/htmx/search_suggestions.html", context)
