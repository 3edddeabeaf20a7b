"""Listing tables of a database (filters, sort, keyset pagination) and reading one table in full."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Exists, OuterRef, QuerySet

from catalog_admin.errors import ApplicationError, ErrorCode, NotFound
from catalog_admin.hive.statistics import BASIC_STAT_KEYS, parse_stats_accurate
from catalog_admin.models import (
    BucketingColumn,
    Column,
    CompactionQueueEntry,
    CompletedCompaction,
    Database,
    HiveLock,
    NextWriteId,
    PartitionKey,
    SerDeParam,
    SortColumn,
    StorageDescriptorParam,
    Table,
    TableColumnStatistics,
    TableParam,
    TablePrivilege,
    TableType,
    Transaction,
    TransactionComponent,
)
from catalog_admin.selectors.acid import is_transactional, transactional_condition
from catalog_admin.selectors.databases import get_database
from catalog_admin.selectors.metastores import Metastore, get_metastore
from catalog_admin.selectors.pagination import Page, keyset_page
from catalog_admin.selectors.partition_anomalies import RowTotal, partition_row_total
from catalog_admin.selectors.partitions import PartitionCount, count_partitions
from catalog_admin.selectors.table_aggregates import Remembered, partition_stamp, remembered

__all__ = (
    "TABLE_SORTS",
    "AcidState",
    "TableDetail",
    "TableFilter",
    "TableRow",
    "TableTraits",
    "get_table",
    "get_table_detail",
    "list_tables",
    "table_root",
)

# Sort name -> (model fields of the unique keyset key, descending?)
TABLE_SORTS: dict[str, tuple[tuple[str, ...], bool]] = {
    "name": (("name",), False),
    "-name": (("name",), True),
    "created": (("create_time", "id"), False),
    "-created": (("create_time", "id"), True),
}
KEY_TYPES = {"name": str, "create_time": int, "id": int}
TABLE_TYPES = {choice.value for choice in TableType}


@dataclass(frozen=True)
class TableFilter:
    """What the tables list was asked for; validated on construction."""

    q: str = ""
    type: str = ""
    owner: str = ""
    partitioned: bool | None = None
    transactional: bool | None = None
    sort: str = "name"

    def __post_init__(self) -> None:
        if self.type and self.type not in TABLE_TYPES:
            raise _invalid(
                "type",
                f"type must be one of {', '.join(sorted(TABLE_TYPES))}, not '{self.type}'.",
            )
        if self.sort not in TABLE_SORTS:
            raise _invalid(
                "sort",
                f"sort must be one of {', '.join(TABLE_SORTS)}, not '{self.sort}'.",
            )

    @classmethod
    def from_params(cls, params: Any) -> TableFilter:
        """Build from query parameters (a QueryDict or dict)."""
        return cls(
            q=params.get("q", "").strip(),
            type=params.get("type", "").strip(),
            owner=params.get("owner", "").strip(),
            partitioned=_parse_bool(params, "partitioned"),
            transactional=_parse_bool(params, "transactional"),
            sort=params.get("sort", "").strip() or "name",
        )


@dataclass(frozen=True)
class TableRow:
    """A table as listed: identity, kind, owner, location and flags."""

    id: int
    name: str
    type: str
    owner: str | None
    create_time: int
    location: str | None
    is_partitioned: bool
    is_transactional: bool


@dataclass(frozen=True)
class AcidState:
    """The ACID bookkeeping of a transactional table."""

    next_write_id: int | None
    open_transactions: list[Transaction]
    locks: list[HiveLock]
    compaction_queue: list[CompactionQueueEntry]
    completed_compactions: list[CompletedCompaction]


@dataclass(frozen=True)
class TableTraits:
    """What a table's page offers depends on: partition keys, ``transactional`` (as ``is_transactional`` reads
    it), a view (:attr:`TableDetail.traits`: read with the page, no query of its own)."""

    partitioned: bool = False
    transactional: bool = False
    view: bool = False


@dataclass(frozen=True)
class TableDetail:
    """Everything the table page shows, read in a fixed number of queries."""

    database: Database
    table: Table
    columns: list[Column]
    partition_keys: list[PartitionKey]
    params: dict[str, str | None]
    sd_params: dict[str, str | None]
    serde_params: dict[str, str | None]
    bucket_columns: list[str]
    sort_columns: list[tuple[str, str]]
    column_statistics: list[TableColumnStatistics]
    privileges: list[TablePrivilege]
    partition_count: int
    partition_count_exact: bool
    acid: AcidState | None
    basic_stats: dict[str, str | None] = field(default_factory=dict)
    #: A partitioned table's rows: the sum of its partitions' numRows (Hive keeps none at the table level).
    partition_rows: Remembered[RowTotal] | None = None

    @property
    def is_transactional(self) -> bool:
        return is_transactional(self.params)

    @property
    def traits(self) -> TableTraits:
        return TableTraits(
            partitioned=bool(self.partition_keys),
            transactional=self.is_transactional,
            view=self.table.type in (TableType.VIRTUAL_VIEW, TableType.MATERIALIZED_VIEW),
        )

    @property
    def stats_accurate(self) -> dict[str, Any]:
        return parse_stats_accurate(self.params.get("COLUMN_STATS_ACCURATE"))


def list_tables(
    metastore: Metastore,
    database: Database,
    filters: TableFilter,
    *,
    cursor: str = "",
    size: int = 50,
) -> Page[TableRow]:
    """One keyset page of the database's tables."""
    keys, descending = TABLE_SORTS[filters.sort]
    page = keyset_page(
        _filtered_tables(metastore, database, filters),
        keys=keys,
        types=tuple(KEY_TYPES[k] for k in keys),
        cursor=cursor,
        size=size,
        descending=descending,
        fields=("id", "name", "type", "owner", "create_time", "sd__location"),
    )
    rows = page.items
    partitioned, transactional = _page_flags(metastore, [r["id"] for r in rows])
    items = [
        TableRow(
            id=r["id"],
            name=r["name"],
            type=r["type"],
            owner=r["owner"],
            create_time=r["create_time"],
            location=r["sd__location"],
            is_partitioned=r["id"] in partitioned,
            is_transactional=r["id"] in transactional,
        )
        for r in rows
    ]
    return Page(items=items, next_cursor=page.next_cursor)


def get_table(metastore: Metastore, db_name: str, table_name: str) -> tuple[Database, Table]:
    database = get_database(metastore, db_name)
    table = (
        Table.objects.on(metastore, "sd", "sd__serde").filter(database_id=database.id, name=table_name.lower()).first()
    )
    if table is None:
        raise NotFound("table", f"{database.name}.{table_name}", metastore=metastore.name)
    return database, table


def table_root(metastore_name: str, database: str, table: str) -> str | None:
    """The location of ``database.table`` as stored (None: no table, or none stored; one query)."""
    tables = Table.objects.using(get_metastore(metastore_name).alias)
    return tables.filter(database__name=database, name=table).values_list("sd__location", flat=True).first()


def get_table_detail(metastore: Metastore, db_name: str, table_name: str) -> TableDetail:
    database, table = get_table(metastore, db_name, table_name)
    alias = metastore.alias
    sd = table.sd
    params = _params(TableParam.objects.using(alias).filter(table_id=table.id))
    partition_keys = list(PartitionKey.objects.using(alias).filter(table_id=table.id).order_by("position"))
    count = count_partitions(metastore, table) if partition_keys else PartitionCount(0, exact=True)
    detail = TableDetail(
        database=database,
        table=table,
        columns=list(Column.objects.using(alias).filter(cd_id=sd.cd_id).order_by("position")) if sd else [],
        partition_keys=partition_keys,
        params=params,
        sd_params=_params(StorageDescriptorParam.objects.using(alias).filter(sd_id=table.sd_id)),
        serde_params=_params(SerDeParam.objects.using(alias).filter(serde_id=sd.serde_id)) if sd else {},
        bucket_columns=list(
            BucketingColumn.objects.using(alias)
            .filter(sd_id=table.sd_id)
            .order_by("position")
            .values_list("name", flat=True)
        ),
        sort_columns=[
            (row.name, "ASC" if row.order == 1 else "DESC")
            for row in SortColumn.objects.using(alias).filter(sd_id=table.sd_id).order_by("position")
        ],
        column_statistics=list(
            TableColumnStatistics.objects.on(metastore).filter(table_id=table.id).order_by("column_name")
        ),
        privileges=list(
            TablePrivilege.objects.on(metastore).filter(table_id=table.id).order_by("principal_name", "privilege")
        ),
        partition_count=count.value,
        partition_count_exact=count.exact,
        acid=None,
        basic_stats={k: params.get(k) for k in BASIC_STAT_KEYS},
        # Summed while the partitions are counted exactly (up to EXACT_COUNT_LIMIT): one aggregate, bounded, and
        # remembered under the table's partition stamp (not summed again on every view).
        partition_rows=_remembered_rows(metastore, table) if partition_keys and count.exact else None,
    )
    if detail.is_transactional:
        return _with_acid(metastore, detail)
    return detail


def _remembered_rows(metastore: Metastore, table: Table) -> Remembered[RowTotal]:
    stamp = partition_stamp(metastore, table)
    return remembered(metastore, table, "partition-totals", stamp, lambda: partition_row_total(metastore, table))


def _filtered_tables(metastore: Metastore, database: Database, filters: TableFilter) -> QuerySet[Table]:
    """The database's tables narrowed by the filters (flags only filter here; rows get them in `_page_flags`)."""
    qs = Table.objects.using(metastore.alias).filter(database_id=database.id)
    if filters.q:
        qs = qs.filter(name__icontains=filters.q.lower())
    if filters.type:
        qs = qs.filter(type=filters.type)
    if filters.owner:
        qs = qs.filter(owner=filters.owner)
    if filters.partitioned is not None:
        condition = Exists(_partition_keys(metastore).filter(table_id=OuterRef("id")))
        qs = qs.filter(condition if filters.partitioned else ~condition)
    if filters.transactional is not None:
        condition = transactional_condition(metastore)
        qs = qs.filter(condition if filters.transactional else ~condition)
    return qs


def _partition_keys(metastore: Metastore) -> QuerySet[PartitionKey]:
    return PartitionKey.objects.using(metastore.alias)


def _page_flags(metastore: Metastore, ids: list[int]) -> tuple[set[int], set[int]]:
    """Which tables of a page are partitioned and transactional: two queries for the whole page."""
    if not ids:
        return set(), set()
    partitioned = set(_partition_keys(metastore).filter(table_id__in=ids).values_list("table_id", flat=True))
    tables = Table.objects.using(metastore.alias).filter(id__in=ids)
    transactional = set(tables.filter(transactional_condition(metastore)).values_list("id", flat=True))
    return partitioned, transactional


def _with_acid(metastore: Metastore, detail: TableDetail) -> TableDetail:
    alias, db, name = metastore.alias, detail.database.name, detail.table.name
    next_write_id = None
    if metastore.schema.has_table(NextWriteId):
        next_write_id = (
            NextWriteId.objects.using(alias).filter(database=db, table=name).values_list("next", flat=True).first()
        )
    txn_ids = TransactionComponent.objects.using(alias).filter(database=db, table=name).values("txn_id")
    acid = AcidState(
        next_write_id=next_write_id,
        open_transactions=list(Transaction.objects.on(metastore).filter(id__in=txn_ids).order_by("id")),
        locks=list(HiveLock.objects.on(metastore).filter(database=db, table=name).order_by("ext_id", "int_id")),
        compaction_queue=list(
            CompactionQueueEntry.objects.on(metastore).filter(database=db, table=name).order_by("id")
        ),
        completed_compactions=list(
            CompletedCompaction.objects.on(metastore).filter(database=db, table=name).order_by("-id")[:20]
        ),
    )
    return TableDetail(**{**detail.__dict__, "acid": acid})


def _params(qs: QuerySet) -> dict[str, str | None]:
    return dict(qs.order_by("key").values_list("key", "value"))


def _parse_bool(params: Any, name: str) -> bool | None:
    raw = (params.get(name) or "").strip().lower()
    if raw in ("", "any"):
        return None
    if raw in ("true", "1", "yes"):
        return True
    if raw in ("false", "0", "no"):
        return False
    raise _invalid(name, f"{name} must be true or false, not '{raw}'.")


def _invalid(parameter: str, message: str) -> ApplicationError:
    return ApplicationError(ErrorCode.INVALID_PARAMETER, message, {"parameter": parameter})
