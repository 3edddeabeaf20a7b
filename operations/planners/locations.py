"""
Location changes, metadata only: ``SET LOCATION`` of a table or a partition, and the console's bulk
rewrite of partition locations by prefix. No data is moved (copying data is a Spark job); Hive does
not move partitions when a table's location changes either (rule 10.5).
"""

from __future__ import annotations

from collections.abc import Sequence

from catalog_admin.hive.partition_names import partition_name
from catalog_admin.hive.statistics import COLUMN_STATS_ACCURATE
from catalog_admin.locations import filesystem_for
from catalog_admin.models import Partition, PartitionParam, StorageDescriptor, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.containment import MoveContext, new_location_blockers
from operations.planners.common import (
    build_preview,
    hive_seconds,
    param_delete_steps,
    param_upsert_steps,
    replication_source,
    snapshot,
)
from operations.planners.spark_tables import path_steps, serde_params_after
from operations.preview import HiveComparison, Preview, Step, TableSnapshot
from operations.rules import Finding
from operations.specs import RewritePartitionLocations, SetLocation
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = ("plan_rewrite_partition_locations", "plan_set_location", "resolve_partition", "sd_ids_under")

STATS_FLAG = COLUMN_STATS_ACCURATE
FAST_STATS = ("numFiles", "totalSize")  # StatsSetupConst.fastStats


def resolve_partition(
    metastore: Metastore, state: TableState, spec: tuple[tuple[str, str], ...]
) -> tuple[dict | None, list[Finding]]:
    """The partition row ``{id, name, sd_id, location}`` named by a full spec, or the findings why not."""
    keys = [k.name for k in state.partition_keys]
    given = dict(spec)
    if not keys:
        return None, [Finding("not_partitioned", "ddl", f"Table {state.ref} is not partitioned")]
    if sorted(given) != sorted(keys):
        return None, [
            Finding(
                "partition_spec",
                "ddl",
                f"Partition spec {dict(spec)} does not name exactly the partition keys of {state.ref}: "
                f"{', '.join(keys)}",
            )
        ]
    name = partition_name([(k, given[k]) for k in keys])
    row = (
        Partition.objects.using(metastore.alias)
        .filter(table_id=state.table_id, name=name)
        .values("id", "name", "sd_id", "sd__location")
        .first()
    )
    if row is None:
        return None, [Finding("unknown_partition", "ddl", f"Partition not found: {state.ref} {name}")]
    return {"id": row["id"], "name": row["name"], "sd_id": row["sd_id"], "location": row["sd__location"]}, []


def plan_set_location(metastore: Metastore, state: TableState, spec: SetLocation) -> Preview:
    sql = MetastoreSql(metastore.alias)
    target_sd, old_location, blockers = state.sd_id, state.location, []
    partition = None
    if spec.partition:
        partition, blockers = resolve_partition(metastore, state, spec.partition)
        target_sd = partition["sd_id"] if partition else None
        old_location = partition["location"] if partition else None
    if state.is_view:
        blockers.append(Finding("view_location", "ddl", f"{state.ref} is a view and has no location"))
    absolute = _absolute_location_blockers(spec.location)
    blockers += absolute + _replication_blockers(metastore, state)
    if not absolute and (partition or not spec.partition):
        blockers += new_location_blockers(metastore, spec.location, own=_own(state, partition))
    steps = []
    if target_sd is not None and not blockers:
        location = sql.col(StorageDescriptor, "location")
        # A partition's location is not in the table's fingerprint: the previewed old value in the condition makes
        # a partition moved since the preview change no row, so execution refuses the stale preview.
        unchanged = f" AND {location} = %s" if partition and old_location is not None else ""
        steps.append(
            Step(
                f"Point {'partition ' + partition['name'] if partition else 'the table'} at {spec.location}",
                "SDS",
                "update",
                f"UPDATE {sql.table(StorageDescriptor)} SET {location} = %s "
                f"WHERE {sql.col(StorageDescriptor, 'id')} = %s{unchanged}",
                (spec.location, target_sd, *((old_location,) if unchanged else ())),
                1,
            )
        )
        if partition is None:
            steps += path_steps(sql, state, spec.location)
        steps += _stale_statistics_steps(metastore, sql, state, partition)
    quick = _quick_stats(metastore, state, spec) if not partition and not blockers else None
    if quick:
        steps += param_upsert_steps(sql, TableParam, "table", state.table_id, state.params, tuple(quick.items()))
    return build_preview(
        metastore,
        state,
        spec,
        steps=steps,
        after=snapshot(state) if partition else _table_after(state, spec, quick),
        blockers=blockers,
        warnings=_location_warnings(state, spec, partition is not None)
        + _statistics_warnings(steps)
        + _quick_stats_warnings(state, spec, partition, quick)
        + _partition_statistics_warnings(metastore, partition),
        partitions_touched=1 if partition else 0,
        hive=_hive_comparison(metastore, partition),
        inverse={"sd_id": target_sd, "location": old_location}
        | ({"table_params": {key: state.params.get(key) for key in quick}} if quick else {}),
    )


def plan_rewrite_partition_locations(
    metastore: Metastore, state: TableState, spec: RewritePartitionLocations, *, keep_sd_ids: Sequence[int] = ()
) -> Preview:
    """Every partition location starting with the old prefix gets the new one, in one statement.

    The before-image is one inverse rule plus the partitions a revert must leave alone: those already under the
    new prefix that the rewrite does not touch. ``keep_sd_ids`` (a revert's) are left alone here.
    """
    sql = MetastoreSql(metastore.alias)
    partitions = Partition.objects.using(metastore.alias).filter(table_id=state.table_id)
    matching = partitions.filter(sd__location__startswith=spec.old_prefix).exclude(sd_id__in=keep_sd_ids).count()
    untouched_new = sd_ids_under(metastore, state.table_id, spec.new_prefix, not_under=spec.old_prefix)
    blockers = []
    if not state.is_partitioned:
        blockers.append(Finding("not_partitioned", "ddl", f"Table {state.ref} is not partitioned"))
    if spec.old_prefix == spec.new_prefix or not spec.old_prefix:
        blockers.append(Finding("no_change", "ddl", "The old and new prefixes must differ and not be empty"))
    blockers += _replication_blockers(metastore, state)
    if spec.new_prefix and spec.old_prefix != spec.new_prefix:
        # Every rewritten location lands in the new prefix's directory: it must be governed, and nobody else's.
        directory = spec.new_prefix.rsplit("/", 1)[0] if "/" in spec.new_prefix else spec.new_prefix
        own = MoveContext(table_id=state.table_id)
        blockers += new_location_blockers(metastore, directory, own=own, above_only=True)
    location = sql.col(StorageDescriptor, "location")
    kept, kept_params = sql.not_among(sql.col(StorageDescriptor, "id"), keep_sd_ids)
    steps = (
        [
            Step(
                f"Rewrite {matching} partition locations from {spec.old_prefix} to {spec.new_prefix}",
                "SDS",
                "update",
                f"UPDATE {sql.table(StorageDescriptor)} SET {location} = {sql.replace_prefix(location)} "
                f"WHERE {sql.of_table_partitions(sql.col(StorageDescriptor, 'id'), 'sd')} "
                f"AND {sql.has_prefix(location)}{kept}",
                (
                    spec.new_prefix,
                    len(spec.old_prefix) + 1,
                    state.table_id,
                    len(spec.old_prefix),
                    spec.old_prefix,
                    *kept_params,
                ),
                matching,
            )
        ]
        if matching and not blockers
        else []
    )
    warnings = (
        []
        if matching
        else [Finding("nothing_matches", "ddl", f"No partition location starts with {spec.old_prefix}", "warning")]
    )
    if untouched_new:
        warnings.append(
            Finding(
                "prefix_overlap",
                "revert",
                f"{len(untouched_new)} partition(s) already start with {spec.new_prefix}; "
                "a revert leaves them as they are.",
                "warning",
            )
        )
    return build_preview(
        metastore,
        state,
        spec,
        steps=steps,
        after=snapshot(state),
        blockers=blockers,
        warnings=warnings,
        partitions_touched=matching,
        # One inverse rule for any number of rows; the ids listed are those a revert must not touch.
        inverse={"rule": {"old_prefix": spec.new_prefix, "new_prefix": spec.old_prefix}, "keep_sd_ids": untouched_new},
    )


def _own(state: TableState, partition: dict | None) -> MoveContext:
    """What may share a new location: a partition its own directory below its table's root; a table its own rows."""
    if partition is None:
        return MoveContext(table_id=state.table_id)
    return MoveContext(sd_ids=frozenset({partition["sd_id"]}), enclosing=frozenset({state.sd_id} - {None}))


def sd_ids_under(metastore: Metastore, table_id: int, prefix: str, *, not_under: str) -> list[int]:
    """Storage descriptors of the table's partitions whose location starts with ``prefix`` and not ``not_under``."""
    partitions = Partition.objects.using(metastore.alias).filter(table_id=table_id)
    under = partitions.filter(sd__location__startswith=prefix).exclude(sd__location__startswith=not_under)
    return list(under.order_by("sd_id").values_list("sd_id", flat=True))


def _absolute_location_blockers(location: str) -> list[Finding]:
    """Rule 1.5 qualifies a location against the default filesystem: a relative one would land who knows where."""
    if location.startswith("/") or (":" in location and not location.startswith(":")):
        return []
    return [
        Finding(
            "relative_location",
            "1.5",
            f"'{location}' is not an absolute location: give a URI such as hdfs://namenode/path or file:/path, or an "
            "absolute path.",
        )
    ]


def _replication_blockers(metastore: Metastore, state: TableState) -> list[Finding]:
    """Rules 4.1/4.3 (4.x): the locations of a managed table in a replication source do not change."""
    if not metastore.schema.capabilities.replication_source_guards or state.is_external or state.is_view:
        return []
    if not replication_source(metastore, state.ref.database):
        return []
    return [
        Finding(
            "replication_location",
            "4.1",
            f"Cannot change location of a managed table {state.ref.database}.{state.ref.table} as it is enabled for "
            "replication.",
        )
    ]


def _stale_statistics_steps(
    metastore: Metastore, sql: MetastoreSql, state: TableState, partition: dict | None
) -> list[Step]:
    """Rules 13.1-13.3: after a location change Hive marks the basic statistics inaccurate by removing
    COLUMN_STATS_ACCURATE (``setBasicStatsState(FALSE)``): of an unpartitioned table always (its quick statistics are
    recounted, ``_quick_stats``); of a partition only when it lacks numFiles or totalSize, for
    ``MetaStoreUtils.requireCalStats`` is false for a partition whose fast statistics are there and unchanged, so Hive
    then leaves its parameters alone (seen with Hive 2.3's Driver: tests/witness)."""
    if partition is not None:
        if _has_fast_stats(metastore, partition):
            return []
        flagged = PartitionParam.objects.using(metastore.alias).filter(partition_id=partition["id"], key=STATS_FLAG)
        return param_delete_steps(sql, PartitionParam, "partition", partition["id"], [STATS_FLAG]) if flagged else []
    if state.is_partitioned or STATS_FLAG not in state.params:
        return []
    return param_delete_steps(sql, TableParam, "table", state.table_id, [STATS_FLAG])


def _has_fast_stats(metastore: Metastore, partition: dict) -> bool:
    """``StatsSetupConst.containsAllFastStats``: the partition has numFiles and totalSize."""
    keys = PartitionParam.objects.using(metastore.alias).filter(partition_id=partition["id"], key__in=FAST_STATS)
    return keys.count() == len(FAST_STATS)


def _partition_statistics_warnings(metastore: Metastore, partition: dict | None) -> list[Finding]:
    if partition is None or _has_fast_stats(metastore, partition):
        return []
    return [
        Finding(
            "partition_quick_stats",
            "13.3",
            f"Partition {partition['name']} has no numFiles/totalSize: Hive would count them in the new directory; "
            "the console leaves that to ANALYZE TABLE … PARTITION (…) COMPUTE STATISTICS.",
            "warning",
        )
    ]


def _hive_comparison(metastore: Metastore, partition: dict | None) -> HiveComparison | None:
    """Hive saves the one partition (``alter_partition``); a table's SET LOCATION touches table rows only."""
    if partition is None:
        return None
    return HiveComparison(str(metastore.schema.version), 1, 0, hive_seconds(1, 0))


def _quick_stats(metastore: Metastore, state: TableState, spec: SetLocation) -> dict[str, str] | None:
    """Rule 13.2: Hive's client lets the metastore recompute an unpartitioned table's quick statistics after SET
    LOCATION only (2.3/3.1 ``DDLTask.alterTableOrSinglePartition`` removes ``DO_NOT_UPDATE_STATS`` for ALTERLOCATION
    alone; 4.0 ``AlterTableSetLocationOperation``), from the new directory: ``HiveAlterHandler.alterTable`` →
    ``updateTableStatsFast`` (2.3, 3.1) / ``updateTableStatsSlow`` (4.x, which also counts erasure-coded files) →
    ``populateQuickStats``. None for views, partitioned tables and a filesystem the console cannot list."""
    if state.is_view or state.is_partitioned:
        return None
    size = filesystem_for(spec.location).quick_stats(spec.location)
    if size is None:
        return None
    values = {"numFiles": str(size.files), "totalSize": str(size.bytes)}
    if metastore.schema.capabilities.quick_stats_count_erasure_coded_files:
        values["numFilesErasureCoded"] = "0"  # a local filesystem has no erasure coding
    return {key: value for key, value in values.items() if state.params.get(key) != value}


def _table_after(state: TableState, spec: SetLocation, quick: dict[str, str] | None) -> TableSnapshot:
    """The table after SET LOCATION: its new location, quick statistics and no accuracy flags (rule 13.2)."""
    params = {k: v for k, v in state.params.items() if k != STATS_FLAG or state.is_partitioned} | (quick or {})
    return snapshot(
        state,
        location=spec.location,
        params=tuple(sorted(params.items())),
        serde_params=serde_params_after(state, spec.location),
    )


def _quick_stats_warnings(
    state: TableState, spec: SetLocation, partition: dict | None, quick: dict[str, str] | None
) -> list[Finding]:
    if partition or state.is_view or state.is_partitioned or quick is not None:
        return []
    scheme = filesystem_for(spec.location).scheme
    return [
        Finding(
            "quick_stats_unknown",
            "13.2",
            f"Hive recomputes numFiles and totalSize from the new location; the console cannot list {scheme} "
            "locations, so they keep their old values.",
            "warning",
        )
    ]


def _statistics_warnings(steps: list[Step]) -> list[Finding]:
    if not any(step.action == "delete" for step in steps):
        return []
    return [
        Finding(
            "statistics_inaccurate",
            "13.2",
            "The statistics describe the data at the old location: they are marked inaccurate (COLUMN_STATS_ACCURATE "
            "removed), as Hive does; run ANALYZE TABLE to compute them for the new location.",
            "warning",
        )
    ]


def _location_warnings(state: TableState, spec: SetLocation, is_partition: bool) -> list[Finding]:
    warnings = [
        Finding("metadata_only", "10.5", "Only the metadata changes: no data is moved to the new location.", "warning")
    ]
    if not is_partition and state.partitions.count:
        warnings.append(
            Finding(
                "partitions_keep_locations",
                "10.5",
                f"The table's {state.partitions.count} partitions keep their locations.",
                "warning",
            )
        )
    exists = filesystem_for(spec.location).exists(spec.location)
    if exists is False:
        warnings.append(Finding("location_missing", "ddl", f"{spec.location} does not exist yet.", "warning"))
    return warnings
