"""Ids and the seeding context: id spaces, local ids resolved after reservation, and what one run shares."""

from __future__ import annotations

import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper

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
from catalog_admin.schema import MetastoreSchema, SchemaVersion

__all__ = (
    "BATCH_SIZE",
    "BENCH_DATABASE",
    "BENCH_TABLE",
    "COUNTER_SPACES",
    "SCALE_DATABASES",
    "SEQUENCE_SPACES",
    "WRITE_ORDER",
    "Context",
    "IdPlan",
    "IdText",
    "LocalId",
    "Source",
)

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
