"""
Partition anomalies a steward acts on, filtered and counted: a location outside the table's directory, a location
missing on disk, statistics Hive no longer marks accurate; and a partitioned table's rows as the sum of its
partitions' ``numRows``.

The first and the last are one SQL statement each. "Missing on disk" cannot be asked of the metastore: the locations
are read in one streamed query and checked on disk, up to :data:`DISK_CHECK_LIMIT` partitions.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.db.models import BigIntegerField, Count, Exists, OuterRef, Q, QuerySet, Sum
from django.db.models.functions import Cast

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.hive.locations import normalize_location
from catalog_admin.models import Partition, PartitionParam, Table
from catalog_admin.selectors.metastores import Metastore
from catalog_admin.selectors.sql_text import AllDigits

__all__ = (
    "ANOMALIES",
    "DISK_CHECK_LIMIT",
    "AnomalyCounts",
    "RowTotal",
    "anomaly_counts",
    "location_missing",
    "partition_row_total",
    "with_anomaly",
)

# Filter name -> label, in the order the page shows them.
ANOMALIES = {
    "outside": "outside the table root",
    "missing": "missing on disk",
    "stale": "stale statistics",
}
DISK_CHECK_LIMIT = 100_000
_ACCURATE_BASIC_STATS = '"BASIC_STATS":"true"'  # as Hive writes COLUMN_STATS_ACCURATE (StatsSetupConst, compact JSON)


def _table_root(table: Table) -> str | None:
    location = table.sd.location if table.sd_id and table.sd else None
    return location.rstrip("/") if location else None


def _fresh_statistics() -> Exists:
    return Exists(
        PartitionParam.objects.filter(
            partition_id=OuterRef("id"), key="COLUMN_STATS_ACCURATE", value__contains=_ACCURATE_BASIC_STATS
        )
    )


def with_anomaly(qs: QuerySet, table: Table, anomaly: str) -> QuerySet:
    """``qs`` narrowed to the partitions with ``anomaly`` (``outside`` or ``stale``; ``missing`` is checked on disk)."""
    if anomaly == "outside":
        root = _table_root(table)
        return qs.exclude(sd__location__startswith=root + "/") if root else qs.none()
    if anomaly == "stale":
        return qs.filter(~_fresh_statistics())
    if anomaly in ("", "missing"):
        return qs
    raise ApplicationError(
        ErrorCode.INVALID_PARAMETER,
        f"anomaly must be one of {', '.join(ANOMALIES)}, not '{anomaly}'.",
        {"parameter": "anomaly"},
    )


def location_missing(location: str | None) -> bool | None:
    """Whether a local location is missing on disk; None for a filesystem the console cannot check."""
    if not location:
        return None
    parts = urlsplit(normalize_location(location))
    if parts.scheme != "file":
        return None
    return not os.path.isdir(parts.path)


@dataclass(frozen=True)
class AnomalyCounts:
    """Partitions per anomaly; None: not counted (more than DISK_CHECK_LIMIT partitions, or another filesystem)."""

    outside: int | None
    stale: int | None
    missing: int | None
    missing_checked: int

    def as_dict(self) -> dict[str, int | None]:
        return {"outside": self.outside, "missing": self.missing, "stale": self.stale}


def anomaly_counts(metastore: Metastore, table: Table) -> AnomalyCounts:
    """How many of the table's partitions have each anomaly."""
    partitions = Partition.objects.using(metastore.alias).filter(table_id=table.id)
    if partitions.values("id")[: DISK_CHECK_LIMIT + 1].count() > DISK_CHECK_LIMIT:
        # Too many to count on every view (each count reads every partition): the filters still find them.
        return AnomalyCounts(outside=None, stale=None, missing=None, missing_checked=0)
    missing = checked = uncheckable = 0
    for location in partitions.values_list("sd__location", flat=True).iterator(chunk_size=5000):
        state = location_missing(location)
        if state is None:
            uncheckable += 1
            continue
        checked += 1
        missing += state
    return AnomalyCounts(
        outside=with_anomaly(partitions, table, "outside").count(),
        stale=with_anomaly(partitions, table, "stale").count(),
        missing=None if uncheckable and not checked else missing,
        missing_checked=checked,
    )


@dataclass(frozen=True)
class RowTotal:
    """The sums of the partitions' ``numRows``, ``numFiles`` and ``totalSize`` (metastore parameters, as Hive last
    wrote them: not a listing of the disk), and how many partitions have ``numRows``."""

    rows: int
    counted: int
    partitions: int
    files: int | None = None  # None: no partition has the parameter
    bytes: int | None = None

    @property
    def complete(self) -> bool:
        return self.counted == self.partitions

    @property
    def missing(self) -> int:
        return self.partitions - self.counted


def partition_row_total(metastore: Metastore, table: Table) -> RowTotal:
    """One aggregate over PARTITION_PARAMS: the rows, files and bytes of every partition whose parameter is a
    non-negative number (a partitioned table's own ``numFiles``/``totalSize`` stay 0 in Hive: its data is here)."""
    alias = metastore.alias
    number = Cast("value", BigIntegerField())
    counted = (
        PartitionParam.objects.using(alias)
        .filter(AllDigits("value"), partition__table_id=table.id, key__in=("numRows", "numFiles", "totalSize"))
        .aggregate(
            rows=Sum(number, filter=Q(key="numRows")),
            counted=Count("partition_id", filter=Q(key="numRows")),
            files=Sum(number, filter=Q(key="numFiles")),
            bytes=Sum(number, filter=Q(key="totalSize")),
        )
    )
    partitions = Partition.objects.using(alias).filter(table_id=table.id).aggregate(n=Count("id"))["n"]
    return RowTotal(
        rows=counted["rows"] or 0,
        counted=counted["counted"],
        partitions=partitions,
        files=counted["files"],
        bytes=counted["bytes"],
    )
