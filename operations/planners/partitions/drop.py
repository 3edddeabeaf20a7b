"""
``DROP PARTITION`` by spec or by range of values: the partitions' rows go (kept in the before-image), their managed
data goes to the console's trash, and on a transactional table their ACID bookkeeping goes as in Hive.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from catalog_admin.selectors.metastores import Metastore
from operations.planners.common import acid_warnings, build_preview, hive_seconds, snapshot
from operations.planners.partitions.bookkeeping import bookkeeping_cleanup_steps, bookkeeping_warnings
from operations.planners.partitions.directories import unreachable_data_blockers
from operations.planners.partitions.drop_steps import drop_steps
from operations.planners.partitions.listing import dropped_partitions, partition_statistics
from operations.planners.partitions.matching import matching_partitions, predicate_blockers
from operations.planners.partitions.trash import TrashPlan, layout_folders, read_layout, trash_plan, walk_dropped
from operations.preview import HiveComparison, Preview
from operations.rules import Finding
from operations.specs import DropPartitions
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = ("plan_drop_partitions",)


def plan_drop_partitions(metastore: Metastore, state: TableState, spec: DropPartitions) -> Preview:
    """The plan of a ``DROP PARTITION`` on ``state``: a pure read."""
    blockers = predicate_blockers(state, spec)
    matched = matching_partitions(metastore, state, spec) if not blockers else []
    if not matched and not blockers and not spec.if_exists:
        blockers.append(
            Finding(
                "no_partition_matches",
                "ddl",
                f"No partition of {state.ref} matches {spec.to_ddl().split(' DROP ', 1)[1]}",
            )
        )
    sql = MetastoreSql(metastore.alias)
    part_ids = [p["id"] for p in matched]
    sd_ids = [p["sd_id"] for p in matched if p["sd_id"]]
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="dropped-directories") as disk:
        # The dropped directories are walked while the metastore counts their rows and reads their statistics and
        # the table's layout (both sides mostly wait on I/O).
        folders = layout_folders(state, matched) if not state.is_external else {}
        walked = disk.submit(walk_dropped, matched, folders) if not state.is_external else None
        steps = drop_steps(metastore, sql, part_ids, sd_ids) if matched and not blockers else []
        names = [p["name"] for p in matched]
        if steps and state.is_transactional:
            steps += bookkeeping_cleanup_steps(metastore, sql, state.ref, names)
        layout = read_layout(metastore, state, folders)
        statistics = partition_statistics(metastore, part_ids)
        trash = trash_plan(state, matched, walked.result(), layout) if walked else TrashPlan((), {}, {})
    if not state.is_external:
        blockers += unreachable_data_blockers(matched)
    stats = sum(s.expected_rows for s in steps if s.metastore_table == "PART_COL_STATS")
    return build_preview(
        metastore,
        state,
        spec,
        steps=steps,
        after=snapshot(state),
        blockers=blockers,
        warnings=acid_warnings(metastore, state)
        + bookkeeping_warnings(metastore, state, names, steps)
        + _drop_warnings(state, spec, matched, trash),
        moves=trash.moves,
        move_contexts=trash.contexts,
        partitions_touched=len(matched),
        statistics_dropped=stats,
        drops=len(matched),
        affected=dropped_partitions(state, spec, matched, trash, statistics) if matched else None,
        hive=HiveComparison(str(metastore.schema.version), len(matched), stats, hive_seconds(len(matched), stats)),
        inverse={
            "dropped_partitions": [p["name"] for p in matched[:100]],
            "count": len(matched),
            "trash": [m.destination for m in trash.moves[:100]],
        },
    )


def _drop_warnings(state: TableState, spec: DropPartitions, matched: list[dict], trash: TrashPlan) -> list[Finding]:
    warnings = []
    if state.is_external:
        warnings.append(
            Finding(
                "external_data_kept", "ddl", "The table is external: its data files stay where they are.", "warning"
            )
        )
    elif spec.purge:
        warnings.append(
            Finding(
                "purge_to_trash",
                "ddl",
                "PURGE is honoured as a move to the console's trash: data is never deleted outright.",
                "warning",
            )
        )
    missing = len(matched) - len(trash.placed)
    if not state.is_external and missing > 0:
        warnings.append(
            Finding(
                "directories_missing", "ddl", f"{missing} dropped partition(s) have no directory on disk.", "warning"
            )
        )
    return warnings
