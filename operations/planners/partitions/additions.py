"""
What ``ADD PARTITION`` and ``MSCK REPAIR TABLE`` share: the table's partitions read once (names, ids, locations), the
values Hive refuses (``hive.typecheck.on.insert``'s typed values, the name whitelist), the quick statistics Hive gives
a partition whose directory existed, the natural order of names, and the preview's listing of what is added.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from catalog_admin.hive.partition_names import HIVE_DEFAULT_PARTITION
from catalog_admin.models import Partition
from catalog_admin.selectors.metastores import Metastore
from operations.planners.partitions.add_rows import NewPartitionRow
from operations.preview import AffectedPartition, PartitionsAffected
from operations.rules import Finding
from operations.table_state import ColumnInfo, TableState

__all__ = (
    "SAMPLE",
    "Existing",
    "added_listing",
    "created_partition_stats",
    "existing_partitions",
    "natural_key",
    "quick_stats_params",
    "value_type_findings",
)

SAMPLE = 20  # partitions listed in a preview (the first in natural order); the counts cover all
INTEGRAL = frozenset({"tinyint", "smallint", "int", "integer", "bigint"})
FRACTIONAL = frozenset({"float", "double", "decimal", "real"})
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


@dataclass(frozen=True)
class Existing:
    """A partition the table has: id, name, storage descriptor and location."""

    id: int
    name: str
    sd_id: int | None
    location: str | None


def existing_partitions(metastore: Metastore, state: TableState) -> list[Existing]:
    """Every partition of the table, one query, by name."""
    rows = Partition.objects.using(metastore.alias).filter(table_id=state.table_id)
    found = rows.order_by("name").values_list("id", "name", "sd_id", "sd__location").iterator()
    return [Existing(int(part_id), str(name), sd_id, location) for part_id, name, sd_id, location in found]


def value_type_findings(keys: Sequence[ColumnInfo], values: Sequence[str]) -> list[Finding]:
    """``BaseSemanticAnalyzer.validatePartColumnType`` (``hive.typecheck.on.insert``, on by default): each value must
    convert to its key's type; the default partition's name converts to any."""
    findings = []
    for key, value in zip(keys, values, strict=True):
        kind = key.type.split("(", 1)[0].strip().lower()
        if value == HIVE_DEFAULT_PARTITION or _converts(kind, value.strip()):
            continue
        findings.append(
            Finding(
                "partition_value_type",
                "ddl",
                f"Partition value '{value}' of {key.name} does not convert to its type {key.type} "
                "(Hive: partition spec has a type mismatch).",
            )
        )
    return findings


def _converts(kind: str, value: str) -> bool:
    if kind in INTEGRAL:
        return re.fullmatch(r"[+-]?\d+", value) is not None
    if kind in FRACTIONAL:
        return _NUMBER.fullmatch(value) is not None
    if kind == "date":
        try:
            date.fromisoformat(value[:10])
        except ValueError:
            return False
        return True
    return True  # string, varchar, char, boolean, timestamp …: Hive's converters accept the text as it is


def quick_stats_params(files: int, size: int, metastore: Metastore) -> tuple[tuple[str, str], ...]:
    """``updatePartitionStatsFast`` for a directory that existed (``populateQuickStats``; hive.stats.autogather on by
    default): ``numFiles``, ``totalSize`` (and ``numFilesErasureCoded`` on 4.x); basic statistics not accurate."""
    params = [("numFiles", str(files)), ("totalSize", str(size))]
    if metastore.schema.capabilities.quick_stats_count_erasure_coded_files:
        params.append(("numFilesErasureCoded", "0"))
    return tuple(sorted(params))


def created_partition_stats(metastore: Metastore) -> tuple[tuple[str, str], ...]:
    """``StatsSetupConst.setBasicStatsStateForCreateTable(params, TRUE)``: every basic statistic 0, accurate."""
    zeros = ["numFiles", "numRows", "rawDataSize", "totalSize"]
    if metastore.schema.capabilities.quick_stats_count_erasure_coded_files:
        zeros.append("numFilesErasureCoded")
    return tuple(sorted([("COLUMN_STATS_ACCURATE", '{"BASIC_STATS":"true"}'), *((key, "0") for key in zeros)]))


def natural_key(keys: Sequence[ColumnInfo]):  # noqa: ANN201 - a sort key function
    """A sort key of partition values in the natural order (integral keys numerically, as the partitions browser)."""
    integral = [key.type.strip().lower() in INTEGRAL for key in keys]

    def key(values: Iterable[str]) -> tuple:
        return tuple(
            (0, int(v), "") if numeric and re.fullmatch(r"-?\d+", v) else (1, 0, v)
            for numeric, v in zip(integral, values, strict=False)
        )

    return key


def added_listing(
    rows: Sequence[NewPartitionRow],
    sizes: dict[str, tuple[int, int]],
    dropped: Sequence[Existing],
    keys: Sequence[ColumnInfo],
    data: str,
) -> PartitionsAffected:
    """The partitions a plan adds (and drops), the first :data:`SAMPLE` of each in natural order, bytes to add."""
    order = natural_key(keys)
    first_added = heapq.nsmallest(SAMPLE, rows, key=lambda r: order(r.values))
    listed = [
        AffectedPartition(r.name, r.location, None, sizes.get(r.name, (0, 0))[1], sizes.get(r.name, (0, 0))[0], "added")
        for r in first_added
    ]
    first_dropped = heapq.nsmallest(SAMPLE, dropped, key=lambda p: order(_values(p.name)))
    listed += [
        AffectedPartition(p.name, p.location, None, None, None, "dropped: directory missing") for p in first_dropped
    ]
    action = "added" if not dropped else ("dropped" if not rows else "added and dropped")
    return PartitionsAffected(
        action=action,
        count=len(rows) + len(dropped),
        rows=None,
        bytes=sum(size for _files, size in sizes.values()),
        listed=tuple(listed),
        data=data,
    )


def _values(name: str) -> list[str]:
    return [part.partition("=")[2] for part in name.split("/")]
