"""
``ALTER TABLE dest EXCHANGE PARTITION (k='v', …) WITH TABLE source``: the source's partitions matching the (possibly
partial) spec move to ``dest``, and their data directory with them (``HMSHandler.exchange_partitions``, 2.3 to 4.0).

Hive's rules, each a blocker with Hive's words: both tables partitioned, neither transactional ("Exchange partition
is not allowed with transactional tables"), the same columns and partition keys (``compareFieldColumns``: names and
types), at least one matching source partition, none of them already in ``dest``. Hive renames one directory,
``<source root>/<spec's part name>`` to ``<dest root>/<the same>``, and points every moved partition at
``<dest root>/<its name>``; the console does the same, and refuses a partition whose data is not under that
directory (it would point at a directory that does not hold its data) or a destination that exists.

Hive copies each partition into ``dest`` (new ids) and drops it from ``source`` (its column statistics with it);
the console re-parents the same rows in one set-based statement per table, so ids are kept, and re-labels the
statistics instead of deleting them (a documented difference, as for RENAME). Events: one ``ADD_PARTITION`` of all
of them on ``dest``, then one ``DROP_PARTITION`` per partition on ``source`` (``exchange_partitions``' transactional
listeners). The revert is the exchange back.
"""

from __future__ import annotations

from catalog_admin.errors import ApplicationError
from catalog_admin.hive.partition_names import partition_name
from catalog_admin.locations import filesystem_for
from catalog_admin.models import Partition, PartitionColumnStatistics, StorageDescriptor
from catalog_admin.selectors.metastores import Metastore
from operations.containment import MoveContext, canonical
from operations.planners.common import acid_warnings, build_preview, snapshot
from operations.preview import DirectoryMove, Preview, Step
from operations.rules import Finding
from operations.specs import ExchangePartition
from operations.sql import MetastoreSql
from operations.table_state import TableState, read_table_state

__all__ = ("plan_exchange_partition",)

RULE = "exchange"
CHUNK = 1000


def plan_exchange_partition(
    metastore: Metastore, state: TableState, spec: ExchangePartition, *, only: list[int] | None = None
) -> Preview:
    """The plan moving ``spec.source``'s matching partitions to ``state`` (the destination): a pure read.

    ``only``: the partitions an exchange moved, for its revert (the exchange back): other matching partitions
    (added since) block it."""
    source, blockers = _source(metastore, spec)
    if source is not None:
        blockers += _table_blockers(state, source, spec)
    partitions = _matching(metastore, source, spec) if source is not None and not blockers else []
    if source is not None and not blockers and not partitions:
        blockers.append(
            Finding(
                "no_partition",
                RULE,
                f"No partition is found with the values {_java_map(spec)} for the table {source.ref.table}",
            )
        )
    if blockers or source is None:
        return build_preview(metastore, state, spec, steps=[], after=snapshot(state), blockers=blockers)
    blockers += _existing_blockers(metastore, state, partitions)
    if only is not None and sorted(p["id"] for p in partitions) != sorted(only):
        blockers.append(Finding("partitions_changed", RULE, f"The partitions matching the spec in {source.ref} are no "
                                "longer those the exchange moved: exchange them back with Hive, or revert the later "
                                "change first."))  # fmt: skip
    keys = [k.name for k in source.partition_keys]
    prefix = partition_name([(k, dict(spec.partition)[k]) for k in keys if k in dict(spec.partition)])
    source_dir, dest_dir = _under(source.location, prefix), _under(state.location, prefix)
    blockers += _outside_blockers(partitions, source.location, source_dir)
    move, move_blockers = _move(source_dir, dest_dir, len(partitions))
    blockers += move_blockers
    sql = MetastoreSql(metastore.alias)
    steps = [] if blockers else _steps(metastore, sql, state, source, partitions)
    ids = [p["id"] for p in partitions]
    return build_preview(
        metastore,
        state,
        spec,
        steps=steps,
        after=snapshot(state),
        blockers=blockers,
        warnings=acid_warnings(metastore, source),
        moves=(move,) if move else (),
        move_contexts={
            source_dir: MoveContext(
                sd_ids=frozenset(p["sd_id"] for p in partitions),
                enclosing=frozenset(sd for sd in (source.sd_id, state.sd_id) if sd is not None),
                leaf=prefix,
                leaf_segments=prefix.count("/") + 1,
            )
        },
        partitions_touched=len(partitions),
        inverse={
            "source": {"database": source.ref.database, "table": source.ref.table},
            "partition_ids": ids,
            "source_table_id": source.table_id,
        },
    )


def _source(metastore: Metastore, spec: ExchangePartition) -> tuple[TableState | None, list[Finding]]:
    try:
        return read_table_state(metastore, spec.source), []
    except ApplicationError:
        return None, [Finding("unknown_table", RULE, f"Table not found {spec.source.database}.{spec.source.table}")]


def _table_blockers(dest: TableState, source: TableState, spec: ExchangePartition) -> list[Finding]:
    blockers = []
    if dest.is_transactional or source.is_transactional:
        blockers.append(
            Finding(
                "acid_exchange",
                RULE,
                "Exchange partition is not allowed with transactional tables. "
                "Alternatively, shall use load data or insert overwrite to move partitions.",
            )
        )
    if dest.is_view or source.is_view or not source.partition_keys or not dest.partition_keys:
        blockers.append(Finding("not_partitioned", RULE, "Both tables must be partitioned tables (not views)."))
    same_columns = [(c.name, c.type) for c in dest.columns] == [(c.name, c.type) for c in source.columns]
    same_keys = [(k.name, k.type) for k in dest.partition_keys] == [(k.name, k.type) for k in source.partition_keys]
    if not (same_columns and same_keys):
        blockers.append(
            Finding(
                "different_schemas", RULE, "The tables have different schemas. Their partitions cannot be exchanged."
            )
        )
    unknown = sorted(set(dict(spec.partition)) - {k.name for k in source.partition_keys})
    if unknown:
        blockers.append(
            Finding(
                "partition_spec",
                RULE,
                f"{', '.join(unknown)} is not a partition key of {source.ref.database}.{source.ref.table}",
            )
        )
    given = [k.name in dict(spec.partition) for k in source.partition_keys]
    if not unknown and given != sorted(given, reverse=True):  # DDLSemanticAnalyzer: the keys given are a prefix
        blockers.append(Finding("partition_spec", RULE, "Partition values specified are not continuous. A "
                                "subpartition value is specified without specifying the parent partition's value "
                                f"{_java_map(spec)}"))  # fmt: skip
    if (dest.ref.database, dest.ref.table) == (source.ref.database, source.ref.table):
        blockers.append(Finding("same_table", RULE, "A table cannot exchange partitions with itself."))
    return blockers


def _matching(metastore: Metastore, source: TableState | None, spec: ExchangePartition) -> list[dict]:
    """The source's partitions whose values match the spec (one join per key given, on PARTITION_KEY_VALS)."""
    assert source is not None
    positions = {k.name: i for i, k in enumerate(source.partition_keys)}
    partitions = Partition.objects.using(metastore.alias).filter(table_id=source.table_id)
    for key, value in spec.partition:
        partitions = partitions.filter(key_values__position=positions[key], key_values__value=value)
    rows = partitions.order_by("id").values("id", "name", "sd_id", "sd__location", "sd__cd_id")
    return [
        {"id": r["id"], "name": r["name"], "sd_id": r["sd_id"], "location": r["sd__location"], "cd_id": r["sd__cd_id"]}
        for r in rows
    ]


def _existing_blockers(metastore: Metastore, dest: TableState, partitions: list[dict]) -> list[Finding]:
    names = [p["name"] for p in partitions]
    existing = Partition.objects.using(metastore.alias).filter(table_id=dest.table_id, name__in=names)
    return [
        Finding("partition_exists", RULE, f"The partition {name} already exists in the table {dest.ref.table}")
        for name in existing.order_by("name").values_list("name", flat=True)
    ]


def _under(root: str | None, prefix: str) -> str:
    return f"{(root or '').rstrip('/')}/{prefix}"


def _outside_blockers(partitions: list[dict], source_root: str | None, source_dir: str) -> list[Finding]:
    """Partitions whose data is not at ``<source root>/<name>``, inside the directory Hive moves."""
    root = (source_root or "").rstrip("/")
    outside = [p["name"] for p in partitions if canonical(p["location"] or "") != canonical(f"{root}/{p['name']}")]
    if not outside:
        return []
    return [
        Finding(
            "partition_outside",
            RULE,
            f"{len(outside)} partition(s) (first: {', '.join(outside[:5])}) keep "
            f"their data outside {source_dir}, the directory Hive moves: they would point at a directory "
            "that does not hold their data. Move them under the table root first (SET LOCATION … WITH "
            "DATA).",
        )
    ]


def _move(source: str, destination: str, partitions: int) -> tuple[DirectoryMove | None, list[Finding]]:
    filesystem = filesystem_for(source)
    exists, taken = filesystem.exists(source), filesystem_for(destination).exists(destination)
    blockers = []
    if exists is None:
        blockers.append(Finding("filesystem_unreachable", RULE, f"The console cannot check or move {source}."))
    if taken:
        blockers.append(
            Finding("destination_exists", RULE, f"{destination} already exists: Hive would move the data inside it.")
        )
    if not exists:
        return None, blockers
    size = filesystem.tree_size(source)
    return DirectoryMove(
        source=source,
        destination=destination,
        partitions_moving=partitions,
        partitions_staying=0,
        files=size.files if size else None,
        bytes=size.bytes if size else None,
        source_exists=True,
        destination_free=None if taken is None else not taken,
        same_filesystem=True,
    ), blockers


def _steps(
    metastore: Metastore, sql: MetastoreSql, dest: TableState, source: TableState, partitions: list[dict]
) -> list[Step]:
    """Re-parent the partitions, point each at ``<dest root>/<name>`` (the destination's column descriptor where it
    used the source's), and re-label their statistics with the destination's names."""
    steps: list[Step] = []
    root = (dest.location or "").rstrip("/")
    for start in range(0, len(partitions), CHUNK):
        chunk = partitions[start : start + CHUNK]
        ids, sds = [p["id"] for p in chunk], [p["sd_id"] for p in chunk]
        marks = ", ".join(["%s"] * len(chunk))
        steps.append(
            Step(
                f"Move {len(chunk)} partition(s) to {dest.ref}",
                "PARTITIONS",
                "update",
                f"UPDATE {sql.table(Partition)} SET {sql.col(Partition, 'table')} = %s "
                f"WHERE {sql.col(Partition, 'id')} IN ({marks})",
                (dest.table_id, *ids),
                len(chunk),
            )
        )
        cases = " ".join(f"WHEN {sql.col(StorageDescriptor, 'id')} = %s THEN %s" for _ in chunk)
        params = [v for p in chunk for v in (p["sd_id"], f"{root}/{p['name']}")]
        steps.append(
            Step(
                f"Point {len(chunk)} partition(s) under {root}",
                "SDS",
                "update",
                f"UPDATE {sql.table(StorageDescriptor)} SET {sql.col(StorageDescriptor, 'location')} = CASE "
                f"{cases} END WHERE {sql.col(StorageDescriptor, 'id')} IN ({marks})",
                (*params, *sds),
                len(chunk),
            )
        )
        shared = [p["sd_id"] for p in chunk if p["cd_id"] == source.cd_id and source.cd_id != dest.cd_id]
        if shared:
            steps.append(
                Step(
                    f"Give {len(shared)} partition(s) the destination's columns",
                    "SDS",
                    "update",
                    f"UPDATE {sql.table(StorageDescriptor)} SET {sql.col(StorageDescriptor, 'cd')} = %s "
                    f"WHERE {sql.col(StorageDescriptor, 'id')} IN ({', '.join(['%s'] * len(shared))})",
                    (dest.cd_id, *shared),
                    len(shared),
                )
            )
        steps += _statistics_steps(metastore, sql, dest, ids, marks)
    return steps


def _statistics_steps(metastore: Metastore, sql: MetastoreSql, dest: TableState, ids: list[int], marks: str) -> list:
    """PART_COL_STATS are labelled with their table's names before 4.0: re-label them (Hive deletes them)."""
    rows = PartitionColumnStatistics.objects.using(metastore.alias).filter(partition_id__in=ids).count()
    if not rows or not metastore.schema.has(PartitionColumnStatistics, "db_name"):
        return []
    stats = PartitionColumnStatistics
    return [
        Step(
            f"Re-label {rows} column statistics row(s) to {dest.ref}",
            "PART_COL_STATS",
            "update",
            f"UPDATE {sql.table(stats)} SET {sql.col(stats, 'db_name')} = %s, {sql.col(stats, 'table_name')} = %s "
            f"WHERE {sql.col(stats, 'partition')} IN ({marks})",
            (dest.ref.database, dest.ref.table, *ids),
            rows,
        )
    ]


def _java_map(spec: ExchangePartition) -> str:
    """The spec as Hive prints its ``Map<String, String>``."""
    return "{" + ", ".join(f"{k}={v}" for k, v in spec.partition) + "}"
