"""The statements of a ``DROP PARTITION``: every dependent row deleted in FK order, by the ids the preview pinned
(execution keeps the deleted rows in the before-image)."""

from __future__ import annotations

from django.db import connections

from catalog_admin.models import (
    BucketingColumn,
    Column,
    ColumnDescriptor,
    Partition,
    PartitionColumnPrivilege,
    PartitionColumnStatistics,
    PartitionKeyValue,
    PartitionParam,
    PartitionPrivilege,
    SerDe,
    SerDeParam,
    SkewedColumnName,
    SkewedColumnValueLocation,
    SkewedValue,
    SortColumn,
    StorageDescriptor,
    StorageDescriptorParam,
)
from catalog_admin.selectors.metastores import Metastore
from operations.planners.partitions.chunks import chunks
from operations.preview import Step
from operations.sql import MetastoreSql

__all__ = ("drop_steps",)


def drop_steps(metastore: Metastore, sql: MetastoreSql, part_ids: list[int], sd_ids: list[int]) -> list[Step]:
    """Delete the partitions ``part_ids`` and their storage descriptors ``sd_ids`` with every dependent row, in FK
    order; SerDes and column descriptors only where no other storage descriptor uses them."""
    alias = metastore.alias
    steps: list[Step] = []
    by_partition = [
        PartitionColumnStatistics,
        PartitionParam,
        PartitionKeyValue,
        PartitionPrivilege,
        PartitionColumnPrivilege,
    ]
    by_sd = [
        StorageDescriptorParam,
        BucketingColumn,
        SortColumn,
        SkewedColumnName,
        SkewedColumnValueLocation,
        SkewedValue,
    ]
    for model in by_partition:
        steps += _delete_by_ids(alias, sql, model, "partition", part_ids, "the dropped partitions'")
    steps += _delete_by_ids(alias, sql, Partition, "id", part_ids, "")
    for model in by_sd:
        steps += _delete_by_ids(alias, sql, model, "sd", sd_ids, "their storage descriptors'")
    serde_ids = _unshared(alias, sql, StorageDescriptor, "serde_id", sd_ids)
    cd_ids = _unshared(alias, sql, StorageDescriptor, "cd_id", sd_ids)
    steps += _delete_by_ids(alias, sql, StorageDescriptor, "id", sd_ids, "")
    steps += _delete_by_ids(alias, sql, SerDeParam, "serde", serde_ids, "their SerDes'")
    steps += _delete_by_ids(alias, sql, SerDe, "id", serde_ids, "")
    steps += _delete_by_ids(alias, sql, Column, "cd", cd_ids, "unused descriptors'")
    steps += _delete_by_ids(alias, sql, ColumnDescriptor, "id", cd_ids, "")
    return steps


def _unshared(alias: str, sql: MetastoreSql, model: type, field: str, sd_ids: list[int]) -> list[int]:
    """Ids (SerDes or descriptors) used only by the storage descriptors being deleted: those whose rows are all among
    ``sd_ids``. Counted set-based, never one ORM ``IN`` of every id: one ``GROUP BY`` over all of ``sd_ids`` and one
    over the ids they use on PostgreSQL (an array parameter), per chunk of ids elsewhere (``sql.id_batches``)."""
    ids = sorted(set(sd_ids))
    if not ids:
        return []
    table, column, key = sql.table(model), sql.col(model, field), sql.col(model, "id")
    inside: dict[int, int] = {}
    for chunk in sql.id_batches(ids, list(chunks(ids))):
        where, params = sql.among_ids(key, chunk)
        for used, count in _grouped(
            alias,
            f"SELECT {column}, COUNT(*) FROM {table} WHERE {where} AND {column} IS NOT NULL GROUP BY {column}",
            params,
        ):
            inside[used] = inside.get(used, 0) + count
    total: dict[int, int] = {}
    used_ids = sorted(inside)
    for chunk in sql.id_batches(used_ids, list(chunks(used_ids))):
        where, params = sql.among_ids(column, chunk)
        for used, count in _grouped(
            alias, f"SELECT {column}, COUNT(*) FROM {table} WHERE {where} GROUP BY {column}", params
        ):
            total[used] = count
    return sorted(used for used, count in inside.items() if total.get(used) == count)


def _grouped(alias: str, query: str, params: list) -> list[tuple[int, int]]:
    with connections[alias].cursor() as cursor:
        cursor.execute(query, params)
        return [(int(used), int(count)) for used, count in cursor.fetchall()]


def _delete_by_ids(alias: str, sql: MetastoreSql, model: type, field: str, ids: list[int], whose: str) -> list[Step]:
    if not ids or not _has_rows(alias, sql, model):
        return []
    table = model._meta.db_table
    column = sql.col(model, field) if field != "id" else sql.col(model, "id")
    steps = []
    chunked = list(chunks(ids))
    # raw SQL, not the ORM's IN (it prepares each of the 5,000 values in Python); one statement per table on PostgreSQL
    for chunk, count in zip(chunked, sql.counts_per_chunk(sql.table(model), column, chunked), strict=True):
        placeholders = ", ".join(["%s"] * len(chunk))
        where = f"WHERE {column} IN ({placeholders})"
        if not count:
            continue
        steps.append(
            Step(
                f"Delete {count} {table} rows ({whose or 'the'} rows)".replace("  ", " "),
                table,
                "delete",
                f"DELETE FROM {sql.table(model)} {where}",
                tuple(chunk),
                count,
            )
        )
    return steps


def _has_rows(alias: str, sql: MetastoreSql, model: type) -> bool:
    """Whether the table has a row at all: an empty one (skewed values, per-partition privileges and SD_PARAMS
    often are) deletes nothing and needs no count per chunk of ids (issue 29: 20 chunks of 5,000 ids each)."""
    with connections[alias].cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {sql.table(model)} LIMIT 1")
        return cursor.fetchone() is not None
