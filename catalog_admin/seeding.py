"""
Fill a registered metastore with realistic demo content and, optionally, bulk content for scale tests.

The demo content (databases ``default``, ``sales``, ``marketing`` and ``ops``; managed, external,
view and ACID tables; partitions with stats; privileges; open transactions, locks and compactions)
is written once: a database or table that already exists is left alone, so seeding twice adds
nothing the second time. Its data files are real, small files under the warehouse directory.

The scale content is new on every run: ``tables`` adds tables named ``t_<TBL_ID>`` spread over the
``scale_a`` … ``scale_d`` databases, and ``big_table_partitions`` adds ``bench.events`` (``events_2``,
``events_3`` … when it exists). Scale content has no data files on disk. On PostgreSQL it is written
with one set-based ``INSERT … SELECT … FROM generate_series`` per metastore table; elsewhere with
batched ``executemany``.

Every id comes from Hive's own allocators: DataNucleus's ``SEQUENCE_TABLE`` (one block per model
class, reserved by raising ``NEXT_VAL`` once) and ``NEXT_TXN_ID`` / ``NEXT_LOCK_ID`` /
``NEXT_COMPACTION_QUEUE_ID`` for the ACID tables, so a running Hive that caches id blocks never
collides with what was seeded. Only the columns the metastore's schema version has are written.
"""

from __future__ import annotations

import itertools
import json
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Sequence as Seq
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from itertools import islice
from pathlib import Path
from typing import Any

from django.db import DatabaseError, connections, models, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from catalog_admin.db import allow_metastore_writes
from catalog_admin.metastore_ddl import warehouse_uri
from catalog_admin.models import (
    BucketingColumn,
    Catalog,
    Column,
    ColumnDescriptor,
    CompactionMetric,
    CompactionQueueEntry,
    CompletedCompaction,
    CompletedTransactionComponent,
    Database,
    DatabaseParam,
    DatabasePrivilege,
    HiveLock,
    NextWriteId,
    Partition,
    PartitionColumnStatistics,
    PartitionKey,
    PartitionKeyValue,
    PartitionParam,
    Sequence,
    SerDe,
    SerDeParam,
    SortColumn,
    StorageDescriptor,
    Table,
    TableColumnStatistics,
    TableParam,
    TablePrivilege,
    Transaction,
    TransactionComponent,
    TransactionWriteId,
    WriteSetEntry,
)
from catalog_admin.schema import MetastoreSchema, SchemaVersion, field_available, model_available
from catalog_admin.selectors.metastores import Metastore

__all__ = ("BENCH_DATABASE", "SCALE_DATABASES", "SeedOptions", "SeedReport", "seed_metastore")

SEQUENCE_PREFIX = "org.apache.hadoop.hive.metastore.model."
SCALE_DATABASES = ("scale_a", "scale_b", "scale_c", "scale_d")
BENCH_DATABASE = "bench"
BENCH_TABLE = "events"
BATCH_SIZE = 2000

Source = tuple[tuple[type[models.Model], str], ...]
# DataNucleus SEQUENCE_TABLE rows (by model class) and where their ids live.
SEQUENCE_SPACES: dict[str, Source] = {
    "MCatalog": ((Catalog, "id"),),
    "MDatabase": ((Database, "id"),),
    "MDBPrivilege": ((DatabasePrivilege, "id"),),
    "MSerDeInfo": ((SerDe, "id"),),
    "MColumnDescriptor": ((ColumnDescriptor, "id"),),
    "MStorageDescriptor": ((StorageDescriptor, "id"),),
    "MTable": ((Table, "id"),),
    "MTablePrivilege": ((TablePrivilege, "id"),),
    "MPartition": ((Partition, "id"),),
    "MTableColumnStatistics": ((TableColumnStatistics, "id"),),
    "MPartitionColumnStatistics": ((PartitionColumnStatistics, "id"),),
}
# Hive's single-row ACID counters and where their ids live (compactions share one counter).
COUNTER_SPACES: dict[str, tuple[str, Source]] = {
    "txn": ("NEXT_TXN_ID", ((Transaction, "id"), (CompletedTransactionComponent, "txn_id"), (WriteSetEntry, "txn_id"))),
    "lock": ("NEXT_LOCK_ID", ((HiveLock, "ext_id"),)),
    "compaction": ("NEXT_COMPACTION_QUEUE_ID", ((CompactionQueueEntry, "id"), (CompletedCompaction, "id"))),
}

# Parents before children: PostgreSQL and MySQL metastores carry foreign keys.
WRITE_ORDER: tuple[type[models.Model], ...] = (
    Catalog,
    Database,
    DatabaseParam,
    DatabasePrivilege,
    SerDe,
    SerDeParam,
    ColumnDescriptor,
    Column,
    StorageDescriptor,
    BucketingColumn,
    SortColumn,
    Table,
    TableParam,
    PartitionKey,
    TablePrivilege,
    Partition,
    PartitionKeyValue,
    PartitionParam,
    TableColumnStatistics,
    PartitionColumnStatistics,
    Transaction,
    TransactionComponent,
    CompletedTransactionComponent,
    WriteSetEntry,
    HiveLock,
    TransactionWriteId,
    NextWriteId,
    CompactionQueueEntry,
    CompletedCompaction,
    CompactionMetric,
)


# --------------------------------------------------------------------------------------------
# Options, report and the declarative demo content
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeedOptions:
    """What to write: the demo content always, plus optional scale content."""

    warehouse: str
    tables: int = 0
    big_table_partitions: int = 0
    col_stats: int = 0
    seed: int = 42


@dataclass(frozen=True)
class SeedReport:
    """Rows inserted per metastore table, data files written, demo tables skipped, notes, elapsed seconds."""

    counts: dict[str, int]
    files: int
    skipped: tuple[str, ...]
    notes: tuple[str, ...]
    elapsed: float


@dataclass(frozen=True)
class StorageFormat:
    input_format: str
    output_format: str
    serde_lib: str | None
    serde_params: tuple[tuple[str, str], ...] = ()


FORMATS = {
    "parquet": StorageFormat(
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
        (("serialization.format", "1"),),
    ),
    "text": StorageFormat(
        "org.apache.hadoop.mapred.TextInputFormat",
        "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
        (("field.delim", ","), ("serialization.format", ",")),
    ),
    "orc": StorageFormat(
        "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
        "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
        "org.apache.hadoop.hive.ql.io.orc.OrcSerde",
        (("serialization.format", "1"),),
    ),
    "view": StorageFormat(
        "org.apache.hadoop.mapred.SequenceFileInputFormat",
        "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat",
        None,
    ),
}


@dataclass(frozen=True)
class DatabaseSpec:
    name: str
    description: str
    owner: str
    owner_type: str = "USER"
    params: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class TableSpec:
    database: str
    name: str
    columns: tuple[tuple[str, str], ...]
    fmt: str
    kind: str = "MANAGED_TABLE"
    owner: str = "etl"
    partitions: tuple[tuple[str, int], ...] = ()  # (dt, hour) values
    acid: bool = False
    buckets: int = -1
    bucket_columns: tuple[str, ...] = ()
    sort_columns: tuple[str, ...] = ()
    location: str = ""  # relative to the warehouse; default <database root>/<table>
    relocated: tuple[str, ...] = ()  # partitions stored under `relocated_root`, outside the table root
    relocated_root: str = ""
    missing: tuple[str, ...] = ()  # partitions whose directory is not written
    view_text: tuple[str, str] = ("", "")  # original, expanded
    comment: str = ""
    analyst_select: bool = True


DEMO_DATABASES = (
    DatabaseSpec("default", "Default Hive database", "public", "ROLE"),
    DatabaseSpec("sales", "Orders, customers and payments", "alice", params=(("owner.team", "sales-analytics"),)),
    DatabaseSpec("marketing", "Campaigns and clicks", "growth", "ROLE", (("owner.team", "growth"), ("pii", "false"))),
    DatabaseSpec("ops", "Platform operations", "hive", params=(("owner.team", "platform"), ("retention.days", "90"))),
)

DAYS = ("2024-01-01", "2024-01-02", "2024-01-03")
HOURLY = tuple((day, hour) for day in DAYS for hour in (0, 3, 6, 9))
PARTITION_KEYS = (("dt", "string"), ("hour", "int"))
VIEW_SQL = (
    "SELECT c.name, count(*) AS clicks, sum(k.cost) AS cost FROM marketing.clicks k"
    " JOIN marketing.campaigns c ON k.campaign_id = c.campaign_id GROUP BY c.name",
    "SELECT `c`.`name`, count(*) AS `clicks`, sum(`k`.`cost`) AS `cost` FROM `marketing`.`clicks` `k`"
    " JOIN `marketing`.`campaigns` `c` ON `k`.`campaign_id` = `c`.`campaign_id` GROUP BY `c`.`name`",
)

DEMO_TABLES = (
    TableSpec("default", "scratch_notes", (("id", "int"), ("note", "string")), "text", owner="hive"),
    TableSpec(
        "sales",
        "orders",
        (("id", "bigint"), ("customer_id", "bigint"), ("amount", "decimal(10,2)"), ("status", "string")),
        "parquet",
        partitions=HOURLY,
        relocated=("dt=2024-01-01/hour=0", "dt=2024-01-01/hour=3"),
        relocated_root="archive/sales/orders",
        missing=("dt=2024-01-03/hour=9",),
        comment="One row per order",
    ),
    TableSpec(
        "sales",
        "customers",
        (("id", "bigint"), ("name", "string"), ("email", "string"), ("country", "string"), ("signup_date", "date")),
        "parquet",
        owner="alice",
    ),
    TableSpec(
        "sales",
        "payments_acid",
        (("payment_id", "bigint"), ("order_id", "bigint"), ("amount", "decimal(10,2)"), ("paid_at", "timestamp")),
        "orc",
        acid=True,
        buckets=4,
        bucket_columns=("payment_id",),
        sort_columns=("paid_at",),
        analyst_select=False,
    ),
    TableSpec(
        "marketing",
        "campaigns",
        (("campaign_id", "int"), ("name", "string"), ("channel", "string"), ("budget", "double")),
        "text",
        kind="EXTERNAL_TABLE",
        owner="growth",
        location="external/marketing/campaigns",
    ),
    TableSpec(
        "marketing",
        "clicks",
        (("click_id", "bigint"), ("campaign_id", "int"), ("user_agent", "string"), ("cost", "double")),
        "text",
        kind="EXTERNAL_TABLE",
        owner="growth",
        partitions=HOURLY,
        location="external/marketing/clicks",
        relocated=("dt=2024-01-02/hour=6",),
        relocated_root="external/marketing/clicks_backfill",
    ),
    TableSpec(
        "marketing",
        "campaign_performance",
        (("name", "string"), ("clicks", "bigint"), ("cost", "double")),
        "view",
        kind="VIRTUAL_VIEW",
        owner="growth",
        view_text=VIEW_SQL,
    ),
    TableSpec(
        "ops",
        "job_runs_acid",
        (("job_id", "bigint"), ("status", "string"), ("duration_ms", "bigint"), ("succeeded", "boolean")),
        "orc",
        owner="hive",
        partitions=tuple((day, hour) for day in DAYS[:2] for hour in (0, 6)),
        acid=True,
        buckets=2,
        bucket_columns=("job_id",),
        analyst_select=False,
    ),
)
ACID_JOBS, ACID_PAYMENTS = ("ops", "job_runs_acid"), ("sales", "payments_acid")
NEXT_WRITE_IDS = {ACID_JOBS: 4, ACID_PAYMENTS: 3}  # write ids 1 and 2 committed; 3 open on job_runs_acid
OPEN_PARTITION, ABORTED_PARTITION = "dt=2024-01-02/hour=6", "dt=2024-01-01/hour=0"

WORDS = {
    "status": ("NEW", "PAID", "SHIPPED", "CANCELLED", "RUNNING", "FAILED", "DONE"),
    "country": ("DE", "FR", "US", "JP", "BR", "IN"),
    "channel": ("search", "social", "email", "display"),
    "user_agent": ("Mozilla/5.0", "curl/8.5", "okhttp/4.12", "Safari/17.2"),
    "name": ("Ada", "Grace", "Linus", "Margaret", "Ken", "Barbara", "spring_sale", "winter_promo"),
    "note": ("todo", "check totals", "rerun backfill", "ok"),
}

SCALE_SPACES = ("MTable", "MStorageDescriptor", "MSerDeInfo", "MColumnDescriptor")
PARTITION_SPACES = ("MPartition", "MStorageDescriptor", "MSerDeInfo")
SCALE_COLUMNS = (("id", "bigint"), ("name", "string"), ("value", "double"))
SCALE_SPEC = TableSpec("", "", SCALE_COLUMNS, "text", owner="bench")
BENCH_FIRST_DAY = date(2024, 2, 1)  # after the demo partitions, so the bulk partition names sort last
HOURS_BY_NAME = tuple(sorted(range(24), key=str))  # 0, 1, 10, 11 … 19, 2, 20 …: names ascend with the index
BENCH_COLUMNS = (
    ("event_id", "bigint"),
    ("user_id", "bigint"),
    ("event_type", "string"),
    ("amount", "double"),
    ("country", "string"),
    ("session_id", "string"),
    ("latency_ms", "int"),
    ("payload", "string"),
)


# --------------------------------------------------------------------------------------------
# Ids and the seeding context
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LocalId:
    """An id not allocated yet: the ``index``-th one of ``space`` in this run."""

    space: str
    index: int

    def __add__(self, offset: int) -> LocalId:
        return LocalId(self.space, self.index + offset)


@dataclass(frozen=True)
class IdText:
    """A string embedding an id not allocated yet (``{id}``): names and locations of scale tables."""

    template: str
    ref: LocalId


class IdPlan:
    """Counts the ids a run needs per space, then maps local ids into the blocks reserved for them."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.bases: dict[str, int] = {}

    def take(self, space: str, count: int = 1) -> LocalId:
        ref = LocalId(space, self.counts[space])
        self.counts[space] += count
        return ref

    def resolve(self, value: Any) -> Any:
        if isinstance(value, LocalId):
            return self.bases[value.space] + value.index
        if isinstance(value, IdText):
            return value.template.replace("{id}", str(self.resolve(value.ref)))
        return value


@dataclass
class Context:
    """What one seeding run shares: connection, schema, clock, random source, ids and pending rows."""

    cursor: Any
    connection: BaseDatabaseWrapper
    schema: MetastoreSchema
    warehouse: Path
    rng: random.Random
    now: int = field(default_factory=lambda: int(time.time()))
    plan: IdPlan = field(default_factory=IdPlan)
    rows: dict[type[models.Model], list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    bulk: list[Callable[[Context], Counter[str]]] = field(default_factory=list)
    databases: dict[str, Any] = field(default_factory=dict)  # name -> DB_ID or LocalId
    files: int = 0
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    catalog: str = "hive"

    @property
    def version(self) -> SchemaVersion:
        return self.schema.version

    @property
    def now_ms(self) -> int:
        return self.now * 1000

    def add(self, model: type[models.Model], **values: Any) -> None:
        self.rows[model].append(values)

    def quote(self, name: str) -> str:
        return self.connection.ops.quote_name(name)

    def table(self, model: type[models.Model]) -> str:
        return self.quote(model._meta.db_table)

    def column(self, model: type[models.Model], field_name: str) -> str:
        return self.quote(model._meta.get_field(field_name).column)

    def db_root(self, name: str) -> Path:
        """Hive's default database location: the warehouse itself for ``default``, else ``<name>.db``."""
        return self.warehouse if name == "default" else self.warehouse / f"{name}.db"


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def seed_metastore(metastore: Metastore, options: SeedOptions) -> SeedReport:
    """Write the demo content (skipping what exists) and the requested scale content, in one transaction."""
    started = time.monotonic()
    connection = connections[metastore.alias]
    with allow_metastore_writes(), transaction.atomic(using=metastore.alias), connection.cursor() as cursor:
        ctx = Context(
            cursor, connection, metastore.schema, Path(options.warehouse).resolve(), random.Random(options.seed)
        )
        _plan_content(ctx, options)
        _reserve_ids(ctx)
        counts = _write_rows(ctx, WRITE_ORDER[: WRITE_ORDER.index(TableColumnStatistics)])
        if ctx.bulk:
            _note_foreign_keys(ctx, _skip_foreign_key_checks(ctx))
        for step in ctx.bulk:
            counts.update(step(ctx))
        # Column statistics last: on a fresh metastore the bulk statistics then append to the stats indexes.
        counts.update(_write_rows(ctx, WRITE_ORDER[WRITE_ORDER.index(TableColumnStatistics) :]))
    return SeedReport(dict(counts), ctx.files, tuple(ctx.skipped), tuple(ctx.notes), time.monotonic() - started)


def _note_foreign_keys(ctx: Context, skipped: bool) -> None:
    if skipped:
        ctx.notes.append("Foreign-key triggers were skipped for the bulk rows (session_replication_role=replica).")
    else:
        ctx.notes.append(
            "No permission to set session_replication_role: foreign keys were checked row by row (slower bulk insert)."
        )


def _plan_content(ctx: Context, options: SeedOptions) -> None:
    _ensure_catalog(ctx)
    _load_databases(ctx)
    for spec in DEMO_DATABASES:
        _ensure_database(ctx, spec)
    created = [spec for spec in DEMO_TABLES if _plan_demo_table(ctx, spec)]
    _plan_acid_state(ctx, {(spec.database, spec.name) for spec in created if spec.acid})
    if options.tables:
        _plan_scale_tables(ctx, options.tables)
    if options.big_table_partitions:
        _plan_big_table(ctx, options.big_table_partitions, options.col_stats)


# --------------------------------------------------------------------------------------------
# Catalog and databases
# --------------------------------------------------------------------------------------------


def _ensure_catalog(ctx: Context) -> None:
    """Hive 3+ creates its default catalog on start-up when the schema script did not: do the same."""
    if not ctx.schema.has_catalogs:
        return
    ctx.cursor.execute(f"SELECT 1 FROM {ctx.table(Catalog)} WHERE {ctx.column(Catalog, 'name')} = %s", [ctx.catalog])
    if ctx.cursor.fetchone() is None:
        ctx.add(
            Catalog,
            id=ctx.plan.take("MCatalog"),
            name=ctx.catalog,
            description="Default catalog for Hive",
            location_uri=warehouse_uri(str(ctx.warehouse)),
            create_time=ctx.now,
        )


def _load_databases(ctx: Context) -> None:
    sql = f"SELECT {ctx.column(Database, 'id')}, {ctx.column(Database, 'name')} FROM {ctx.table(Database)}"
    params: list[Any] = []
    if ctx.schema.has_catalogs:
        sql += f" WHERE {ctx.column(Database, 'catalog_name')} = %s"
        params.append(ctx.catalog)
    ctx.cursor.execute(sql, params)
    ctx.databases.update({name: db_id for db_id, name in ctx.cursor.fetchall()})


def _ensure_database(ctx: Context, spec: DatabaseSpec) -> Any:
    """The id of database ``spec.name``, planning its rows (with params and grants) when it does not exist."""
    if spec.name in ctx.databases:
        return ctx.databases[spec.name]
    db_id = ctx.databases[spec.name] = ctx.plan.take("MDatabase")
    ctx.add(
        Database,
        id=db_id,
        name=spec.name,
        description=spec.description,
        location_uri=_uri(ctx.db_root(spec.name)),
        owner_name=spec.owner,
        owner_type=spec.owner_type,
        catalog_name=ctx.catalog,
        create_time=ctx.now,
    )
    _add_params(ctx, DatabaseParam, "database", db_id, dict(spec.params))
    for principal, principal_type, privilege, grant_option in (
        (spec.owner, spec.owner_type, "ALL", 1),
        ("analyst", "ROLE", "SELECT", 0),
    ):
        ctx.add(
            DatabasePrivilege,
            id=ctx.plan.take("MDBPrivilege"),
            database=db_id,
            privilege=privilege,
            **_grant(ctx, principal, principal_type, "hive", grant_option),
        )
    return db_id


def _grant(ctx: Context, principal: str, principal_type: str, grantor: str, grant_option: int) -> dict[str, Any]:
    return {
        "principal_name": principal,
        "principal_type": principal_type,
        "grantor": grantor,
        "grantor_type": "USER",
        "grant_option": grant_option,
        "create_time": ctx.now,
    }


def _existing_tables(ctx: Context, db_id: Any) -> set[str]:
    if isinstance(db_id, LocalId):
        return set()
    ctx.cursor.execute(
        f"SELECT {ctx.column(Table, 'name')} FROM {ctx.table(Table)} WHERE {ctx.column(Table, 'database')} = %s",
        [db_id],
    )
    return {name for (name,) in ctx.cursor.fetchall()}


def _uri(path: Path | str) -> str:
    """A local path as Hive stores it (``file:/abs/path``)."""
    return f"file:{path}"


def _add_params(ctx: Context, model: type[models.Model], owner: str, owner_id: Any, params: dict[str, str]) -> None:
    for key, value in params.items():
        ctx.add(model, **{owner: owner_id, "key": key, "value": value})


# --------------------------------------------------------------------------------------------
# Storage: SerDe, columns, storage descriptors
# --------------------------------------------------------------------------------------------


def _plan_columns(ctx: Context, columns: Seq[tuple[str, str]], cd_id: LocalId | None = None) -> LocalId:
    cd_id = cd_id or ctx.plan.take("MColumnDescriptor")
    ctx.add(ColumnDescriptor, id=cd_id)
    for position, (name, type_name) in enumerate(columns):
        ctx.add(Column, cd=cd_id, name=name, type=type_name, comment=None, position=position)
    return cd_id


def _sd_row(sd_id: Any, fmt: StorageFormat, location: Any, serde_id: Any, cd_id: Any, buckets: int) -> dict[str, Any]:
    return {
        "id": sd_id,
        "input_format": fmt.input_format,
        "output_format": fmt.output_format,
        "is_compressed": False,
        "location": location,
        "num_buckets": buckets,
        "serde": serde_id,
        "cd": cd_id,
        "is_stored_as_subdirectories": False,
    }


def _plan_sd(ctx: Context, spec: TableSpec, cd_id: LocalId, location: str | None) -> LocalId:
    """A storage descriptor with its own SerDe, as Hive writes for every table and partition."""
    fmt = FORMATS[spec.fmt]
    sd_id, serde_id = ctx.plan.take("MStorageDescriptor"), ctx.plan.take("MSerDeInfo")
    ctx.add(SerDe, id=serde_id, name=None, slib=fmt.serde_lib)
    _add_params(ctx, SerDeParam, "serde", serde_id, dict(fmt.serde_params))
    ctx.add(StorageDescriptor, **_sd_row(sd_id, fmt, location, serde_id, cd_id, spec.buckets))
    for position, name in enumerate(spec.bucket_columns):
        ctx.add(BucketingColumn, sd=sd_id, name=name, position=position)
    for position, name in enumerate(spec.sort_columns):
        ctx.add(SortColumn, sd=sd_id, name=name, order=1, position=position)
    return sd_id


# --------------------------------------------------------------------------------------------
# Demo tables
# --------------------------------------------------------------------------------------------


def _plan_demo_table(ctx: Context, spec: TableSpec) -> bool:
    """Plan one demo table with its data files, stats and grants; False when it already exists."""
    db_id = ctx.databases[spec.database]
    if spec.name in _existing_tables(ctx, db_id):
        ctx.skipped.append(f"{spec.database}.{spec.name}")
        return False
    root = ctx.warehouse / spec.location if spec.location else ctx.db_root(spec.database) / spec.name
    cd_id = _plan_columns(ctx, spec.columns)
    sd_id = _plan_sd(ctx, spec, cd_id, None if spec.kind == "VIRTUAL_VIEW" else _uri(root))
    tbl_id = ctx.plan.take("MTable")
    ctx.add(Table, **_table_row(ctx, spec, tbl_id, db_id, sd_id))
    if spec.partitions:
        _plan_partition_keys(ctx, tbl_id)
        totals = _plan_partitions(ctx, spec, tbl_id, cd_id, root)
        _add_params(ctx, TableParam, "table", tbl_id, _table_params(ctx, spec, totals, column_stats=False))
    elif spec.kind == "VIRTUAL_VIEW":
        _add_params(ctx, TableParam, "table", tbl_id, {"transient_lastDdlTime": str(ctx.now)})
    else:
        data = _generate_rows(ctx.rng, spec.columns, ctx.rng.randint(8, 20), ("2024-01-03", 12))
        totals = _write_files(ctx, spec, root, data, write=True)
        _add_params(ctx, TableParam, "table", tbl_id, _table_params(ctx, spec, totals))
        _plan_column_stats(ctx, TableColumnStatistics, spec, data, table=tbl_id)
    _plan_table_grants(ctx, spec, tbl_id)
    return True


def _table_row(ctx: Context, spec: TableSpec, tbl_id: Any, db_id: Any, sd_id: Any) -> dict[str, Any]:
    return {
        "id": tbl_id,
        "create_time": ctx.now,
        "database": db_id,
        "last_access_time": 0,
        "owner": spec.owner,
        "owner_type": "USER",
        "retention": 0,
        "sd": sd_id,
        "name": spec.name,
        "type": spec.kind,
        "view_original_text": spec.view_text[0] or None,
        "view_expanded_text": spec.view_text[1] or None,
        "is_rewrite_enabled": False,
        "write_id": 2 if spec.acid else 0,
    }


def _plan_partition_keys(ctx: Context, tbl_id: LocalId) -> None:
    for position, (name, type_name) in enumerate(PARTITION_KEYS):
        ctx.add(PartitionKey, table=tbl_id, name=name, type=type_name, comment=None, position=position)


def _table_params(ctx: Context, spec: TableSpec, totals: Seq[int], *, column_stats: bool = True) -> dict[str, str]:
    files, size, rows = totals
    params = {"numFiles": str(files), "totalSize": str(size), "numRows": str(rows)}
    params["transient_lastDdlTime"] = str(ctx.now)
    params["COLUMN_STATS_ACCURATE"] = _stats_accurate(spec.columns if column_stats else ())
    if spec.kind == "EXTERNAL_TABLE":
        params["EXTERNAL"] = "TRUE"
    if spec.acid:
        params |= {"transactional": "true", "transactional_properties": "default"}
    if ctx.schema.capabilities.writes_bucketing_version:
        params["bucketing_version"] = "2"
    if spec.comment:
        params["comment"] = spec.comment
    return params


def _stats_accurate(columns: Seq[tuple[str, str]]) -> str:
    """Hive's COLUMN_STATS_ACCURATE value: basic stats, and column stats for ``columns``."""
    value: dict[str, Any] = {"BASIC_STATS": "true"}
    if columns:
        value["COLUMN_STATS"] = {name: "true" for name, _ in columns}
    return json.dumps(value, separators=(",", ":"))


def _plan_table_grants(ctx: Context, spec: TableSpec, tbl_id: LocalId) -> None:
    grants = [(spec.owner, "USER", privilege, 1) for privilege in ("SELECT", "INSERT", "UPDATE", "DELETE")]
    if spec.analyst_select:
        grants.append(("analyst", "ROLE", "SELECT", 0))
    for principal, principal_type, privilege, grant_option in grants:
        ctx.add(
            TablePrivilege,
            id=ctx.plan.take("MTablePrivilege"),
            table=tbl_id,
            privilege=privilege,
            **_grant(ctx, principal, principal_type, spec.owner, grant_option),
        )


def _plan_partitions(ctx: Context, spec: TableSpec, tbl_id: LocalId, cd_id: LocalId, root: Path) -> list[int]:
    """Plan every partition of ``spec`` (its own SD, sharing the table's columns); the summed basic stats."""
    totals = [0, 0, 0]
    for index, (day, hour) in enumerate(spec.partitions):
        name = f"dt={day}/hour={hour}"
        base = ctx.warehouse / spec.relocated_root if name in spec.relocated else root
        directory = base / f"dt={day}" / f"hour={hour}"
        data = _generate_rows(ctx.rng, spec.columns, ctx.rng.randint(5, 15), (day, hour))
        stats = _write_files(ctx, spec, directory, data, write=name not in spec.missing)
        part_id = ctx.plan.take("MPartition")
        sd_id = _plan_sd(ctx, spec, cd_id, _uri(directory))
        _plan_partition_row(ctx, part_id, tbl_id, sd_id, (day, hour), write_id=2 if spec.acid else 0)
        params = {"numFiles": str(stats[0]), "totalSize": str(stats[1]), "numRows": str(stats[2])}
        params["transient_lastDdlTime"] = str(ctx.now)
        if index % 4 != 3:  # every fourth partition has stale stats: no COLUMN_STATS_ACCURATE
            params["COLUMN_STATS_ACCURATE"] = _stats_accurate(spec.columns)
        _add_params(ctx, PartitionParam, "partition", part_id, params)
        _plan_column_stats(ctx, PartitionColumnStatistics, spec, data, partition=part_id, partition_name=name)
        totals = [a + b for a, b in zip(totals, stats, strict=True)]
    return totals


def _plan_partition_row(
    ctx: Context, part_id: LocalId, tbl_id: LocalId, sd_id: LocalId, values: tuple[str, int], write_id: int = 0
) -> None:
    name = "/".join(f"{key}={value}" for (key, _), value in zip(PARTITION_KEYS, values, strict=True))
    ctx.add(
        Partition,
        id=part_id,
        create_time=ctx.now,
        last_access_time=0,
        name=name,
        sd=sd_id,
        table=tbl_id,
        write_id=write_id,
    )
    for position, value in enumerate(values):
        ctx.add(PartitionKeyValue, partition=part_id, value=str(value), position=position)


# --------------------------------------------------------------------------------------------
# Data files and column statistics
# --------------------------------------------------------------------------------------------


def _generate_rows(
    rng: random.Random, columns: Seq[tuple[str, str]], count: int, when: tuple[str, int]
) -> list[tuple[Any, ...]]:
    start = rng.randint(1, 10_000)
    return [tuple(_value(rng, name, type_name, start + i, when) for name, type_name in columns) for i in range(count)]


def _value(rng: random.Random, name: str, type_name: str, serial: int, when: tuple[str, int]) -> Any:
    if type_name in ("int", "bigint"):
        if name in ("id", "payment_id", "click_id", "job_id"):
            return serial
        return rng.randint(1, 500) if name.endswith("id") else rng.randint(10, 90_000)
    if type_name == "double" or type_name.startswith("decimal"):
        return round(rng.uniform(0.5, 900), 2)
    if type_name == "boolean":
        return rng.random() < 0.8
    if type_name == "date":
        return (date(2023, 1, 1) + timedelta(days=rng.randint(0, 364))).isoformat()
    if type_name == "timestamp":
        return f"{when[0]} {when[1]:02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
    if name == "email":
        return f"user{serial}@example.com"
    return rng.choice(WORDS.get(name, ("alpha", "beta", "gamma", "delta")))


def _write_files(
    ctx: Context, spec: TableSpec, directory: Path, data: list[tuple[Any, ...]], *, write: bool
) -> tuple[int, int, int]:
    """Write ``data`` as Hive-named files under ``directory`` (unless ``write`` is false): files, bytes, rows."""
    lines = [",".join(str(v).lower() if isinstance(v, bool) else str(v) for v in row) + "\n" for row in data]
    if spec.acid:  # one delta directory per committed write id
        half = len(lines) // 2
        files = {"delta_0000001_0000001_0000/bucket_00000": lines[:half]}
        files["delta_0000002_0000002_0000/bucket_00000"] = lines[half:]
    else:
        files = {"000000_0": lines}
    size = 0
    for relative, chunk in files.items():
        content = "".join(chunk).encode()
        size += len(content)
        if write:
            path = directory / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
            ctx.files += 1
    return len(files), size, len(data)


def _plan_column_stats(
    ctx: Context, model: type[models.Model], spec: TableSpec, data: list[tuple[Any, ...]], **owner: Any
) -> None:
    space = "MPartitionColumnStatistics" if model is PartitionColumnStatistics else "MTableColumnStatistics"
    for index, (name, type_name) in enumerate(spec.columns):
        ctx.add(
            model,
            id=ctx.plan.take(space),
            catalog_name=ctx.catalog,
            db_name=spec.database,
            table_name=spec.name,
            column_name=name,
            column_type=type_name,
            num_nulls=0,
            last_analyzed=ctx.now,
            engine="hive",
            **_stats_values(type_name, [row[index] for row in data]),
            **owner,
        )


def _stats_values(type_name: str, values: list[Any]) -> dict[str, Any]:
    """Column statistics computed from the generated values, in the columns Hive uses for the type."""
    ndv = {"num_distincts": len(set(values))}
    if type_name == "boolean":
        return {"num_trues": sum(values), "num_falses": len(values) - sum(values)}
    if type_name.startswith("decimal"):
        return ndv | {"big_decimal_low_value": f"{min(values):.2f}", "big_decimal_high_value": f"{max(values):.2f}"}
    if type_name == "double":
        return ndv | {"double_low_value": min(values), "double_high_value": max(values)}
    if type_name == "date":
        values = [(date.fromisoformat(v) - date(1970, 1, 1)).days for v in values]
    elif type_name == "timestamp":
        values = [int(datetime.fromisoformat(f"{v}+00:00").timestamp()) for v in values]
    if type_name in ("int", "bigint", "date", "timestamp"):
        return ndv | {"long_low_value": min(values), "long_high_value": max(values)}
    lengths = [len(str(v)) for v in values]
    return ndv | {"avg_col_len": sum(lengths) / len(lengths), "max_col_len": max(lengths)}


# --------------------------------------------------------------------------------------------
# ACID state: transactions, components, locks, write ids, compactions
# --------------------------------------------------------------------------------------------


def _plan_acid_state(ctx: Context, created: set[tuple[str, str]]) -> None:
    """Open txns (one holding a lock the other waits for), an aborted and a committed one, write ids, compactions."""
    if ACID_JOBS in created:
        _plan_transactions(ctx, ACID_JOBS)
    if ctx.schema.has_write_ids:
        for database, table in sorted(created):
            ctx.add(NextWriteId, database=database, table=table, next=NEXT_WRITE_IDS[(database, table)])
    for target in sorted(created):
        _plan_compactions(ctx, target, ABORTED_PARTITION if target == ACID_JOBS else None)


def _plan_transactions(ctx: Context, target: tuple[str, str]) -> None:
    committed, running, waiting, aborted = (ctx.plan.take("txn") for _ in range(4))
    for txn_id, state, user in ((running, "o", "etl"), (waiting, "o", "analyst"), (aborted, "a", "etl")):
        ctx.add(
            Transaction,
            id=txn_id,
            state=state,
            started=ctx.now_ms - 600_000,
            last_heartbeat=ctx.now_ms - 5_000,
            user=user,
            host=f"{user}-host-1.example.com",
            agent_info=f"hive_{user}_{ctx.now}",
            heartbeat_count=120,
            type=0,
        )
    component = {"database": target[0], "table": target[1], "operation_type": "i"}
    ctx.add(TransactionComponent, txn_id=running, partition=OPEN_PARTITION, write_id=3, **component)
    ctx.add(TransactionComponent, txn_id=aborted, partition=ABORTED_PARTITION, **component)
    if ctx.schema.has_write_ids:
        ctx.add(TransactionWriteId, txn_id=running, database=target[0], table=target[1], write_id=3)
    held, queued = ctx.plan.take("lock"), ctx.plan.take("lock")
    lock = {"int_id": 1, "database": target[0], "table": target[1], "partition": OPEN_PARTITION}
    ctx.add(HiveLock, ext_id=held, txn_id=running, state="a", type="w", **lock, **_lock_holder(ctx, "etl", 590))
    ctx.add(
        HiveLock,
        ext_id=queued,
        txn_id=waiting,
        state="w",
        type="e",
        blocked_by_ext_id=held,
        blocked_by_int_id=1,
        **lock,
        **_lock_holder(ctx, "analyst", None),
    )
    # The update that wrote write id 2 committed after the others opened (commit id: the highest txn id then).
    written = {"database": target[0], "table": target[1], "partition": OPEN_PARTITION}
    commit_time = datetime.fromtimestamp(ctx.now - 300, UTC).replace(tzinfo=None)
    ctx.add(
        CompletedTransactionComponent, txn_id=committed, timestamp=commit_time, write_id=2, update_delete="Y", **written
    )
    ctx.add(WriteSetEntry, txn_id=committed, commit_id=aborted, operation_type="u", **written)
    metric = {"metric_type": "HIVE_ACID_NUM_DELTAS", "value": 2, "version": 1}  # delta_1 and delta_2 (Hive 4)
    ctx.add(CompactionMetric, database=target[0], table=target[1], partition=ABORTED_PARTITION, **metric)


def _lock_holder(ctx: Context, user: str, held_seconds: int | None) -> dict[str, Any]:
    return {
        "last_heartbeat": ctx.now_ms - 3_000,
        "acquired_at": ctx.now_ms - held_seconds * 1000 if held_seconds else None,
        "user": user,
        "host": f"{user}-host-1.example.com",
        "heartbeat_count": 40,
        "agent_info": f"hive_{user}_{ctx.now}",
    }


def _plan_compactions(ctx: Context, target: tuple[str, str], partition: str | None) -> None:
    """One initiated major compaction, and a succeeded and a failed one in the history."""
    common = {"database": target[0], "table": target[1], "partition": partition, "run_as": "hive"}
    common |= {"highest_txn_id": 1, "highest_write_id": 2, "enqueue_time": ctx.now_ms - 3_600_000}
    ctx.add(CompactionQueueEntry, id=ctx.plan.take("compaction"), state="i", type="a", **common)
    history = (("s", "i", 86_400, ""), ("f", "a", 7_200, "java.io.IOException: Not enough history available"))
    for state, kind, ago, error in history:
        ctx.add(
            CompletedCompaction,
            id=ctx.plan.take("compaction"),
            state=state,
            type=kind,
            start=ctx.now_ms - ago * 1000,
            end=ctx.now_ms - (ago - 100) * 1000,
            worker_id="hms-1.example.com-42",
            error_message=error or None,
            **common,
        )


# --------------------------------------------------------------------------------------------
# Scale content: many small tables, one big partitioned table
# --------------------------------------------------------------------------------------------


def _bench_partition(index: int) -> tuple[str, int]:
    """The (dt, hour) values of the ``index``-th benchmark partition; partition names ascend with the index."""
    return (BENCH_FIRST_DAY + timedelta(days=index // 24)).isoformat(), HOURS_BY_NAME[index % 24]


@dataclass
class ScaleTables:
    """``count`` unpartitioned tables ``t_<TBL_ID>`` over the scale databases, each with SD, SerDe, columns, params."""

    count: int
    databases: list[tuple[Any, str]]
    refs: dict[str, LocalId] = field(default_factory=dict)

    def reserve(self, plan: IdPlan) -> None:
        for space in SCALE_SPACES:
            self.refs[space] = plan.take(space, self.count)

    def plan_rows(self, ctx: Context) -> None:
        fmt = FORMATS[SCALE_SPEC.fmt]
        for i in range(self.count):
            tbl, sd, serde, cd = (self.refs[s] + i for s in SCALE_SPACES)
            db_id, db_name = self.databases[i % len(self.databases)]
            ctx.add(SerDe, id=serde, name=None, slib=fmt.serde_lib)
            _add_params(ctx, SerDeParam, "serde", serde, dict(fmt.serde_params))
            _plan_columns(ctx, SCALE_COLUMNS, cd)
            location = IdText(_uri(ctx.db_root(db_name) / "t_") + "{id}", tbl)
            ctx.add(StorageDescriptor, **_sd_row(sd, fmt, location, serde, cd, -1))
            ctx.add(Table, **_table_row(ctx, SCALE_SPEC, tbl, db_id, sd) | {"name": IdText("t_{id}", tbl)})
            _add_params(ctx, TableParam, "table", tbl, _empty_table_params(ctx))

    def bulk_insert(self, ctx: Context) -> Counter[str]:
        return _bulk_scale_tables(ctx, self)


def _empty_table_params(ctx: Context) -> dict[str, str]:
    params = {"numFiles": "0", "numRows": "0", "totalSize": "0", "transient_lastDdlTime": str(ctx.now)}
    return params | {"COLUMN_STATS_ACCURATE": _stats_accurate(())}


def _plan_scale_tables(ctx: Context, count: int) -> None:
    specs = [DatabaseSpec(name, "Scale-test tables", "bench") for name in SCALE_DATABASES]
    scale = ScaleTables(count, [(_ensure_database(ctx, spec), spec.name) for spec in specs])
    scale.reserve(ctx.plan)
    if ctx.connection.vendor == "postgresql":
        ctx.bulk.append(scale.bulk_insert)
    else:
        scale.plan_rows(ctx)


@dataclass
class BigTable:
    """
    The partitions of the benchmark table: planned row by row, or inserted set-based on PostgreSQL.

    Rows are generated in the order of each table's most expensive index (partition names
    ascending; column statistics by column then partition while their index is on names, by
    partition in Hive 4.0.0, where it is on PART_ID), so that PostgreSQL appends to the index
    instead of searching it for every row.
    """

    spec: TableSpec
    tbl_id: LocalId
    cd_id: LocalId
    root: Path
    count: int
    stats_columns: tuple[tuple[str, str], ...]  # sorted by name
    column_major: bool
    refs: dict[str, LocalId] = field(default_factory=dict)

    def reserve(self, plan: IdPlan) -> None:
        for space in PARTITION_SPACES:
            self.refs[space] = plan.take(space, self.count)
        self.refs["MPartitionColumnStatistics"] = plan.take("MPartitionColumnStatistics", self.stats_count)

    @property
    def stats_count(self) -> int:
        return self.count * len(self.stats_columns)

    def stats_offset(self, partition: int, column: int) -> int:
        """Position of one statistics row in the generated order (its CS_ID offset)."""
        if self.column_major:
            return column * self.count + partition
        return partition * len(self.stats_columns) + column

    def plan_rows(self, ctx: Context) -> None:
        fmt = FORMATS[self.spec.fmt]
        for i in range(self.count):
            day, hour = _bench_partition(i)
            part, sd, serde = (self.refs[s] + i for s in PARTITION_SPACES)
            ctx.add(SerDe, id=serde, name=None, slib=fmt.serde_lib)
            location = _uri(self.root / f"dt={day}" / f"hour={hour}")
            ctx.add(StorageDescriptor, **_sd_row(sd, fmt, location, serde, self.cd_id, -1))
            _plan_partition_row(ctx, part, self.tbl_id, sd, (day, hour))
            _add_params(ctx, PartitionParam, "partition", part, _bench_partition_params(ctx, i, self.stats_columns))
            self._plan_stats(ctx, part, f"dt={day}/hour={hour}", i)

    def _plan_stats(self, ctx: Context, part: LocalId, name: str, i: int) -> None:
        first = self.refs["MPartitionColumnStatistics"]
        for c, (column, type_name) in enumerate(self.stats_columns):
            numeric = type_name in ("int", "bigint")
            ctx.add(
                PartitionColumnStatistics,
                id=first + self.stats_offset(i, c),
                partition=part,
                partition_name=name,
                catalog_name=ctx.catalog,
                db_name=self.spec.database,
                table_name=self.spec.name,
                column_name=column,
                column_type=type_name,
                num_nulls=i % 7,
                num_distincts=100 + i % 900,
                last_analyzed=ctx.now,
                long_low_value=i % 100 if numeric else None,
                long_high_value=100_000 + i if numeric else None,
                double_low_value=0.0 if type_name == "double" else None,
                double_high_value=1000.0 + i % 1000 if type_name == "double" else None,
                avg_col_len=12.5 if type_name == "string" else None,
                max_col_len=40 if type_name == "string" else None,
            )

    def bulk_insert(self, ctx: Context) -> Counter[str]:
        return _bulk_big_table(ctx, self)


def _bench_partition_params(ctx: Context, index: int, stats_columns: Seq[tuple[str, str]]) -> dict[str, str]:
    """Basic statistics of one partition, and Hive's accuracy flag where it has column statistics."""
    rows = 1000 + index % 5000
    params = {
        "numFiles": "1",
        "numRows": str(rows),
        "totalSize": str(rows * 64),
        "transient_lastDdlTime": str(ctx.now),
    }
    if stats_columns:
        params["COLUMN_STATS_ACCURATE"] = _stats_accurate(stats_columns)
    return params


def _plan_big_table(ctx: Context, partitions: int, col_stats: int) -> None:
    """Table ``bench.events`` (or the next free ``events_<n>``) with ``partitions`` partitions and their stats."""
    db_id = _ensure_database(ctx, DatabaseSpec(BENCH_DATABASE, "Benchmark tables", "bench"))
    name = _free_name(_existing_tables(ctx, db_id), BENCH_TABLE)
    extra = tuple((f"attr_{n}", "string") for n in range(len(BENCH_COLUMNS) + 1, col_stats + 1))
    columns = BENCH_COLUMNS + extra
    spec = TableSpec(BENCH_DATABASE, name, columns, "parquet", owner="bench")
    root = ctx.db_root(BENCH_DATABASE) / name
    cd_id = _plan_columns(ctx, columns)
    tbl_id = ctx.plan.take("MTable")
    ctx.add(Table, **_table_row(ctx, spec, tbl_id, db_id, _plan_sd(ctx, spec, cd_id, _uri(root))))
    _plan_partition_keys(ctx, tbl_id)
    _add_params(ctx, TableParam, "table", tbl_id, _table_params(ctx, spec, (0, 0, 0), column_stats=False))
    stats_columns = tuple(sorted(columns[:col_stats]))
    by_name = ctx.schema.has(PartitionColumnStatistics, "partition_name")  # the stats index is on names, not PART_ID
    big = BigTable(spec, tbl_id, cd_id, root, partitions, stats_columns, column_major=by_name)
    big.reserve(ctx.plan)
    if ctx.connection.vendor == "postgresql":
        ctx.bulk.append(big.bulk_insert)
    else:
        big.plan_rows(ctx)


def _free_name(existing: set[str], base: str) -> str:
    """``base``, else the first of ``base_2``, ``base_3`` … that is not taken."""
    return next(
        name for name in itertools.chain([base], (f"{base}_{n}" for n in itertools.count(2))) if name not in existing
    )


# --------------------------------------------------------------------------------------------
# Id reservation
# --------------------------------------------------------------------------------------------


def _reserve_ids(ctx: Context) -> None:
    """Reserve one block per id space for everything planned (NEXT_VAL is raised once per space)."""
    for space, count in sorted(ctx.plan.counts.items()):
        if count:
            ctx.plan.bases[space] = _reserve(ctx, space, count)


def _reserve(ctx: Context, space: str, count: int) -> int:
    floor = _next_after_max(ctx, SEQUENCE_SPACES.get(space) or COUNTER_SPACES[space][1])
    if space in SEQUENCE_SPACES:
        return _reserve_from_sequence_table(ctx, SEQUENCE_PREFIX + space, count, floor)
    table = _actual_table_name(ctx, COUNTER_SPACES[space][0])
    if table:
        return _reserve_from_counter(ctx, table, count, floor)
    if space == "txn" and ctx.connection.vendor == "postgresql":
        return _reserve_from_serial(ctx, count, floor)
    return floor  # metastores made by metastore_ddl (SQLite); Hive 4 on MySQL (AUTO_INCREMENT follows)


def _next_after_max(ctx: Context, sources: Source) -> int:
    highest = 0
    for model, field_name in sources:
        if model_available(model, ctx.version):
            ctx.cursor.execute(f"SELECT MAX({ctx.column(model, field_name)}) FROM {ctx.table(model)}")
            highest = max(highest, ctx.cursor.fetchone()[0] or 0)
    return highest + 1


def _for_update(ctx: Context) -> str:
    return " FOR UPDATE" if ctx.connection.features.has_select_for_update else ""


def _reserve_from_sequence_table(ctx: Context, name: str, count: int, floor: int) -> int:
    """A block from DataNucleus's SEQUENCE_TABLE (NEXT_VAL is the next free id); a missing row starts at max + 1."""
    table, name_col, next_col = ctx.table(Sequence), ctx.column(Sequence, "name"), ctx.column(Sequence, "next_val")
    ctx.cursor.execute(f"SELECT {next_col} FROM {table} WHERE {name_col} = %s{_for_update(ctx)}", [name])
    row = ctx.cursor.fetchone()
    if row is None:
        ctx.cursor.execute(f"INSERT INTO {table} ({name_col}, {next_col}) VALUES (%s, %s)", [name, floor + count])
        return floor
    start = max(row[0], floor)  # never below NEXT_VAL: a running Hive may hold the ids under it
    ctx.cursor.execute(f"UPDATE {table} SET {next_col} = %s WHERE {name_col} = %s", [start + count, name])
    return start


def _reserve_from_counter(ctx: Context, table: str, count: int, floor: int) -> int:
    """A block from one of Hive's single-row ACID counters (NEXT_TXN_ID, NEXT_LOCK_ID …)."""
    column = ctx.quote(ctx.connection.introspection.get_table_description(ctx.cursor, table)[0].name)
    quoted = ctx.quote(table)
    ctx.cursor.execute(f"SELECT {column} FROM {quoted}{_for_update(ctx)}")
    row = ctx.cursor.fetchone()
    start = max(row[0], floor) if row else floor
    if row is None:
        ctx.cursor.execute(f"INSERT INTO {quoted} ({column}) VALUES (%s)", [start + count])
    else:
        ctx.cursor.execute(f"UPDATE {quoted} SET {column} = %s", [start + count])
    return start


def _reserve_from_serial(ctx: Context, count: int, floor: int) -> int:
    """Hive 4 on PostgreSQL: TXNS.TXN_ID is a bigserial; move its sequence past the block."""
    ctx.cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [ctx.table(Transaction), "TXN_ID"])
    sequence = ctx.cursor.fetchone()[0]
    if not sequence:
        return floor
    ctx.cursor.execute("SELECT nextval(%s)", [sequence])
    start = max(ctx.cursor.fetchone()[0], floor)
    ctx.cursor.execute("SELECT setval(%s, %s)", [sequence, start + count - 1])
    return start


def _actual_table_name(ctx: Context, name: str) -> str:
    """The table's name as the database spells it (lower case in Hive 2.3/3.1 PostgreSQL scripts), or ''."""
    names = {n.lower(): n for n in ctx.connection.introspection.table_names(ctx.cursor)}
    return names.get(name.lower(), "")


# --------------------------------------------------------------------------------------------
# Writing planned rows (executemany)
# --------------------------------------------------------------------------------------------


def _available_fields(ctx: Context, model: type[models.Model]) -> list[models.Field]:
    return [f for f in model._meta.concrete_fields if field_available(f, ctx.version)]


def _write_rows(ctx: Context, order: Seq[type[models.Model]]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for model in order:
        rows = ctx.rows.get(model)
        if rows and model_available(model, ctx.version):
            counts[model._meta.db_table] += _insert_rows(ctx, model, rows)
    return counts


def _insert_rows(ctx: Context, model: type[models.Model], rows: list[dict[str, Any]]) -> int:
    fields = _available_fields(ctx, model)
    columns = ", ".join(ctx.quote(f.column) for f in fields)
    sql = f"INSERT INTO {ctx.table(model)} ({columns}) VALUES ({', '.join(['%s'] * len(fields))})"
    values: Iterator[list[Any]] = ([ctx.plan.resolve(row.get(f.name, _default(f))) for f in fields] for row in rows)
    while chunk := list(islice(values, BATCH_SIZE)):
        ctx.cursor.executemany(sql, chunk)
    return len(rows)


def _default(field_: models.Field) -> Any:
    return field_.default if field_.has_default() and not callable(field_.default) else None


# --------------------------------------------------------------------------------------------
# Set-based inserts on PostgreSQL: INSERT … SELECT … FROM generate_series(…)
# --------------------------------------------------------------------------------------------


def _skip_foreign_key_checks(ctx: Context) -> bool:
    """
    Skip PostgreSQL's per-row foreign-key triggers for the rest of the transaction, when permitted.

    Hive's foreign keys cost one trigger query per inserted row (the larger part of a bulk
    insert). The bulk rows reference only ids reserved and written in this run, so they are
    consistent by construction. Needs superuser or ``GRANT SET ON PARAMETER session_replication_role``.
    """
    try:
        with transaction.atomic(using=ctx.connection.alias):
            ctx.cursor.execute("SET LOCAL session_replication_role = replica")
    except DatabaseError:
        return False
    return True


def _literal(value: Any) -> str:
    """An SQL literal for PostgreSQL; strings with a backslash use E'' so the server's settings cannot matter."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value).replace("'", "''")
    if "\\" in text:
        return "E'" + text.replace("\\", "\\\\") + "'"
    return f"'{text}'"


def _sql_row(row: dict[str, Any], **exprs: str) -> dict[str, str]:
    """``row``'s values as literals, with ``exprs`` (SQL expressions over the series) taking precedence."""
    return {key: _literal(value) for key, value in row.items()} | exprs


def _pick(values: Iterable[Any], index: str) -> str:
    """The ``index``-th (0-based SQL expression) of constant ``values``."""
    return "(ARRAY[" + ", ".join(_literal(v) for v in values) + f"])[{index} + 1]"


def _series(rows: int) -> str:
    """``rows`` rows numbered ``x`` = 0 … rows - 1, streamed in that order (not materialized first)."""
    return f"(SELECT generate_series(0, {rows - 1}) AS x) AS series"


def _insert_select(ctx: Context, model: type[models.Model], exprs: dict[str, str], rows: int) -> Counter[str]:
    """One ``INSERT … SELECT`` over ``_series(rows)``; unnamed fields get their default or NULL."""
    chosen = [
        (f, exprs.get(f.name, _literal(_default(f))))
        for f in _available_fields(ctx, model)
        if f.name in exprs or _default(f) is not None
    ]
    columns = ", ".join(ctx.quote(f.column) for f, _ in chosen)
    select = ", ".join(expr for _, expr in chosen)
    ctx.cursor.execute(f"INSERT INTO {ctx.table(model)} ({columns}) SELECT {select} FROM {_series(rows)}")
    return Counter({model._meta.db_table: ctx.cursor.rowcount})


def _insert_params(
    ctx: Context, model: type[models.Model], owner: tuple[str, int], params: dict[str, str], count: int
) -> Counter[str]:
    """``params`` for each of ``count`` owners (ids ``owner[1]`` + g), keys ascending within an owner."""
    keys = sorted(params)
    per = len(keys)
    exprs = {owner[0]: f"{owner[1]} + x / {per}", "key": _pick(keys, f"x % {per}")}
    exprs["value"] = _pick([params[k] for k in keys], f"x % {per}")
    return _insert_select(ctx, model, exprs, count * per)


def _bulk_scale_tables(ctx: Context, scale: ScaleTables) -> Counter[str]:
    n = scale.count
    tbl, sd, serde, cd = (ctx.plan.resolve(scale.refs[s]) for s in SCALE_SPACES)
    fmt = FORMATS[SCALE_SPEC.fmt]
    databases = [ctx.plan.resolve(db_id) for db_id, _ in scale.databases]
    roots = [_uri(ctx.db_root(name) / "t_") for _, name in scale.databases]
    counts = _insert_select(ctx, SerDe, {"id": f"{serde} + x", "slib": _literal(fmt.serde_lib)}, n)
    counts += _insert_params(ctx, SerDeParam, ("serde", serde), dict(fmt.serde_params), n)
    counts += _insert_select(ctx, ColumnDescriptor, {"id": f"{cd} + x"}, n)
    width = len(SCALE_COLUMNS)
    names, types = zip(*SCALE_COLUMNS, strict=True)
    column = {"cd": f"{cd} + x / {width}", "position": f"x % {width}", "comment": "NULL"}
    column |= {"name": _pick(names, f"x % {width}"), "type": _pick(types, f"x % {width}")}
    counts += _insert_select(ctx, Column, column, n * width)
    pick = f"x % {len(databases)}"
    location = f"{_pick(roots, pick)} || ({tbl} + x)"
    sd_row = _sql_row(_sd_row(0, fmt, "", 0, 0, -1), id=f"{sd} + x", location=location)
    counts += _insert_select(ctx, StorageDescriptor, sd_row | {"serde": f"{serde} + x", "cd": f"{cd} + x"}, n)
    table = _sql_row(_table_row(ctx, SCALE_SPEC, 0, 0, 0), id=f"{tbl} + x", sd=f"{sd} + x")
    table |= {"database": _pick(databases, pick), "name": f"'t_' || ({tbl} + x)"}
    counts += _insert_select(ctx, Table, table, n)
    return counts + _insert_params(ctx, TableParam, ("table", tbl), _empty_table_params(ctx), n)


def _bench_sql(g: str) -> tuple[str, str, str]:
    """SQL for ``_bench_partition(g)``: dt and hour values and the partition name (needs DateStyle ISO)."""
    day = f"(DATE '{BENCH_FIRST_DAY.isoformat()}' + ({g}) / 24)::text"  # to_char() is three times slower
    hour = _pick([str(h) for h in HOURS_BY_NAME], f"({g}) % 24")
    suffix = _pick([f"/hour={h}" for h in HOURS_BY_NAME], f"({g}) % 24")
    return day, hour, f"'dt=' || {day} || {suffix}"


def _bulk_big_table(ctx: Context, big: BigTable) -> Counter[str]:
    n = big.count
    part, sd, serde = (ctx.plan.resolve(big.refs[s]) for s in PARTITION_SPACES)
    tbl, cd = ctx.plan.resolve(big.tbl_id), ctx.plan.resolve(big.cd_id)
    fmt = FORMATS[big.spec.fmt]
    ctx.cursor.execute("SET LOCAL DateStyle = 'ISO'")
    _, _, name = _bench_sql("x")
    counts = _insert_select(ctx, SerDe, {"id": f"{serde} + x", "slib": _literal(fmt.serde_lib)}, n)
    location = f"{_literal(_uri(big.root) + '/')} || {name}"
    sd_row = _sql_row(_sd_row(0, fmt, "", 0, cd, -1), id=f"{sd} + x", location=location, serde=f"{serde} + x")
    counts += _insert_select(ctx, StorageDescriptor, sd_row, n)
    part_row = _sql_row({"create_time": ctx.now, "last_access_time": 0, "table": tbl, "write_id": 0})
    counts += _insert_select(ctx, Partition, part_row | {"id": f"{part} + x", "name": name, "sd": f"{sd} + x"}, n)
    day, hour, _ = _bench_sql("x / 2")
    value = f"CASE x % 2 WHEN 0 THEN {day} ELSE {hour} END"
    key_vals = {"partition": f"{part} + x / 2", "value": value, "position": "x % 2"}
    counts += _insert_select(ctx, PartitionKeyValue, key_vals, n * 2)
    counts += _bulk_partition_params(ctx, big, part)
    if big.stats_columns:
        counts += _bulk_partition_stats(ctx, big, part)
    return counts


def _bulk_partition_params(ctx: Context, big: BigTable, part: int) -> Counter[str]:
    """The parameters of each partition, as ``_bench_partition_params``, one row per key in key order."""
    keys = sorted(_bench_partition_params(ctx, 0, big.stats_columns))
    rows = f"(1000 + (x / {len(keys)}) % 5000)"
    values = {
        "COLUMN_STATS_ACCURATE": _literal(_stats_accurate(big.stats_columns)),
        "numFiles": "'1'",
        "numRows": f"{rows}::text",
        "totalSize": f"({rows} * 64)::text",
        "transient_lastDdlTime": f"'{ctx.now}'",
    }
    which = f"x % {len(keys)}"
    value = "CASE " + which + " " + " ".join(f"WHEN {i} THEN {values[k]}" for i, k in enumerate(keys)) + " END"
    exprs = {"partition": f"{part} + x / {len(keys)}", "key": _pick(keys, which), "value": value}
    return _insert_select(ctx, PartitionParam, exprs, big.count * len(keys))


def _bulk_partition_stats(ctx: Context, big: BigTable, part: int) -> Counter[str]:
    width = len(big.stats_columns)
    g, c = (f"x % {big.count}", f"x / {big.count}") if big.column_major else (f"x / {width}", f"x % {width}")
    names, types = zip(*big.stats_columns, strict=True)
    numeric, double, text = (_when_column(types, c, kinds) for kinds in (("int", "bigint"), ("double",), ("string",)))
    exprs = _sql_row({"catalog_name": ctx.catalog, "db_name": big.spec.database, "table_name": big.spec.name})
    exprs |= {
        "id": f"{ctx.plan.resolve(big.refs['MPartitionColumnStatistics'])} + x",
        "partition": f"{part} + {g}",
        "partition_name": _bench_sql(g)[2],
        "column_name": _pick(names, c),
        "column_type": _pick(types, c),
        "num_nulls": f"({g}) % 7",
        "num_distincts": f"100 + ({g}) % 900",
        "last_analyzed": str(ctx.now),
        "long_low_value": f"CASE WHEN {numeric} THEN ({g}) % 100 END",
        "long_high_value": f"CASE WHEN {numeric} THEN 100000 + {g} END",
        "double_low_value": f"CASE WHEN {double} THEN 0.0 END",
        "double_high_value": f"CASE WHEN {double} THEN 1000.0 + ({g}) % 1000 END",
        "avg_col_len": f"CASE WHEN {text} THEN 12.5 END",
        "max_col_len": f"CASE WHEN {text} THEN 40 END",
    }
    return _insert_select(ctx, PartitionColumnStatistics, exprs, big.stats_count)


def _when_column(types: Seq[str], index: str, kinds: Seq[str]) -> str:
    """SQL condition: the statistics column at ``index`` is of one of ``kinds`` (compares integers, not names)."""
    positions = [str(i) for i, type_name in enumerate(types) if type_name in kinds]
    return f"({index}) IN ({', '.join(positions)})" if positions else "FALSE"
