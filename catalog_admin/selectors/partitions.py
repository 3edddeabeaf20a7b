"""The partitions browser: keyset pages of a table's partitions with their size, freshness and location flags."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from django.db import connections
from django.db.models import Exists, OuterRef

from catalog_admin.errors import ApplicationError, ErrorCode, NotFound
from catalog_admin.hive.partition_names import (
    HIVE_DEFAULT_PARTITION,
    escape_path_name,
    partition_name,
    partition_values,
    unescape_path_name,
)
from catalog_admin.hive.statistics import int_param, parse_stats_accurate, stats_freshness
from catalog_admin.locations import filesystem_for, is_under
from catalog_admin.models import (
    Partition,
    PartitionColumnStatistics,
    PartitionKey,
    PartitionKeyValue,
    PartitionParam,
    Table,
)
from catalog_admin.selectors.metastores import Metastore
from catalog_admin.selectors.pagination import Page, encode_cursor, keyset_ordered, keyset_page
from catalog_admin.selectors.partition_anomalies import ANOMALIES, location_missing, with_anomaly
from catalog_admin.selectors.partition_order import is_natural, natural_order, sort_key_names
from catalog_admin.selectors.partition_pages import remembered_natural_page
from catalog_admin.selectors.table_aggregates import EXACT_COUNT_LIMIT, partition_stamp

__all__ = (
    "HIVE_DEFAULT_PARTITION",
    "PartitionCount",
    "PartitionDetail",
    "PartitionFilter",
    "PartitionRow",
    "count_partitions",
    "escape_path_name",
    "get_partition",
    "get_partition_detail",
    "list_partitions",
    "partition_column_statistics",
    "partition_name",
    "partition_values",
    "sorted_naturally",
    "table_partition_keys",
    "unescape_path_name",
)

KEY_PARAM_PREFIX = "key."
_PAGE_PARAMS = ("numFiles", "totalSize", "numRows", "COLUMN_STATS_ACCURATE")


@dataclass(frozen=True)
class PartitionFilter:
    """Exact values for some partition keys (``?key.dt=2024-01-01``), a substring of the name, an anomaly."""

    values: tuple[tuple[str, str], ...] = ()
    q: str = ""
    anomaly: str = ""  # one of partition_anomalies.ANOMALIES, or "" for every partition

    @property
    def is_empty(self) -> bool:
        """No filter: every partition."""
        return not (self.values or self.q or self.anomaly)

    @classmethod
    def from_params(cls, params: Any, keys: list[PartitionKey]) -> PartitionFilter:
        names = [k.name for k in keys]
        values = []
        for param in params:
            if not param.startswith(KEY_PARAM_PREFIX):
                continue
            key = param.removeprefix(KEY_PARAM_PREFIX)
            if key not in names:
                raise ApplicationError(
                    ErrorCode.INVALID_PARAMETER,
                    f"The table has no partition key '{key}'; its keys are: {', '.join(names) or 'none'}.",
                    {"parameter": param},
                )
            if params.get(param) != "":
                values.append((key, params.get(param)))
        anomaly = params.get("anomaly", "").strip()
        if anomaly and anomaly not in ANOMALIES:
            raise ApplicationError(
                ErrorCode.INVALID_PARAMETER,
                f"anomaly must be one of {', '.join(ANOMALIES)}, not '{anomaly}'.",
                {"parameter": "anomaly"},
            )
        return cls(values=tuple(values), q=params.get("q", "").strip(), anomaly=anomaly)


@dataclass(frozen=True)
class PartitionRow:
    """A partition as the browser lists it."""

    id: int
    name: str
    values: tuple[str, ...]
    location: str | None
    create_time: int
    num_files: int | None
    total_size: int | None
    num_rows: int | None
    freshness: str
    outside_table_root: bool
    exists_on_disk: bool | None


def list_partitions(
    metastore: Metastore,
    table: Table,
    keys: list[PartitionKey],
    filters: PartitionFilter,
    *,
    cursor: str = "",
    size: int = 50,
    check_disk: bool = True,
) -> Page[PartitionRow]:
    """
    One keyset page of ``table``'s partitions in their natural order (``partition_order``), filtered.

    The ``missing`` anomaly is checked on disk: pages are scanned from the cursor until ``size`` missing partitions are
    found or :data:`MISSING_SCAN_LIMIT` partitions were checked; the next cursor continues the scan.
    """
    alias = metastore.alias
    qs = Partition.objects.using(alias).filter(table_id=table.id)
    positions = {k.name: k.position for k in keys}
    for key, value in filters.values:
        qs = qs.filter(
            Exists(
                PartitionKeyValue.objects.using(alias).filter(
                    partition_id=OuterRef("id"), position=positions[key], value=value
                )
            )
        )
    prefix = _leading_prefix(keys, dict(filters.values))
    if prefix:
        # Bound the index scan by the leading keys' name prefix; the key-value filter above stays the truth.
        qs = qs.filter(name__gte=prefix)
        if _names_compare_by_code_point(metastore.alias):
            qs = qs.filter(name__lt=prefix + MAX_CHARACTER)
    if filters.q:
        qs = qs.filter(name__contains=filters.q)
    partitions = _bounded_count(metastore, table) if is_natural(keys) else None
    qs = natural_order(with_anomaly(qs, table, filters.anomaly), keys, partitions)
    order = sort_key_names(keys, partitions)
    fields = ("id", "name", "create_time", "sd__location", *(k for k in order if k != "name"))
    table_root = table.sd.location if table.sd_id and table.sd else None
    remembered = None
    if partitions is not None and filters.is_empty and order != ("name",):
        remembered = remembered_natural_page(metastore, table, keys, cursor, size, fields)
    if remembered is not None:
        rows, next_cursor = remembered.items, remembered.next_cursor
    elif filters.anomaly == "missing":
        rows, next_cursor = _missing_rows(qs, order, cursor, size, fields)
        check_disk = True
    else:
        page = keyset_page(qs, keys=order, types=(str,) * len(order), cursor=cursor, size=size, fields=fields)
        rows, next_cursor = page.items, page.next_cursor
    params = _page_params(metastore, [r["id"] for r in rows])
    return Page(
        items=[_row(r, params.get(r["id"], {}), table_root, check_disk) for r in rows],
        next_cursor=next_cursor,
    )


MISSING_SCAN_LIMIT = 20_000


def _bounded_count(metastore: Metastore, table: Table) -> int:
    """The table's partitions, counted up to EXACT_COUNT_LIMIT + 1 (its stamp: an index-only scan that stops there,
    read once per page)."""
    return partition_stamp(metastore, table).count


def sorted_naturally(metastore: Metastore, table: Table, keys: list[PartitionKey]) -> bool:
    """Whether :func:`list_partitions` pages ``table`` in the natural order (else by PART_NAME)."""
    return is_natural(keys, _bounded_count(metastore, table)) if is_natural(keys) else False


def _missing_rows(
    qs: Any, order: tuple[str, ...], cursor: str, size: int, fields: tuple[str, ...]
) -> tuple[list[dict[str, Any]], str]:
    """
    Up to ``size`` rows whose location is missing on disk, from one streamed query in page order after ``cursor``;
    at most MISSING_SCAN_LIMIT rows are checked, and the next cursor resumes after the last one checked.
    """
    found: list[dict[str, Any]] = []
    ordered = keyset_ordered(qs, keys=order, types=(str,) * len(order), cursor=cursor).values(*fields)
    last = None
    for scanned, row in enumerate(ordered[: MISSING_SCAN_LIMIT + 1].iterator(chunk_size=2_000), start=1):
        if scanned > MISSING_SCAN_LIMIT:
            return found, encode_cursor([last[k] for k in order]) if last else ""
        last = row
        if location_missing(row["sd__location"]):
            found.append(row)
            if len(found) == size:
                after = encode_cursor([row[k] for k in order])
                more = keyset_ordered(qs, keys=order, types=(str,) * len(order), cursor=after).exists()
                return found, after if more else ""
    return found, ""


@dataclass(frozen=True)
class PartitionCount:
    """How many partitions a table has: exact up to ``EXACT_COUNT_LIMIT``, the planner's estimate beyond."""

    value: int
    exact: bool


def count_partitions(metastore: Metastore, table: Table) -> PartitionCount:
    """Count exactly while it is cheap (the table's stamp: an index-only scan that stops at the limit), else
    estimate."""
    counted = partition_stamp(metastore, table).count
    if counted <= EXACT_COUNT_LIMIT:
        return PartitionCount(counted, exact=True)
    return PartitionCount(max(_planner_estimate(metastore, table) or 0, counted), exact=False)


def _planner_estimate(metastore: Metastore, table: Table) -> int | None:
    """PostgreSQL's row estimate for the table's partitions (from ANALYZE statistics); None elsewhere."""
    connection = connections[metastore.alias]
    if connection.vendor != "postgresql":
        return None
    sql, params = (
        Partition.objects.using(metastore.alias).filter(table_id=table.id).values("id").query.sql_with_params()
    )
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    return int(plan[0]["Plan"]["Plan Rows"])


def get_partition(metastore: Metastore, table: Table, name: str) -> Partition:
    partition = Partition.objects.on(metastore, "sd").filter(table_id=table.id, name=name).first()
    if partition is None:
        raise NotFound("partition", name, table=table.name, metastore=metastore.name)
    return partition


def partition_column_statistics(metastore: Metastore, partition: Partition) -> list[PartitionColumnStatistics]:
    return list(
        PartitionColumnStatistics.objects.on(metastore).filter(partition_id=partition.id).order_by("column_name")
    )


MAX_CHARACTER = "\U0010ffff"
_BYTEWISE_COLLATIONS = frozenset({"C", "POSIX", "C.UTF-8", "C.utf8", "ucs_basic"})


@functools.cache
def _names_compare_by_code_point(alias: str) -> bool:
    """Whether names sort by code point here (SQLite, PostgreSQL in a C collation): then a prefix is a range."""
    connection = connections[alias]
    if connection.vendor == "sqlite":
        return True
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT datcollate FROM pg_database WHERE datname = current_database()")
        return cursor.fetchone()[0] in _BYTEWISE_COLLATIONS


def _leading_prefix(keys: list[PartitionKey], values: dict[str, str]) -> str:
    """The partition-name prefix fixed by exact values of the leading keys (``dt=2024-01-01/``)."""
    leading = []
    for key in sorted(keys, key=lambda k: k.position):
        if key.name not in values:
            break
        leading.append((key.name, values[key.name]))
    return partition_name(leading)


def _page_params(metastore: Metastore, ids: list[int]) -> dict[int, dict[str, str | None]]:
    params: dict[int, dict[str, str | None]] = {}
    rows = PartitionParam.objects.using(metastore.alias).filter(partition_id__in=ids, key__in=_PAGE_PARAMS)
    for partition_id, key, value in rows.values_list("partition_id", "key", "value"):
        params.setdefault(partition_id, {})[key] = value
    return params


def _row(
    row: dict[str, Any],
    params: dict[str, str | None],
    table_root: str | None,
    check_disk: bool,
) -> PartitionRow:
    location = row["sd__location"]
    return PartitionRow(
        id=row["id"],
        name=row["name"],
        values=partition_values(row["name"]),
        location=location,
        create_time=row["create_time"],
        num_files=int_param(params.get("numFiles")),
        total_size=int_param(params.get("totalSize")),
        num_rows=int_param(params.get("numRows")),
        freshness=stats_freshness(params.get("COLUMN_STATS_ACCURATE")),
        outside_table_root=bool(location and table_root and not is_under(location, table_root)),
        exists_on_disk=filesystem_for(location).exists(location) if (location and check_disk) else None,
    )


@dataclass(frozen=True)
class PartitionDetail:
    """One partition with its parameters and column statistics, and the flags the partitions list shows."""

    table: Table
    keys: list[PartitionKey]
    partition: Partition
    params: dict[str, str | None]
    column_statistics: list[PartitionColumnStatistics]

    @property
    def values(self) -> dict[str, str]:
        """Partition key name -> value (unescaped), in key order."""
        values = partition_values(self.partition.name or "")
        return {key.name: value for key, value in zip(self.keys, values, strict=False)}

    @property
    def location(self) -> str | None:
        return self.partition.sd.location if self.partition.sd else None

    @property
    def num_files(self) -> int | None:
        return int_param(self.params.get("numFiles"))

    @property
    def total_size(self) -> int | None:
        return int_param(self.params.get("totalSize"))

    @property
    def num_rows(self) -> int | None:
        return int_param(self.params.get("numRows"))

    @property
    def freshness(self) -> str:
        return stats_freshness(self.params.get("COLUMN_STATS_ACCURATE"))

    @property
    def stats_accurate(self) -> dict[str, Any]:
        return parse_stats_accurate(self.params.get("COLUMN_STATS_ACCURATE"))

    @property
    def outside_table_root(self) -> bool:
        root = self.table.sd.location if self.table.sd else None
        return bool(self.location and root and not is_under(self.location, root))

    @property
    def exists_on_disk(self) -> bool | None:
        return filesystem_for(self.location).exists(self.location) if self.location else None


def table_partition_keys(metastore: Metastore, table: Table) -> list[PartitionKey]:
    """The table's partition keys in key order (empty for an unpartitioned table)."""
    return list(PartitionKey.objects.on(metastore).filter(table_id=table.id).order_by("position"))


def get_partition_detail(metastore: Metastore, table: Table, name: str) -> PartitionDetail:
    """The partition of ``table`` called ``name`` (the escaped ``dt=…/hour=…``); raises NotFound."""
    partition = get_partition(metastore, table, name)
    params = dict(
        PartitionParam.objects.on(metastore)
        .filter(partition_id=partition.id)
        .order_by("key")
        .values_list("key", "value")
    )
    return PartitionDetail(
        table=table,
        keys=table_partition_keys(metastore, table),
        partition=partition,
        params=params,
        column_statistics=partition_column_statistics(metastore, partition),
    )
