"""
Which partitions a DROP PARTITION or a partition rename affects, with their rows and bytes, and what happens to
their data: the listing a steward reads before approving (``Preview.affected``).

Counts and totals cover every affected partition (``numRows`` and ``totalSize`` from PARTITION_PARAMS, read in
chunks of ids); the listing itself is bounded (the first :data:`LISTED` by name), so a 100,000-partition drop shows
a count and the first page instead of every name.

What Hive does with a dropped partition's data (``HiveMetaStore.drop_partition_common`` with ``deleteData``, 2.3 to
4.0): an external table keeps its files; a managed table's directory is deleted through ``Warehouse.deleteDir``,
into the file system's trash (kept ``fs.trash.interval`` minutes) unless ``isMustPurge``: ``PURGE`` was given
(``ifPurge``) or the table has ``auto.purge=true``, then it is deleted outright. The console never deletes: it moves
the directory to its own trash with a journaled move (a revert moves it back), and nothing empties that trash.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.db import connections

from catalog_admin.locations import TreeSize
from catalog_admin.models import PartitionParam
from catalog_admin.selectors.metastores import Metastore
from operations.planners.partitions.chunks import chunks
from operations.planners.partitions.directories import TRASH_DIR
from operations.planners.partitions.trash import TrashPlan
from operations.preview import AffectedPartition, DirectoryMove, PartitionsAffected
from operations.specs import DropPartitions
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = ("LISTED", "dropped_partitions", "partition_statistics", "renamed_partition")

LISTED = 100
_STATISTICS = ("numRows", "totalSize")


def dropped_partitions(
    state: TableState,
    spec: DropPartitions,
    matched: list[dict],
    trash: TrashPlan,
    statistics: Mapping[int, Mapping[str, int]],
) -> PartitionsAffected:
    """The partitions a DROP PARTITION removes (``matched``: id, name, ``sd__location``; by name), each with its
    place in the trash (``trash``: :func:`~operations.planners.partitions.trash.trash_plan`) and its numeric
    statistics (:func:`partition_statistics`)."""
    listed = tuple(
        _affected(p, statistics.get(p["id"], {}), _size(trash, p), _drop_fate(state, p, trash))
        for p in matched[:LISTED]
    )
    return PartitionsAffected(
        action="dropped",
        count=len(matched),
        rows=_total(statistics, "numRows"),
        bytes=_total_bytes(matched, statistics, trash),
        listed=listed,
        data=_console_drop(state, trash),
        hive_data=_hive_drop(state, spec),
    )


def renamed_partition(
    metastore: Metastore, state: TableState, partition: Mapping, new_name: str, move: DirectoryMove | None
) -> PartitionsAffected:
    """The one partition a rename relabels (``partition``: id, name, location)."""
    statistics = partition_statistics(metastore, [partition["id"]]).get(partition["id"], {})
    row = {"name": partition["name"], "sd__location": partition["location"]}
    if move is not None:
        fate = f"moves to {move.destination} (journaled; a revert moves it back)"
    elif state.is_external:
        fate = "stays where it is (external table); only the name changes"
    else:
        fate = "stays where it is: only the metadata changes"
    size = None
    if move is not None and move.files is not None and move.bytes is not None:
        size = TreeSize(files=move.files, bytes=move.bytes)
    listed = (_affected(row, statistics, size, fate, new_name),)
    return PartitionsAffected(
        action="renamed",
        count=1,
        rows=listed[0].rows,
        bytes=listed[0].bytes,
        listed=listed,
        data=f"The partition keeps its statistics; its data {fate}.",
    )


def _affected(
    partition: Mapping, statistics: Mapping[str, int], size: TreeSize | None, fate: str, new_name: str = ""
) -> AffectedPartition:
    return AffectedPartition(
        name=partition["name"],
        location=partition["sd__location"],
        rows=statistics.get("numRows"),
        bytes=size.bytes if size is not None else statistics.get("totalSize"),
        files=size.files if size is not None else None,
        fate=fate,
        new_name=new_name,
    )


def _size(trash: TrashPlan, partition: Mapping) -> TreeSize | None:
    place = trash.placed.get(partition["sd__location"] or "")
    return place[1] if place is not None else None


def _drop_fate(state: TableState, partition: Mapping, trash: TrashPlan) -> str:
    if state.is_external:
        return "files kept (external table)"
    place = trash.placed.get(partition["sd__location"] or "")
    return f"to the trash: {place[0]}" if place is not None else "no directory on disk: metadata only"


def _console_drop(state: TableState, trash: TrashPlan) -> str:
    if state.is_external:
        return "The table is external: the console drops the partitions' metadata and leaves every file where it is."
    root = f"{state.database_location.rstrip('/')}/{TRASH_DIR}/{state.ref.table}/"
    count, moves = len(trash.placed), len(trash.moves)
    grouped = f" ({moves:,} moves: a folder whose every partition is dropped moves whole)" if moves < count else ""
    return (
        f"The console never deletes data: it moves {count:,} partition director"
        f"{'y' if count == 1 else 'ies'} into its trash under {root} with a journaled move{grouped}, in the same "
        "change (a revert moves them back). PURGE and auto.purge do not delete here, and nothing empties the "
        "console's trash: it is kept until an operator removes it."
    )


def _hive_drop(state: TableState, spec: DropPartitions) -> str:
    if state.is_external:
        return "Hive keeps an external table's files too."
    auto_purge = (state.params.get("auto.purge") or "").lower() == "true"
    if spec.purge or auto_purge:
        why = "PURGE" if spec.purge else "auto.purge=true"
        return f"Hive would delete the directories outright ({why}: they would skip the file system's trash)."
    return (
        "Hive would delete the directories into the file system's trash (.Trash of the user), kept for "
        "fs.trash.interval minutes, then gone."
    )


def partition_statistics(metastore: Metastore, ids: list[int]) -> dict[int, dict[str, int]]:
    """``{partition id: {"numRows": n, "totalSize": b}}`` for the numeric statistics the partitions have."""
    found: dict[int, dict[str, int]] = {}
    sql = MetastoreSql(metastore.alias)
    owner, key_column = sql.col(PartitionParam, "partition"), sql.col(PartitionParam, "key")
    columns = f"{owner}, {key_column}, {sql.col(PartitionParam, 'value')}"
    for chunk in chunks(ids):  # raw SQL: the ORM's IN prepares each of the 5,000 values in Python
        among, params = sql.among_ids(owner, chunk)
        query = f"SELECT {columns} FROM {sql.table(PartitionParam)} WHERE {among} AND {key_column} IN (%s, %s)"
        with connections[metastore.alias].cursor() as cursor:
            cursor.execute(query, [*params, *_STATISTICS])
            rows = cursor.fetchall()
        for partition_id, key, value in rows:
            if value is not None and value.strip().lstrip("-").isdigit():
                found.setdefault(partition_id, {})[key] = int(value)
    return found


def _total(statistics: Mapping[int, Mapping[str, int]], key: str) -> int | None:
    values = [s[key] for s in statistics.values() if key in s]
    return sum(values) if values else None


def _total_bytes(matched: list[dict], statistics: Mapping[int, Mapping[str, int]], trash: TrashPlan) -> int | None:
    """Bytes on disk where the directory was measured, else the ``totalSize`` statistic."""
    sizes = []
    for partition in matched:
        measured = _size(trash, partition)
        size = measured.bytes if measured is not None else statistics.get(partition["id"], {}).get("totalSize")
        if size is not None:
            sizes.append(size)
    return sum(sizes) if sizes else None
