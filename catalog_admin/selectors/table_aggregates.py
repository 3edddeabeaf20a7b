"""
What a page may remember about a big table between views: aggregates over its partitions, kept in Django's cache
under the table's *partition stamp* (how many partitions it has, up to a bound, and the highest partition id), so
adding or dropping a partition makes a fresh computation at the next view, and for at most
``CATALOG_TABLE_AGGREGATE_SECONDS`` otherwise (a change of statistics or a rename keeps the stamp: the page says as
of when its figure is). A page then reads the stamp (one index-only aggregate that stops at the bound), not every
partition, on every view.
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
    """The table's stamp (one bounded, index-only aggregate), read once per table object: a page's selectors share
    it."""
    stamp: PartitionStamp | None = getattr(table, "_partition_stamp", None)
    if stamp is None:
        bounded = Partition.objects.using(metastore.alias).filter(table_id=table.id).values("id")
        row = bounded[: EXACT_COUNT_LIMIT + 1].aggregate(n=Count("id"), top=Max("id"))
        stamp = PartitionStamp(count=row["n"], top_id=row["top"])
        table._partition_stamp = stamp  # type: ignore[attr-defined]
    return stamp


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
