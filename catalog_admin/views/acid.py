"""Pages of transactional tables' directories: ``getAcidState`` per partition, and the metastore's compaction needs."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from catalog_admin.selectors.acid import (
    compaction_queue,
    compaction_thresholds,
    partition_reports,
    valid_txn_list,
    valid_write_ids,
    worst_partitions,
)
from catalog_admin.selectors.metastores import get_metastore
from catalog_admin.selectors.tables import get_table
from catalog_admin.utils.paging import Paging

__all__ = ("acid_directories", "compaction_needs")


@require_GET
def acid_directories(request: HttpRequest, metastore: str, database: str, table: str) -> HttpResponse:
    """A keyset page of the table's directories as Hive's readers see them, and its compaction queue."""
    current = get_metastore(metastore)
    found_database, found_table = get_table(current, database, table)
    paging = Paging.from_request(request)
    context = {
        "metastore": current,
        "database": found_database,
        "table": found_table,
        "write_ids": valid_write_ids(current, found_database.name, found_table.name, valid_txn_list(current)),
        "page": partition_reports(current, found_database.name, found_table, cursor=paging.cursor, size=paging.size),
        "paging": paging,
        "queue": compaction_queue(current, found_database.name, found_table.name),
        "thresholds": compaction_thresholds(),
    }
    return render(request, "catalog_admin/acid_directories.html", context)


@require_GET
def compaction_needs(request: HttpRequest, metastore: str) -> HttpResponse:
    """The metastore's transactional directories that Hive's Initiator would compact, worst first."""
    current = get_metastore(metastore)
    context = {"metastore": current, "needs": worst_partitions(current), "thresholds": compaction_thresholds()}
    return render(request, "catalog_admin/compaction_needs.html", context)
