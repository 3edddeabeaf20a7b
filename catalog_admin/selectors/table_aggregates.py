"""
What a page may remember about a big table between views: aggregates over its partitions, kept in Django's cache
under the table's *partition stamp* (how many partitions it has, up to a bound, and the highest partition id), so
adding or dropping a partition makes a fresh computation, and for at most ``CATALOG_TABLE_AGGREGATE_SECONDS``
otherwise (a change of statistics or a rename keeps the stamp: the page says as of when its figure is).

The stamp itself counts up to 100,001 partition ids, so it is remembered too, for ``CATALOG_PARTITION_STAMP_SECONDS``
(default 2 s): under load a web process counts a big table's partitions once per that interval, not on every view
(a page never does work that grows with the table on every view), and an added or dropped partition shows at most
that much later. 0 counts on every view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Max
from django.utils import timezone

from catalog_admin.models import Partition, Table
from catalog_admin.selectors.metastores import Metastore

__all__ = ("EXACT_COUNT_LIMIT", "PartitionStamp", "Remembered", "partition_stamp", "remembered")

EXACT_COUNT_LIMIT = 100_000
T = TypeVar("T")


@dataclass(frozen=True)
class PartitionStamp:
    """The table's partitions counted up to ``EXACT_COUNT_LIMIT + 1``, and the highest id among those counted."""

    count: int
    top_id: int | None

    @property
    def exact(self) -> bool:
        return self.count <= EXACT_COUNT_LIMIT


@dataclass(frozen=True)
class Remembered(Generic[T]):
    value: T
    as_of: datetime


def partition_stamp(metastore: Metastore, table: Table) -> PartitionStamp:
    """The table's stamp, read once per table object (a page's selectors share it) and counted at most once per
    ``CATALOG_PARTITION_STAMP_SECONDS`` by a process."""
    stamp: PartitionStamp | None = getattr(table, "_partition_stamp", None)
    if stamp is None:
        stamp = _recent_stamp(metastore, table)
        table._partition_stamp = stamp  # type: ignore[attr-defined]
    return stamp


def _recent_stamp(metastore: Metastore, table: Table) -> PartitionStamp:
    seconds = settings.CATALOG_PARTITION_STAMP_SECONDS
    key = f"catalog-admin:{metastore.name}:{table.id}:partition-stamp"
    found = cache.get(key) if seconds > 0 else None
    if isinstance(found, PartitionStamp):
        return found
    stamp = _counted_stamp(metastore, table)
    if seconds > 0:
        cache.set(key, stamp, seconds)
    return stamp


def _counted_stamp(metastore: Metastore, table: Table) -> PartitionStamp:
    """One bounded, index-only aggregate: the partitions counted up to the bound, and their highest id."""
    bounded = Partition.objects.using(metastore.alias).filter(table_id=table.id).values("id")
    row = bounded[: EXACT_COUNT_LIMIT + 1].aggregate(n=Count("id"), top=Max("id"))
    return PartitionStamp(count=row["n"], top_id=row["top"])


def remembered(
    metastore: Metastore, table: Table, what: str, stamp: PartitionStamp, compute: Callable[[], T]
) -> Remembered[T]:
    """``compute()``'s value for ``table`` under ``stamp``, from the cache when a view computed it recently."""
    key = f"catalog-admin:{metastore.name}:{table.id}:{what}:{stamp.count}:{stamp.top_id}"
    found = cache.get(key)
    if isinstance(found, Remembered):
        return found
    value = Remembered(compute(), timezone.now())
    cache.set(key, value, settings.CATALOG_TABLE_AGGREGATE_SECONDS)
    return value
