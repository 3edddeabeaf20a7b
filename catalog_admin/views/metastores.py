"""The overview of every registered metastore."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from catalog_admin.errors import metastore_unavailable
from catalog_admin.metastores import MetastoreConfig
from catalog_admin.roles import is_operator
from catalog_admin.selectors.databases import count_databases
from catalog_admin.selectors.metastores import Metastore, metastore_configs, metastore_status

__all__ = ("metastore_list",)


@dataclass(frozen=True)
class MetastoreOverview:
    """One registered metastore as the overview shows it."""

    config: MetastoreConfig
    metastore: Metastore | None
    database_count: int | None
    error: str


@require_GET
def metastore_list(request: HttpRequest) -> HttpResponse:
    """Every registered metastore: vendor, URL without password (to operators only), schema version,
    reachability, databases."""
    overviews = [_overview(config) for config in metastore_configs()]
    context = {"overviews": overviews, "show_connections": is_operator(request.user)}
    return render(request, "catalog_admin/metastores.html", context)


def _overview(config: MetastoreConfig) -> MetastoreOverview:
    status = metastore_status(config)
    if status.metastore is None:
        return MetastoreOverview(config=config, metastore=None, database_count=None, error=status.error)
    try:
        count = count_databases(status.metastore)
    except DatabaseError as exc:
        # The schema version is cached for a minute; the metastore may have gone away since.
        error = metastore_unavailable(exc, config.name)
        return MetastoreOverview(config=config, metastore=None, database_count=None, error=error.message)
    return MetastoreOverview(config=config, metastore=status.metastore, database_count=count, error="")
