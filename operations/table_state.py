"""
The state of one table that a plan depends on, read in a fixed number of set-based queries.

:func:`read_table_state` is the only read a preview makes of the table; its :attr:`TableState.fingerprint`
is what execution compares to refuse a stale preview.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from django.db import connections
from django.db.models import Count, Max, Q

from catalog_admin.errors import NotFound
from catalog_admin.models import (
    Column,
    Database,
    Partition,
    PartitionColumnStatistics,
    PartitionKey,
    SerDeParam,
    StorageDescriptor,
    Table,
    TableColumnStatistics,
    TableParam,
)
from catalog_admin.selectors.metastores import Metastore
from operations.preview import PartitionScope
from operations.specs import TableRef
from operations.sql import MetastoreSql

__all__ = (
    "ColumnInfo",
    "PartitionSummary",
    "TableState",
    "labelled_partition_statistics",
    "read_partition_scope",
    "read_table_state",
    "statistics_labels",
    "table_exists",
)


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    type: str
    comment: str | None


@dataclass(frozen=True)
class PartitionSummary:
    """Aggregates over a table's partitions, all from set-based queries."""

    count: int = 0
    max_id: int = 0
    under_root: int = 0
    column_descriptors: tuple[int, ...] = ()
    descriptor_users: tuple[tuple[int, int], ...] = ()  # (CD_ID, partitions using it)


@dataclass(frozen=True)
class TableState:
    """What a plan reads of a table: its rows, columns, keys, parameters and partition aggregates."""

    ref: TableRef
    catalog: str | None
    database_id: int
    database_location: str
    database_managed_location: str | None
    table_id: int
    table_type: str
    owner: str | None
    owner_type: str | None
    sd_id: int | None
    cd_id: int | None
    serde_id: int | None
    serde_lib: str | None
    location: str | None
    input_format: str | None
    output_format: str | None
    columns: tuple[ColumnInfo, ...]
    partition_keys: tuple[ColumnInfo, ...]
    params: dict[str, str | None]
    serde_params: dict[str, str | None]
    table_column_statistics: tuple[str, ...]
    partitions: PartitionSummary = field(default_factory=PartitionSummary)

    @property
    def is_view(self) -> bool:
        return self.table_type in ("VIRTUAL_VIEW", "MATERIALIZED_VIEW")

    @property
    def is_external(self) -> bool:
        return (self.params.get("EXTERNAL") or "").upper() == "TRUE" or self.table_type == "EXTERNAL_TABLE"

    @property
    def is_transactional(self) -> bool:
        return (self.params.get("transactional") or "").lower() == "true"

    @property
    def is_partitioned(self) -> bool:
        return bool(self.partition_keys)

    @property
    def fingerprint(self) -> str:
        """A digest of everything above (the partition layout aside: plans that use it pin it in their counts)."""
        payload = json.dumps(_jsonable(self), sort_keys=True, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:32]


def table_exists(metastore: Metastore, ref: TableRef) -> bool:
    return Table.objects.using(metastore.alias).filter(database__name=ref.database, name=ref.table).exists()


def read_table_state(
    metastore: Metastore, ref: TableRef, *, for_update: bool = False, layout: bool = False
) -> TableState:
    """Read ``ref``'s state; with ``for_update`` its TBLS row is locked first (inside a transaction).

    ``layout`` also reads where the partitions are (under the table root or not) and which column descriptors
    they use: a pass over every partition's storage descriptor, made only for plans that need it.
    """
    alias = metastore.alias
    database = Database.objects.on(metastore).filter(name=ref.database).first()
    if database is None:
        raise NotFound("database", ref.database, metastore=metastore.name)
    tables = Table.objects.on(metastore, "sd", "sd__serde").filter(database_id=database.id, name=ref.table)
    if for_update and connections[alias].features.has_select_for_update:
        tables = tables.select_for_update(of=("self",) if connections[alias].features.has_select_for_update_of else ())
    table = tables.first()
    if table is None:
        raise NotFound("table", f"{ref.database}.{ref.table}", metastore=metastore.name)
    sd = table.sd
    return TableState(
        ref=ref,
        catalog=database.catalog_name if metastore.schema.has(Database, "catalog_name") else None,
        database_id=database.id,
        database_location=database.location_uri,
        database_managed_location=(
            database.managed_location_uri if metastore.schema.has(Database, "managed_location_uri") else None
        ),
        table_id=table.id,
        table_type=table.type or "",
        owner=table.owner,
        owner_type=table.owner_type if metastore.schema.has(Table, "owner_type") else None,
        sd_id=table.sd_id,
        cd_id=sd.cd_id if sd else None,
        serde_id=sd.serde_id if sd else None,
        serde_lib=sd.serde.slib if sd and sd.serde_id and sd.serde else None,
        location=sd.location if sd else None,
        input_format=sd.input_format if sd else None,
        output_format=sd.output_format if sd else None,
        columns=_columns(alias, sd.cd_id if sd else None),
        partition_keys=tuple(
            ColumnInfo(k.name, k.type, k.comment)
            for k in PartitionKey.objects.using(alias).filter(table_id=table.id).order_by("position")
        ),
        params=dict(
            TableParam.objects.using(alias).filter(table_id=table.id).order_by("key").values_list("key", "value")
        ),
        serde_params=dict(
            SerDeParam.objects.using(alias).filter(serde_id=sd.serde_id).order_by("key").values_list("key", "value")
        )
        if sd and sd.serde_id
        else {},
        table_column_statistics=tuple(
            TableColumnStatistics.objects.using(alias)
            .filter(table_id=table.id)
            .order_by("column_name")
            .values_list("column_name", flat=True)
        ),
        partitions=_partition_summary(alias, table.id, sd.location if sd else None, layout),
    )


def _columns(alias: str, cd_id: int | None) -> tuple[ColumnInfo, ...]:
    if cd_id is None:
        return ()
    rows = Column.objects.using(alias).filter(cd_id=cd_id).order_by("position").values_list("name", "type", "comment")
    return tuple(ColumnInfo(*row) for row in rows)


def _partition_summary(alias: str, table_id: int, root: str | None, layout: bool) -> PartitionSummary:
    """Count and highest id from PARTITIONS; with ``layout``, partitions under the table root and the column
    descriptors they use, from their storage descriptors."""
    totals = Partition.objects.using(alias).filter(table_id=table_id).aggregate(count=Count("id"), max_id=Max("id"))
    if not totals["count"]:
        return PartitionSummary()
    if not layout:
        return PartitionSummary(count=totals["count"], max_id=totals["max_id"] or 0)
    sql = MetastoreSql(alias)
    location = f"s.{sql.col(StorageDescriptor, 'location')}"
    prefix = (root or "").rstrip("/") + "/"
    under_root = f"SUM(CASE WHEN {sql.has_prefix(location)} THEN 1 ELSE 0 END)" if root else "0"
    # A plain join: the planner probes SDS by id for a small table and hashes for one that holds most of SDS.
    query = (
        f"SELECT s.{sql.col(StorageDescriptor, 'cd')}, {under_root}, COUNT(*) FROM {sql.table(Partition)} p "
        f"JOIN {sql.table(StorageDescriptor)} s ON s.{sql.col(StorageDescriptor, 'id')} = p.{sql.col(Partition, 'sd')} "
        f"WHERE p.{sql.col(Partition, 'table')} = %s GROUP BY s.{sql.col(StorageDescriptor, 'cd')}"
    )
    params = ([len(prefix), prefix] if root else []) + [table_id]
    with connections[alias].cursor() as cursor:
        cursor.execute(query, params)
        groups = cursor.fetchall()
    return PartitionSummary(
        count=totals["count"],
        max_id=totals["max_id"] or 0,
        under_root=int(sum(under or 0 for _cd, under, _n in groups)),
        column_descriptors=tuple(sorted(cd for cd, _under, _n in groups if cd is not None)),
        descriptor_users=tuple(sorted((cd, n) for cd, _under, n in groups if cd is not None)),
    )


SCOPE_SAMPLE = 20  # partitions of a scope kept readable, to say what changed
SCOPE_BATCH = 5000


def read_partition_scope(metastore: Metastore, table_id: int, selection: dict[str, Any]) -> PartitionScope:
    """The partitions of ``selection`` (``names``, ``ids`` or location ``prefixes``) with a digest of their rows
    (id, name, storage descriptor id, location).

    PostgreSQL and MySQL hash the rows themselves (one order-free aggregate: at 100,000 partitions nothing crosses
    the wire);
    SQLite streams them in id order into the hash. Either way no list of every partition is built.
    """
    alias = metastore.alias
    digest, count = hashlib.sha256(), 0
    for where, params in _scope_conditions(MetastoreSql(alias), table_id, selection):
        rows, part = _scope_digest(alias, where, params)
        digest.update(part.encode())
        count += rows
    return PartitionScope(
        table_id=table_id,
        selection=selection,
        count=count,
        digest=digest.hexdigest()[:32],
        sample=_scope_sample(alias, table_id, selection),
    )


def _scope_conditions(sql: MetastoreSql, table_id: int, selection: dict[str, Any]) -> Iterator[tuple[str, list]]:
    """``WHERE`` clauses over ``PARTITIONS p JOIN SDS s`` for the selection (id lists in chunks)."""
    table = f"p.{sql.col(Partition, 'table')} = %s"
    if "ids" in selection:
        ids = sorted(selection["ids"])
        for start in range(0, len(ids), SCOPE_BATCH) if ids else ():
            among, params = sql.among_ids(f"p.{sql.col(Partition, 'id')}", ids[start : start + SCOPE_BATCH])
            yield f"{table} AND {among}", [table_id, *params]
        return
    if "names" in selection:
        names = list(selection["names"]) or [""]
        yield f"{table} AND p.{sql.col(Partition, 'name')} IN ({', '.join(['%s'] * len(names))})", [table_id, *names]
        return
    location = f"s.{sql.col(StorageDescriptor, 'location')}"
    prefixes = list(selection.get("prefixes", ()))
    # LIKE with a portable escape character: PostgreSQL answers it about twice as fast as a SUBSTR comparison here.
    under = " OR ".join(f"{location} LIKE %s ESCAPE '!'" for _ in prefixes) or "1 = 1"
    yield f"{table} AND ({under})", [table_id, *(_like_prefix(prefix) for prefix in prefixes)]


def _like_prefix(prefix: str) -> str:
    return prefix.replace("!", "!!").replace("%", "!%").replace("_", "!_") + "%"


def _scope_digest(alias: str, where: str, params: list) -> tuple[int, str]:
    """How many rows match ``where`` and a digest of them, computed by the database where it can."""
    sql, vendor = MetastoreSql(alias), connections[alias].vendor
    part_id, name, sd = (f"p.{sql.col(Partition, f)}" for f in ("id", "name", "sd"))
    location = f"s.{sql.col(StorageDescriptor, 'location')}"
    joined = (
        f"FROM {sql.table(Partition)} p LEFT JOIN {sql.table(StorageDescriptor)} s "
        f"ON s.{sql.col(StorageDescriptor, 'id')} = p.{sql.col(Partition, 'sd')} WHERE {where}"
    )
    row = f"CONCAT_WS(':', {part_id}, {name}, {sd}, {location})"
    if vendor == "postgresql":
        # Two sums of 64-bit hashes (PostgreSQL 11+): order-free, no sort and no long string to build.
        query = (
            f"SELECT COUNT(*), CONCAT(SUM(hashtextextended({row}, 0)), ':', SUM(hashtextextended({row}, 1))) {joined}"
        )
    elif vendor == "mysql":  # no ordered aggregate without a length limit: an order-free 60-bit XOR and a sum
        query = (
            f"SELECT COUNT(*), CONCAT(BIT_XOR(CAST(CONV(SUBSTRING(MD5({row}), 1, 15), 16, 10) AS UNSIGNED)), "
            f"':', SUM(CRC32({row}))) {joined}"
        )
    else:
        digest, count = hashlib.sha256(), 0
        with connections[alias].cursor() as cursor:
            cursor.execute(f"SELECT {part_id}, {name}, {sd}, {location} {joined} ORDER BY {part_id}", params)
            while batch := cursor.fetchmany(SCOPE_BATCH):
                digest.update(repr(batch).encode())
                count += len(batch)
        return count, digest.hexdigest()
    with connections[alias].cursor() as cursor:
        cursor.execute(query, params)
        count, value = cursor.fetchone()
    return int(count), str(value or "")


def _scope_sample(
    alias: str, table_id: int, selection: dict[str, Any]
) -> tuple[tuple[str, int | None, str | None], ...]:
    """The first partitions of the scope by id, readable: ``(name, sd_id, location)``."""
    partitions = Partition.objects.using(alias).filter(table_id=table_id)
    if "ids" in selection:
        partitions = partitions.filter(id__in=sorted(selection["ids"])[:SCOPE_SAMPLE])
    elif "names" in selection:
        partitions = partitions.filter(name__in=selection["names"])
    else:
        under = Q()
        for prefix in selection.get("prefixes", ()):
            under |= Q(sd__location__startswith=prefix)
        partitions = partitions.filter(under)
    rows = partitions.order_by("id").values_list("name", "sd_id", "sd__location")[:SCOPE_SAMPLE]
    return tuple(tuple(row) for row in rows)


def statistics_labels(metastore: Metastore, state: TableState) -> dict[str, str]:
    """The names by which Hive before 4.0 finds a table's statistics rows (PCS_STATS_IDX's leading columns).

    Hive reads, re-labels and deletes statistics by (catalog,) database and table name, never by id.
    """
    labels = {"db_name": state.ref.database, "table_name": state.ref.table}
    if state.catalog is not None and metastore.schema.has(PartitionColumnStatistics, "catalog_name"):
        labels["catalog_name"] = state.catalog
    return labels


def labelled_partition_statistics(metastore: Metastore, state: TableState) -> int:
    """PART_COL_STATS rows labelled with the table's names: a range of PCS_STATS_IDX, counted from the index."""
    rows = PartitionColumnStatistics.objects.using(metastore.alias)
    return rows.filter(**statistics_labels(metastore, state)).count()


def _jsonable(state: TableState) -> dict[str, Any]:
    data = asdict(state)
    data["ref"] = str(state.ref)
    data["partitions"] = {"count": state.partitions.count, "max_id": state.partitions.max_id}  # layout aside
    return data
