"""
Reads the API needs that ``catalog_admin.selectors`` does not offer yet: a table's partition keys and one
partition in full. They follow the selectors' conventions (explicit metastore, deferred missing columns) and
belong in ``catalog_admin/selectors/partitions.py`` once its owner takes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catalog_admin.hive_params import parse_stats_accurate, stats_freshness
from catalog_admin.locations import filesystem_for, is_under
from catalog_admin.models import Partition, PartitionColumnStatistics, PartitionKey, PartitionParam, Table
from catalog_admin.selectors.metastores import Metastore
from catalog_admin.selectors.partitions import get_partition, partition_column_statistics, partition_values

__all__ = ("PartitionDetail", "get_partition_detail", "int_param", "table_partition_keys")


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


def int_param(value: str | None) -> int | None:
    """An integer-valued Hive parameter (numFiles …); None when absent or not a number."""
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None
