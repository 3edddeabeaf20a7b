"""The partitions browser of a table and the page of one partition."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from catalog_admin.hive_params import parse_stats_accurate
from catalog_admin.models import Partition, PartitionParam
from catalog_admin.selectors.metastores import Metastore, get_metastore
from catalog_admin.selectors.partitions import (
    KEY_PARAM_PREFIX,
    PartitionFilter,
    get_partition,
    list_partitions,
    partition_column_statistics,
    partition_values,
)
from catalog_admin.selectors.tables import get_table_detail
from catalog_admin.views.htmx import render_list
from catalog_admin.views.paging import Paging

__all__ = ("partition_detail", "partition_list")


@require_GET
def partition_list(request: HttpRequest, metastore: str, database: str, table: str) -> HttpResponse:
    """One keyset page of a table's partitions, filtered by exact key values and a name substring."""
    current = get_metastore(metastore)
    detail = get_table_detail(current, database, table)
    keys = detail.partition_keys
    filters = PartitionFilter.from_params(request.GET, keys)
    paging = Paging.from_request(request)
    chosen = dict(filters.values)
    context = {
        "metastore": current,
        "database": detail.database,
        "table": detail.table,
        "detail": detail,
        "filters": filters,
        "key_filters": [(key, f"{KEY_PARAM_PREFIX}{key.name}", chosen.get(key.name, "")) for key in keys],
        "page": list_partitions(current, detail.table, keys, filters, cursor=paging.cursor, size=paging.size),
        "paging": paging,
    }
    return render_list(request, "catalog_admin/partitions.html", "catalog_admin/htmx/partition_list.html", context)


@require_GET
def partition_detail(request: HttpRequest, metastore: str, database: str, table: str, partition: str) -> HttpResponse:
    """One partition: its values, location and flags, parameters and column statistics."""
    current = get_metastore(metastore)
    detail = get_table_detail(current, database, table)
    found = get_partition(current, detail.table, partition)
    keys = detail.partition_keys
    values = partition_values(found.name or "")
    # Exact values for every key select exactly this partition; its row carries the size and location flags.
    exact = PartitionFilter(values=tuple((key.name, value) for key, value in zip(keys, values, strict=False)))
    rows = list_partitions(current, detail.table, keys, exact, size=1).items
    params = partition_params(current, found)
    context = {
        "metastore": current,
        "database": detail.database,
        "table": detail.table,
        "detail": detail,
        "partition": found,
        "row": rows[0] if rows else None,
        "key_values": list(zip(keys, values, strict=False)),
        "params": params,
        "stats_accurate": parse_stats_accurate(params.get("COLUMN_STATS_ACCURATE")),
        "column_statistics": partition_column_statistics(current, found),
    }
    return render(request, "catalog_admin/partition.html", context)


def partition_params(metastore: Metastore, partition: Partition) -> dict[str, str | None]:
    """
    Every parameter of ``partition``, by key.

    TODO(selectors): belongs in ``catalog_admin/selectors/partitions.py`` beside ``database_params``;
    it is here only until that module offers it (PARTITION_PARAMS has no version-dependent columns).
    """
    rows = PartitionParam.objects.using(metastore.alias).filter(partition_id=partition.id).order_by("key")
    return dict(rows.values_list("key", "value"))
