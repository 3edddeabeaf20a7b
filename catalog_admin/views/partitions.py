"""The partitions browser of a table and the page of one partition."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from catalog_admin.selectors.metastores import get_metastore
from catalog_admin.selectors.partition_anomalies import ANOMALIES, DISK_CHECK_LIMIT, anomaly_counts
from catalog_admin.selectors.partition_order import NATURAL_ORDER_LIMIT
from catalog_admin.selectors.partitions import (
    KEY_PARAM_PREFIX,
    PartitionFilter,
    count_partitions,
    get_partition_detail,
    list_partitions,
    sorted_naturally,
    table_partition_keys,
)
from catalog_admin.selectors.tables import get_table
from catalog_admin.utils.htmx import render_list
from catalog_admin.utils.paging import Paging

__all__ = ("partition_anomalies", "partition_detail", "partition_list")


@require_GET
def partition_list(request: HttpRequest, metastore: str, database: str, table: str) -> HttpResponse:
    """One keyset page of a table's partitions, filtered by exact key values and a name substring."""
    current = get_metastore(metastore)
    found_database, found_table = get_table(current, database, table)
    keys = table_partition_keys(current, found_table)
    filters = PartitionFilter.from_params(request.GET, keys)
    paging = Paging.from_request(request)
    chosen = dict(filters.values)
    context = {
        "metastore": current,
        "database": found_database,
        "table": found_table,
        "keys": keys,
        "partition_count": count_partitions(current, found_table) if keys else None,
        "filters": filters,
        "key_filters": [(key, f"{KEY_PARAM_PREFIX}{key.name}", chosen.get(key.name, "")) for key in keys],
        "page": list_partitions(current, found_table, keys, filters, cursor=paging.cursor, size=paging.size),
        "paging": paging,
        "anomalies": ANOMALIES,
        "sorted_naturally": sorted_naturally(current, found_table, keys),
        "natural_order_limit": NATURAL_ORDER_LIMIT,
    }
    return render_list(request, "catalog_admin/partitions.html", "catalog_admin/htmx/partition_list.html", context)


@require_GET
def partition_detail(request: HttpRequest, metastore: str, database: str, table: str, partition: str) -> HttpResponse:
    """One partition: its values, location and flags, parameters and column statistics."""
    current = get_metastore(metastore)
    found_database, found_table = get_table(current, database, table)
    context = {
        "metastore": current,
        "database": found_database,
        "table": found_table,
        "detail": get_partition_detail(current, found_table, partition),
    }
    return render(request, "catalog_admin/partition.html", context)


@require_GET
def partition_anomalies(request: HttpRequest, metastore: str, database: str, table: str) -> HttpResponse:
    """The anomaly counts of a table's partitions, each a link to the partitions filtered by it (an htmx partial)."""
    current = get_metastore(metastore)
    found_database, found_table = get_table(current, database, table)
    context = {
        "metastore": current,
        "database": found_database,
        "table": found_table,
        "counts": anomaly_counts(current, found_table),
        "anomalies": ANOMALIES,
        "limit": DISK_CHECK_LIMIT,
    }
    return render(request, "catalog_admin/htmx/partition_anomalies.html", context)
