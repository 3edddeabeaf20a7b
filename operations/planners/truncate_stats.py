"""
The statistics a ``TRUNCATE TABLE`` resets, as Hive's metastore does (``HMSHandler.updateStatsForTruncate``, 3.1 and
4.0): every basic statistic the table or partition has (``StatsSetupConst.SUPPORTED_STATS``: numFiles, numRows,
totalSize, rawDataSize, and 4.0's numFilesErasureCoded) set to ``0`` where present, ``COLUMN_STATS_ACCURATE`` set to
``{"BASIC_STATS":"true"}`` (``setBasicStatsState(TRUE)`` writes it when missing, then ``clearColumnStatsState``
removes its column part), and the column statistics rows of the truncated table or partitions deleted (they describe
rows that are gone; Hive keeps them, unflagged: the console deletes them rather than leave rows no flag vouches for).
Measured with Hive 2.3's own Driver (``tests/witness/test_spark_truncate.py``): 2.3 writes the same flag but leaves
``numFiles``/``totalSize`` counting the files it deleted; the console writes 0 on every version, as 3.1 and 4.0 do.

Set-based, per chunk of owners: one UPDATE of the present keys (its old rows captured for the revert), one INSERT of
the flag where it was missing (the revert deletes those: ``inverse["replaced_params"]``), one DELETE of the column
statistics (its rows kept in the before-image).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Model

from catalog_admin.hive.statistics import BASIC_STAT_KEYS, COLUMN_STATS_ACCURATE, accurate_flags
from catalog_admin.models import (
    Partition,
    PartitionColumnStatistics,
    PartitionParam,
    Table,
    TableColumnStatistics,
    TableParam,
)
from catalog_admin.selectors.metastores import Metastore
from operations.planners.partitions.chunks import chunks
from operations.preview import NewWriteId, Step
from operations.sql import MetastoreSql

__all__ = ("ERASURE_CODED", "TruncatedStats", "reset_keys", "truncate_stats_steps", "write_id_steps")

ERASURE_CODED = "numFilesErasureCoded"


class TruncatedStats:
    """The steps resetting the statistics of some owners, and what the revert must delete (the inserted flags)."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.flags_inserted: list[int] = []
        self.column_statistics: int = 0


def reset_keys(metastore: Metastore) -> tuple[str, ...]:
    """The basic statistics Hive's truncate sets to 0 on this version (4.0 counts erasure-coded files too)."""
    extra = (ERASURE_CODED,) if metastore.schema.capabilities.quick_stats_count_erasure_coded_files else ()
    return (*BASIC_STAT_KEYS, *extra)


def truncate_stats_steps(metastore: Metastore, owner_ids: Sequence[int], *, partitioned: bool) -> TruncatedStats:
    """The statements resetting the statistics of ``owner_ids`` (partition ids, or the one table id)."""
    sql = MetastoreSql(metastore.alias)
    params, owner_model, owner = (PartitionParam, Partition, "partition") if partitioned else (TableParam, Table,
                                                                                                "table")  # fmt: skip
    stats_model = PartitionColumnStatistics if partitioned else TableColumnStatistics
    keys, flag = reset_keys(metastore), accurate_flags()
    result = TruncatedStats()
    for chunk in chunks(sorted(owner_ids)):
        ids = ", ".join(["%s"] * len(chunk))
        present, missing = _present_and_missing(metastore, params, owner, chunk, keys)
        key_col, value_col, owner_col = sql.col(params, "key"), sql.col(params, "value"), sql.col(params, owner)
        where = f"{owner_col} IN ({ids}) AND {key_col} IN ({', '.join(['%s'] * (len(keys) + 1))})"
        where_params = (*chunk, *keys, COLUMN_STATS_ACCURATE)
        if present:
            result.steps.append(
                Step(f"Reset the statistics of {len(chunk)} {owner}(s)", params._meta.db_table, "update",
                     f"UPDATE {sql.table(params)} SET {value_col} = CASE WHEN {key_col} = %s THEN %s ELSE '0' END "
                     f"WHERE {where}", (COLUMN_STATS_ACCURATE, flag, *where_params), present,
                     before_sql=f"SELECT {owner_col}, {key_col}, {value_col} FROM {sql.table(params)} WHERE {where}",
                     before_params=where_params)
            )  # fmt: skip
        if missing:
            result.flags_inserted += missing
            result.steps.append(_insert_flags(sql, params, owner_model, owner, missing, flag))
        counted = stats_model.objects.using(metastore.alias).filter(**{f"{owner}_id__in": chunk}).count()
        if counted:
            result.column_statistics += counted
            result.steps.append(
                Step(f"Delete {counted} column statistics row(s) of {len(chunk)} {owner}(s)",
                     stats_model._meta.db_table, "delete",
                     f"DELETE FROM {sql.table(stats_model)} WHERE {sql.col(stats_model, owner)} IN ({ids})",
                     tuple(chunk), counted)
            )  # fmt: skip
    return result


def write_id_steps(metastore: Metastore, owner_ids: Sequence[int], *, partitioned: bool) -> list[Step]:
    """The truncated partitions' (or the table's) ``WRITE_ID`` set to the write id the execution allocates (Hive 4:
    ``alterTableStatsForTruncate`` sets it with the reset statistics), their old values captured for the revert."""
    sql = MetastoreSql(metastore.alias)
    model, owner = (Partition, "partition") if partitioned else (Table, "table")
    id_col, write_col = sql.col(model, "id"), sql.col(model, "write_id")
    steps = []
    for chunk in chunks(sorted(owner_ids)):
        where = f"{id_col} IN ({', '.join(['%s'] * len(chunk))})"
        steps.append(
            Step(f"Set the write id of {len(chunk)} {owner}(s)", model._meta.db_table, "update",
                 f"UPDATE {sql.table(model)} SET {write_col} = %s WHERE {where}", (NewWriteId(), *chunk), len(chunk),
                 before_sql=f"SELECT {id_col}, {write_col} FROM {sql.table(model)} WHERE {where}",
                 before_params=tuple(chunk))
        )  # fmt: skip
    return steps


def _present_and_missing(
    metastore: Metastore, params: type, owner: str, chunk: list[int], keys: tuple[str, ...]
) -> tuple[int, list[int]]:
    """How many of the keys (and flags) the owners have, and the owners without a flag (one query)."""
    rows = params.objects.using(metastore.alias).filter(  # type: ignore[attr-defined]
        **{f"{owner}_id__in": chunk, "key__in": (*keys, COLUMN_STATS_ACCURATE)}
    )
    pairs = list(rows.values_list(f"{owner}_id", "key"))
    flagged = {oid for oid, key in pairs if key == COLUMN_STATS_ACCURATE}
    return len(pairs), [oid for oid in chunk if oid not in flagged]


def _insert_flags(
    sql: MetastoreSql, params: type[Model], owner_model: type[Model], owner: str, missing: list[int], flag: str
) -> Step:
    """``COLUMN_STATS_ACCURATE`` for the owners without one, from their own rows (no row per parameter)."""
    key_col, value_col, owner_col = sql.col(params, "key"), sql.col(params, "value"), sql.col(params, owner)
    source_id = sql.col(owner_model, "id")
    return Step(
        f"Mark the statistics of {len(missing)} {owner}(s) accurate", params._meta.db_table, "insert",
        f"INSERT INTO {sql.table(params)} ({owner_col}, {key_col}, {value_col}) "
        f"SELECT {source_id}, %s, %s FROM {sql.table(owner_model)} "
        f"WHERE {source_id} IN ({', '.join(['%s'] * len(missing))})",
        (COLUMN_STATS_ACCURATE, flag, *missing), len(missing),
    )  # fmt: skip
