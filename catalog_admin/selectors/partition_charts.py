"""
The table page's charts, each one aggregate query over the metastore (never a row per partition in Python):

* partitions per day: partitions counted by the value of the table's day key (a ``date`` key, or a key called
  ``dt``/``ds``/``date``/``day``, else the first key), the last :data:`MAX_GROUPS` values; ISO days beyond that
  per month (``YYYY-MM``);
* bytes per partition key value: the sum of the partitions' ``totalSize`` for the same values;
* the small-file histogram: partitions and their files by average file size (``totalSize / numFiles``, the metastore's
  parameters, not a listing of the disk); partitions it records with no files are a bar of their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.db.models import BigIntegerField, Count, F, FilteredRelation, Q, QuerySet, Sum, Value
from django.db.models.expressions import Case, When
from django.db.models.functions import Cast, Substr

from catalog_admin.models import Partition, PartitionKey, Table
from catalog_admin.selectors.metastores import Metastore
from catalog_admin.selectors.sql_text import AllDigits

__all__ = ("FILE_SIZE_BUCKETS", "MAX_GROUPS", "Chart", "day_key", "file_size_histogram", "partitions_by_key")

MAX_GROUPS = 400
ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")  # a day key's values charted per month beyond MAX_GROUPS days
#: Charts of a table with more partitions read its newest this many (by name, the bound found on Hive's name index).
MAX_PARTITIONS = 100_000
DAY_KEY_NAMES = ("dt", "ds", "date", "day", "event_date", "partition_date")
MIB = 1024 * 1024
# (label, upper bound of the average file size in bytes; None = no bound)
FILE_SIZE_BUCKETS: tuple[tuple[str, int | None], ...] = (
    ("< 1 MiB", MIB),
    ("1–16 MiB", 16 * MIB),
    ("16–64 MiB", 64 * MIB),
    ("64–256 MiB", 256 * MIB),
    ("≥ 256 MiB", None),
)
NO_STATISTICS = "no statistics"
NO_FILES = "no files"  # numFiles 0: the metastore records an empty partition (not an unknown one)


@dataclass(frozen=True)
class Chart:
    """A bar chart's data: one label per bar and one or more named series of the same length."""

    title: str
    x_label: str
    labels: list[str]
    series: dict[str, list[int]]
    truncated: bool = False

    def as_dict(self) -> dict[str, object]:
        return {
            "title": self.title,
            "x_label": self.x_label,
            "labels": self.labels,
            "series": self.series,
            "truncated": self.truncated,
        }


def day_key(keys: list[PartitionKey]) -> PartitionKey | None:
    """The key the partitions are counted by: a date-typed key, else one with a day-like name, else the first."""
    for key in keys:
        if (key.type or "").lower() == "date":
            return key
    for key in keys:
        if key.name.lower() in DAY_KEY_NAMES:
            return key
    return keys[0] if keys else None


def _charted(metastore: Metastore, table: Table) -> tuple[QuerySet, bool]:
    """The partitions a chart aggregates: all, or the newest MAX_PARTITIONS by name (and True) beyond that."""
    partitions = Partition.objects.using(metastore.alias).filter(table_id=table.id)
    boundary = partitions.order_by("-name").values_list("name", flat=True)[MAX_PARTITIONS - 1 : MAX_PARTITIONS]
    first = next(iter(boundary), None)
    if first is None or not partitions.filter(name__lt=first).exists():
        return partitions, False
    return partitions.filter(name__gte=first), True


def _number(field: str) -> Case:
    return Case(
        When(AllDigits(field), then=Cast(field, BigIntegerField())),
        default=Value(None),
        output_field=BigIntegerField(),
    )


def partitions_by_key(metastore: Metastore, table: Table, keys: list[PartitionKey]) -> tuple[Chart, Chart]:
    """Partitions per value of :func:`day_key` and their bytes, one GROUP BY; beyond MAX_GROUPS days (ISO dates) per
    month instead, so a year or more of days is charted whole rather than as its last MAX_GROUPS days."""
    key = day_key(keys)
    if key is None:
        empty = Chart("Partitions", "", [], {"partitions": []})
        return empty, Chart("Bytes", "", [], {"bytes": []})
    charted, bounded = _charted(metastore, table)
    rows = _groups(charted, key, F("kv__value"))
    period = key.name
    if len(rows) > MAX_GROUPS and all(ISO_DAY.match(row["group"] or "") for row in rows):
        rows = _groups(charted, key, Substr(F("kv__value"), 1, 7))
        period = f"month of {key.name}"
    truncated = len(rows) > MAX_GROUPS or bounded
    rows = rows[:MAX_GROUPS][::-1]
    labels = [row["group"] or "" for row in rows]
    return (
        Chart(f"Partitions per {period}", period, labels, {"partitions": [r["partitions"] for r in rows]}, truncated),
        Chart(f"Bytes per {period}", period, labels, {"bytes": [r["bytes"] or 0 for r in rows]}, truncated),
    )


def _groups(charted: QuerySet, key: PartitionKey, group: Any) -> list[dict[str, Any]]:
    """The partitions and bytes per ``group`` (an expression over the key's value ``kv__value``), the last
    MAX_GROUPS + 1 groups, descending."""
    return list(
        charted.alias(
            kv=FilteredRelation("key_values", condition=Q(key_values__position=key.position)),
            size=FilteredRelation("params", condition=Q(params__key="totalSize")),
        )
        .values(group=group)
        .annotate(partitions=Count("id"), bytes=Sum(_number("size__value")))
        .order_by("-group")[: MAX_GROUPS + 1]
    )


def file_size_histogram(metastore: Metastore, table: Table) -> Chart:
    """Partitions and files by average file size, from each partition's ``numFiles`` and ``totalSize``."""
    bucket = Case(
        *(
            When(Q(files__gt=0, size__lt=F("files") * Value(bound)), then=Value(label))
            for label, bound in FILE_SIZE_BUCKETS
            if bound is not None
        ),
        When(Q(files__gt=0, size__isnull=False), then=Value(FILE_SIZE_BUCKETS[-1][0])),
        When(files=0, then=Value(NO_FILES)),
        default=Value(NO_STATISTICS),
    )
    charted, bounded = _charted(metastore, table)
    rows = (
        charted.alias(
            files_param=FilteredRelation("params", condition=Q(params__key="numFiles")),
            size_param=FilteredRelation("params", condition=Q(params__key="totalSize")),
        )
        .alias(files=_number("files_param__value"), size=_number("size_param__value"))
        .values(bucket=bucket)
        .annotate(partitions=Count("id"), data_files=Sum("files"))
        .order_by()
    )
    found = {row["bucket"]: row for row in rows}
    labels = [label for label, _ in FILE_SIZE_BUCKETS] + [
        label for label in (NO_FILES, NO_STATISTICS) if label in found
    ]
    return Chart(
        "Average file size per partition (the metastore's numFiles and totalSize)"
        + (f" (the newest {MAX_PARTITIONS:,} by name)" if bounded else ""),
        "average file size",
        labels,
        {
            "partitions": [found.get(label, {}).get("partitions", 0) for label in labels],
            "files": [found.get(label, {}).get("data_files") or 0 for label in labels],
        },
        bounded,
    )
