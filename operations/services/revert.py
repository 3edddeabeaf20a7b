"""
Revert plans: a preview that restores what an execution changed, built from its before-image.

Renames and prefix rewrites are reverted by their inverse statement (a uniform change has a compact
inverse rule). Everything else is restored row by row from what execution kept: deleted rows are
inserted back, captured updates are written back, moved directories are moved back, and ids the
execution allocated are removed. The revert preview is executed like any other (``alter_execute``):
it is refused if the table changed since.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

from django.db import connections

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.models import (
    Column,
    ColumnDescriptor,
    Partition,
    PartitionColumnStatistics,
    PartitionKeyValue,
    SerDeParam,
    StorageDescriptor,
    TableColumnStatistics,
    TableParam,
)
from catalog_admin.selectors.metastores import Metastore, get_metastore
from operations.containment import MoveContext
from operations.events.planning import plan_events
from operations.models import DONE, Execution
from operations.planners.columns import partition_flag_steps
from operations.planners.common import build_preview, param_delete_steps, param_upsert_steps, snapshot
from operations.planners.compaction import plan_compaction_revert
from operations.planners.create_table_revert import plan_create_table_revert
from operations.planners.exchange_partition import plan_exchange_partition
from operations.planners.locations import plan_rewrite_partition_locations
from operations.planners.metadata import owner_step, table_type_step
from operations.planners.partitions import bookkeeping_names_in_use, relabel_bookkeeping_steps
from operations.planners.partitions.add_revert import ADDING_KINDS, added_partitions_revert
from operations.planners.rename_table import plan_rename_table
from operations.preview import Preview, Step
from operations.rules import Finding
from operations.services.putting_back import moves_back, row_value
from operations.services.relocation_cleanup import extra_files
from operations.services.trash_revert import trash_revert_blockers
from operations.services.undrop import is_undrop, undrop_preview
from operations.specs import (
    ExchangePartition,
    RenameTable,
    RevertExecution,
    RewritePartitionLocations,
    TableRef,
    spec_from_dict,
)
from operations.sql import MetastoreSql
from operations.table_state import TableState, read_table_state

__all__ = ("check_not_reverted", "revert_preview")

# Parents before children, so re-inserted rows satisfy Hive's foreign keys.
INSERT_ORDER = (
    "CDS", "COLUMNS_V2", "SERDES", "SERDE_PARAMS", "SDS", "SD_PARAMS", "BUCKETING_COLS", "SORT_COLS",
    "SKEWED_COL_NAMES", "SKEWED_COL_VALUE_LOC_MAP", "SKEWED_VALUES", "PARTITIONS", "PARTITION_KEY_VALS",
    "PARTITION_PARAMS", "PART_PRIVS", "PART_COL_PRIVS", "PART_COL_STATS", "TABLE_PARAMS", "TAB_COL_STATS",
)  # fmt: skip
CHUNK = 500


def revert_preview(*, execution: Execution) -> Preview:
    """The plan that undoes ``execution``; raises if it did not succeed or cannot be reverted."""
    if execution.state not in (Execution.State.SUCCEEDED, Execution.State.RECONCILED):
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"Execution #{execution.pk} is {execution.state}: only a successful execution can be reverted.",
            {"execution": execution.pk},
        )
    _check_revertible(execution)
    _check_relocation_kept(execution)
    metastore = get_metastore(execution.metastore)
    if is_undrop(execution):
        return undrop_preview(metastore=metastore, execution=execution)
    preview = _revert_plan(metastore, execution)
    preview = replace(preview, inverse={**preview.inverse, "reverts": execution.pk})
    state = read_table_state(metastore, preview.spec.target)
    return replace(preview, events=plan_events(metastore, state, preview))


def _revert_plan(metastore: Metastore, execution: Execution) -> Preview:
    operation = execution.operation
    image = execution.before_image
    kind = operation["kind"]
    if kind == "rename_table":
        rename = cast(RenameTable, spec_from_dict(image["spec"]))
        state = read_table_state(metastore, rename.target, layout=True)
        rename = replace(rename, on_view=state.is_view)  # a view is renamed back with ALTER VIEW, as Hive asks
        keep, location = image.get("keep_sd_ids", ()), image.get("location")
        return plan_rename_table(metastore, state, rename, keep_sd_ids=keep, restore_location=location)
    if kind == "rewrite_partition_locations":
        rule = image["rule"]
        rewrite = cast(
            RewritePartitionLocations,
            spec_from_dict({**operation, "old_prefix": rule["old_prefix"], "new_prefix": rule["new_prefix"]}),
        )
        state = read_table_state(metastore, rewrite.target)
        return plan_rewrite_partition_locations(metastore, state, rewrite, keep_sd_ids=image.get("keep_sd_ids", ()))
    if kind == "abort_transactions":
        raise ApplicationError(
            ErrorCode.INVALID_STATE,
            f"Execution #{execution.pk} aborted transactions: Hive cannot reopen an aborted transaction (its client "
            "was told), so it cannot be reverted.",
            {"execution": execution.pk},
        )
    if kind == "exchange_partition":  # the exchange back: the partitions return to the source, their data with them
        back = ExchangePartition(target=TableRef(**image["source"]), source=TableRef(**operation["target"]),
                                 partition=tuple(tuple(pair) for pair in operation["partition"]))  # fmt: skip
        return plan_exchange_partition(metastore, read_table_state(metastore, back.target), back,
                                       only=image["partition_ids"])  # fmt: skip
    if kind == "create_table":
        return plan_create_table_revert(metastore, execution_id=execution.pk, statement=execution.statement,
                                        operation=operation, image=image)  # fmt: skip
    if kind == "purge_trash":
        raise ApplicationError(
            ErrorCode.INVALID_STATE,
            f"Execution #{execution.pk} purged the trash: deleted data cannot be brought back.",
            {"execution": execution.pk},
        )
    if kind == "compact":
        target = TableRef(**operation["target"])
        spec = RevertExecution(target=target, execution_id=execution.pk, statement=execution.statement)
        state = read_table_state(metastore, target)
        return plan_compaction_revert(metastore, state, spec, execution.read_before_image())
    return _restore_preview(metastore, execution)


def _check_revertible(execution: Execution) -> None:
    """Only the latest change of a table can be reverted, only once, not a revert, and only with its before-image."""
    if execution.reverts_id is not None:
        raise ApplicationError(
            ErrorCode.INVALID_STATE,
            f"Execution #{execution.pk} is itself a revert (of #{execution.reverts_id}); to redo that change, "
            "preview its statement again.",
            {"execution": execution.pk, "reverts": execution.reverts_id},
        )
    if execution.before_image.get("noop"):
        raise ApplicationError(
            ErrorCode.INVALID_STATE,
            f"Execution #{execution.pk} changed nothing (IF EXISTS found no table): there is nothing to revert.",
            {"execution": execution.pk},
        )
    if not execution.keeps_rows:
        raise ApplicationError(
            ErrorCode.INVALID_STATE,
            f"Execution #{execution.pk} has no record of the rows it replaced: it cannot be reverted exactly.",
            {"execution": execution.pk},
        )
    check_not_reverted(execution)
    names = {(execution.database_name, execution.table_name)}
    if execution.operation.get("new"):
        names.add((execution.operation["new"]["database"], execution.operation["new"]["table"]))
    later = (
        Execution.objects.filter(metastore=execution.metastore, pk__gt=execution.pk, state__in=DONE)
        .exclude(revert_attempts__state__in=DONE)
        .exclude(reverts=execution)
        .exclude(operation__kind="purge_trash")  # changes no row: its own blocker (trash_purged) names it
    )
    # a DROP … IF EXISTS that found nothing changed nothing
    blocking = [e for e in later if (e.database_name, e.table_name) in names and not e.before_image.get("noop")]
    if blocking:
        raise ApplicationError(
            ErrorCode.INVALID_STATE,
            f"Execution #{blocking[-1].pk} changed the table after #{execution.pk}; revert it first.",
            {"execution": execution.pk, "later": [e.pk for e in blocking]},
        )


def check_not_reverted(execution: Execution) -> None:
    """Refuse a revert of an execution a succeeded revert already undid, or while an attempt has not settled; a
    failed or refused attempt changed nothing and leaves it revertible."""
    done, running = execution.reverted_by, execution.revert_running
    if done is not None:
        raise ApplicationError(
            ErrorCode.INVALID_STATE,
            f"Execution #{execution.pk} was already reverted by #{done.pk}.",
            {"execution": execution.pk, "reverted_by": done.pk},
        )
    if running is not None:
        raise ApplicationError(
            ErrorCode.INVALID_STATE,
            f"Execution #{execution.pk} is being reverted by #{running.pk}, which has not finished (if its process "
            "died, reconcile_executions settles it first).",
            {"execution": execution.pk, "revert_running": running.pk},
        )


def _check_relocation_kept(execution: Execution) -> None:
    """A relocation swaps back only while its source data is kept (before the cleanup removed any of it)."""
    relocation = getattr(execution, "relocation", None)
    if relocation is None:
        return
    relocation.refresh_from_db()
    removed = [unit["key"] for unit in relocation.units if unit.get("removed") == "source"]
    in_force = (relocation.State.PENDING, relocation.State.SWAPPED)  # the swap succeeded: pending is not yet settled
    if relocation.state in in_force and not removed:
        return
    if relocation.state in in_force:
        raise ApplicationError(
            ErrorCode.INVALID_STATE,
            f"Execution #{execution.pk} relocated the data and the source was removed from {len(removed)} unit(s) "
            f"(first: {removed[0]}): there is nothing to swap back to. Relocate the data again to move it back.",
            {"execution": execution.pk, "relocation": relocation.state, "removed": removed[:20]},
        )
    raise ApplicationError(
        ErrorCode.INVALID_STATE,
        f"Execution #{execution.pk} relocated the data and the source was removed on "
        f"{relocation.cleaned_at:%Y-%m-%d %H:%M} UTC after its retention time: there is nothing to swap back to. "
        "Relocate the data again to move it back.",
        {"execution": execution.pk, "relocation": relocation.state},
    )


def _restore_preview(metastore: Metastore, execution: Execution) -> Preview:
    target = TableRef(**execution.operation["target"])
    state = read_table_state(metastore, target)
    image = execution.read_before_image()
    sql = MetastoreSql(metastore.alias)
    kind = execution.operation["kind"]
    steps: list[Step] = []
    blockers: list[Finding] = []
    steps += _replaced_params_steps(metastore, image.get("replaced_params", {}))
    steps += _reinsert_steps(metastore, sql, image.get("deleted_rows", {}))
    if kind in ("add_columns", "replace_columns", "change_column"):
        steps += _column_restore_steps(metastore, sql, state, image)
    steps += _rewrite_updated_rows(metastore, sql, image.get("updated_rows", {}))
    if "table_params" in image:
        reinserted = {row["PARAM_KEY"] for row in image.get("deleted_rows", {}).get("TABLE_PARAMS", [])}
        wanted = {k: v for k, v in image["table_params"].items() if k not in reinserted}
        steps += _params_restore_steps(sql, TableParam, "table", state.table_id, state.params, wanted)
    if kind == "set_serdeproperties" and state.serde_id:
        old = image.get("serde_params", {})
        wanted = {k: old.get(k) for k in image.get("keys", [])}
        steps += _params_restore_steps(sql, SerDeParam, "serde", state.serde_id, state.serde_params, wanted)
    if kind == "set_owner":
        owner = image.get("owner")
        steps.append(
            owner_step(metastore, sql, state.table_id, owner, image.get("owner_type"), f"Give back to {owner}")
        )
    if "table_type" in image and image["table_type"] != state.table_type:
        steps.append(table_type_step(sql, state.table_id, image["table_type"]))
    if kind == "set_location":
        steps.append(_location_step(sql, image["sd_id"], image["location"]))
    if kind == "rename_partition":
        steps += _partition_name_steps(metastore, sql, image["partition"])
        if image.get("acid"):
            steps += relabel_bookkeeping_steps(metastore, sql, target, image["new_name"], image["partition"]["name"])
            blockers += bookkeeping_names_in_use(
                metastore, target, image["partition"]["name"], "the revert would take them for the renamed partition's"
            )
    steps += _delete_allocated(metastore, sql, image.get("allocated_ids", {}))
    added_ids: list[int] = []
    removed: tuple[str, ...] = ()
    if kind in ADDING_KINDS:  # drop what ADD PARTITION / MSCK added (its dropped partitions came back above)
        added_steps, added_ids, removed = added_partitions_revert(metastore, state, image)
        steps += added_steps
    blockers += _written_after_swap(execution) + trash_revert_blockers(execution)
    moves = tuple(moves_back(execution))
    spec = RevertExecution(target=target, execution_id=execution.pk, statement=execution.statement)
    relocation = getattr(execution, "relocation", None)
    return build_preview(
        metastore,
        state,
        spec,
        steps=steps,
        after=snapshot(state),
        blockers=blockers,
        moves=moves,
        move_contexts={move.source: MoveContext(table_id=state.table_id) for move in moves},
        partitions_touched=len(image.get("deleted_rows", {}).get("PARTITIONS", [])) + len(added_ids),
        drops=len(added_ids),
        inverse={"reverts": execution.pk, **({"dropped_ids": added_ids} if added_ids else {})},
        swapped_back=len(relocation.units) if relocation is not None else 0,
        directories_removed=removed,
        table_lock=bool(execution.preview.get("table_lock")),  # a transactional table's untruncate: under Hive's lock
        hive_write=bool(execution.preview.get("hive_write")),  # and, on Hive 4, a write of its own (a new write id)
    )


def _written_after_swap(execution: Execution) -> list[Finding]:
    """A data job's revert swaps back to the kept source: files written at the new location since the swap would be
    left behind (and removed with the copy), so the revert is refused naming them."""
    relocation = getattr(execution, "relocation", None)
    extra = extra_files(relocation, "destination") if relocation is not None else []
    if not extra:
        return []
    return [
        Finding(
            "written_after_swap",
            "relocate",
            f"{len(extra)} file(s) were written at the new location after the swap (first: "
            f"{', '.join(extra[:5])}): swapping back would leave them behind. Move them to the source, or relocate "
            "the data again instead of reverting.",
        )
    ]


def _replaced_params_steps(metastore: Metastore, replaced: dict[str, dict[str, list]]) -> list[Step]:
    """Remove the *_PARAMS rows a rewrite's swap wrote (its statistics: ``planners/rewrite_stats``) before the rows
    it deleted are put back."""
    quote = connections[metastore.alias].ops.quote_name
    owner_columns = {"PARTITION_PARAMS": "PART_ID", "TABLE_PARAMS": "TBL_ID", "PART_COL_STATS": "PART_ID",
                     "TAB_COL_STATS": "TBL_ID"}  # fmt: skip
    key_columns = {"PART_COL_STATS": "COLUMN_NAME", "TAB_COL_STATS": "COLUMN_NAME"}  # an ANALYZE's column rows
    steps = []
    for table, replaced_rows in sorted(replaced.items()):
        owners, keys = replaced_rows["owners"], replaced_rows["keys"]
        for start in range(0, len(owners), CHUNK):
            chunk = owners[start : start + CHUNK]
            key_column = quote(key_columns.get(table, "PARAM_KEY"))
            where = (f"{quote(owner_columns[table])} IN ({', '.join(['%s'] * len(chunk))}) "
                     f"AND {key_column} IN ({', '.join(['%s'] * len(keys))})")  # fmt: skip
            steps.append(
                Step(f"Remove the statistics the swap wrote for {len(chunk)} owner(s)", table, "delete",
                     f"DELETE FROM {quote(table)} WHERE {where}", (*chunk, *keys), -1)
            )  # fmt: skip
    return steps


def _reinsert_steps(metastore: Metastore, sql: MetastoreSql, deleted: dict[str, list[dict]]) -> list[Step]:
    steps = []
    for table in sorted(deleted, key=lambda t: INSERT_ORDER.index(t) if t in INSERT_ORDER else len(INSERT_ORDER)):
        rows = deleted[table]
        for start in range(0, len(rows), CHUNK):
            chunk = rows[start : start + CHUNK]
            columns = list(chunk[0])
            quoted = ", ".join(connections[metastore.alias].ops.quote_name(c) for c in columns)
            values = ", ".join(["(" + ", ".join(["%s"] * len(columns)) + ")"] * len(chunk))
            params = tuple(row_value(row[c]) for row in chunk for c in columns)
            steps.append(
                Step(
                    f"Put back {len(chunk)} deleted {table} rows",
                    table,
                    "insert",
                    f"INSERT INTO {connections[metastore.alias].ops.quote_name(table)} ({quoted}) VALUES {values}",
                    params,
                    len(chunk),
                )
            )
    return steps


# Rows captured before an update are written back by their key: table -> (key columns, the columns that changed; a
# captured row holds those its update changed).
UPDATED_ROW_KEYS = {
    "PARTITION_PARAMS": (("PART_ID", "PARAM_KEY"), ("PARAM_VALUE",)),
    "TABLE_PARAMS": (("TBL_ID", "PARAM_KEY"), ("PARAM_VALUE",)),
    "BUCKETING_COLS": (("SD_ID", "INTEGER_IDX"), ("BUCKET_COL_NAME",)),
    "SORT_COLS": (("SD_ID", "INTEGER_IDX"), ("COLUMN_NAME",)),
    # a relocation's or rewrite's re-pointed storage descriptors (a convert's also re-formatted), a convert's SerDes
    "SDS": (("SD_ID",), ("LOCATION", "INPUT_FORMAT", "OUTPUT_FORMAT")),
    "SERDES": (("SERDE_ID",), ("SLIB",)),
    "SERDE_PARAMS": (("SERDE_ID", "PARAM_KEY"), ("PARAM_VALUE",)),  # Spark's path, moved with a table's location
    # a transactional table's truncate on Hive 4: the write id its statistics were set with
    "PARTITIONS": (("PART_ID",), ("WRITE_ID",)),
    "TBLS": (("TBL_ID",), ("WRITE_ID",)),
}


def _rewrite_updated_rows(metastore: Metastore, sql: MetastoreSql, updated: dict[str, list[dict]]) -> list[Step]:
    """Write back the captured rows, each by its key, one CASE update per chunk (of rows capturing the same
    columns)."""
    steps = []
    quote = connections[metastore.alias].ops.quote_name
    for table, all_rows in updated.items():
        keys, values = UPDATED_ROW_KEYS[table]
        match = "(" + " AND ".join(f"{quote(k)} = %s" for k in keys) + ")"
        shapes: dict[tuple[str, ...], list[dict]] = {}
        for row in all_rows:
            shapes.setdefault(tuple(v for v in values if v in row), []).append(row)
        for changed, rows in shapes.items():
            for start in range(0, len(rows), CHUNK):
                chunk = rows[start : start + CHUNK]
                cases = " ".join([f"WHEN {match} THEN %s"] * len(chunk))
                assignments = ", ".join(f"{quote(value)} = CASE {cases} END" for value in changed)
                case_params = tuple(
                    v for value in changed for row in chunk for v in (*(row[k] for k in keys), row[value])
                )
                where_params = tuple(row[k] for row in chunk for k in keys)
                where = " OR ".join([match] * len(chunk))
                steps.append(
                    Step(
                        f"Write back {len(chunk)} {table} rows",
                        table,
                        "update",
                        f"UPDATE {quote(table)} SET {assignments} WHERE {where}",
                        (*case_params, *where_params),
                        len(chunk),
                    )
                )
    return steps


def _descriptor_id(key: str) -> int | None:
    """A ``partition_cd_map`` key: a CD_ID, or ``"null"`` for a storage descriptor without one."""
    return None if key == "null" else int(key)


def _column_restore_steps(metastore: Metastore, sql: MetastoreSql, state: TableState, image: dict) -> list[Step]:
    cd = sql.col(StorageDescriptor, "cd")
    steps = [
        Step("Point the table back at its old columns", "SDS", "update",
             f"UPDATE {sql.table(StorageDescriptor)} SET {cd} = %s WHERE {sql.col(StorageDescriptor, 'id')} = %s",
             (image["table_cd"], state.sd_id), 1),
    ]  # fmt: skip
    if image.get("cascade") and len(image.get("partition_cds", [])) == 1 and not image.get("partition_cd_map"):
        steps.append(
            Step("Point every partition back at its old columns", "SDS", "update",
                 f"UPDATE {sql.table(StorageDescriptor)} SET {cd} = %s "
                 f"WHERE {sql.of_table_partitions(sql.col(StorageDescriptor, 'id'), 'sd')}",
                 (image["partition_cds"][0], state.table_id), state.partitions.count)
        )  # fmt: skip
    for old_cd, sd_ids in image.get("partition_cd_map", {}).items():
        for start in range(0, len(sd_ids), CHUNK):
            chunk = sd_ids[start : start + CHUNK]
            steps.append(
                Step(f"Point {len(chunk)} partitions back at descriptor {old_cd}", "SDS", "update",
                     f"UPDATE {sql.table(StorageDescriptor)} SET {cd} = %s WHERE {sql.col(StorageDescriptor, 'id')} "
                     f"IN ({', '.join(['%s'] * len(chunk))})", (_descriptor_id(old_cd), *chunk), len(chunk))
            )  # fmt: skip
    for old, new in image.get("renamed", {}).items():
        steps += _rename_statistics_back(metastore, sql, state, old, new, image.get("cascade", False))
    if image.get("flag_inverse"):  # one rule for every partition's accuracy flags
        inverse = [(new, old) for new, old in image["flag_inverse"]]
        steps += partition_flag_steps(metastore, sql, state.table_id, inverse, keep_rows=False)
    return steps


def _rename_statistics_back(
    metastore: Metastore, sql: MetastoreSql, state: TableState, old: str, new: str, cascade: bool
) -> list[Step]:
    steps = []
    table_rows = TableColumnStatistics.objects.using(metastore.alias).filter(table_id=state.table_id, column_name=new)
    if table_rows.exists():
        column = sql.col(TableColumnStatistics, "column_name")
        steps.append(
            Step(f"Statistics of {new} back under {old}", "TAB_COL_STATS", "update",
                 f"UPDATE {sql.table(TableColumnStatistics)} SET {column} = %s "
                 f"WHERE {sql.col(TableColumnStatistics, 'table')} = %s AND {column} = %s",
                 (old, state.table_id, new), table_rows.count())
        )  # fmt: skip
    part_rows = PartitionColumnStatistics.objects.using(metastore.alias).filter(
        partition__table_id=state.table_id, column_name=new
    )
    if cascade and part_rows.exists():
        column = sql.col(PartitionColumnStatistics, "column_name")
        steps.append(
            Step(f"Partition statistics of {new} back under {old}", "PART_COL_STATS", "update",
                 f"UPDATE {sql.table(PartitionColumnStatistics)} SET {column} = %s "
                 f"WHERE {sql.of_table_partitions(sql.col(PartitionColumnStatistics, 'partition'))} "
                 f"AND {column} = %s",
                 (old, state.table_id, new), part_rows.count())
        )  # fmt: skip
    return steps


def _params_restore_steps(
    sql: MetastoreSql, model: type, owner: str, owner_id: int, current: dict, wanted: dict[str, str | None]
) -> list[Step]:
    restore = tuple((k, v) for k, v in sorted(wanted.items()) if v is not None)
    remove = [k for k, v in sorted(wanted.items()) if v is None and k in current]
    return param_upsert_steps(sql, model, owner, owner_id, current, restore) + param_delete_steps(
        sql, model, owner, owner_id, remove
    )


def _partition_name_steps(metastore: Metastore, sql: MetastoreSql, old: dict[str, Any]) -> list[Step]:
    """A renamed partition gets its name, key values, location and statistics' name back."""
    part_id = old["id"]
    steps = [
        Step("Give the partition its old name", "PARTITIONS", "update",
             f"UPDATE {sql.table(Partition)} SET {sql.col(Partition, 'name')} = %s "
             f"WHERE {sql.col(Partition, 'id')} = %s", (old["name"], part_id), 1),
        _location_step(sql, old["sd_id"], old["location"]),
    ]  # fmt: skip
    for position, value in enumerate(old["values"]):
        steps.append(
            Step(f"Key value {position} back to {value}", "PARTITION_KEY_VALS", "update",
                 f"UPDATE {sql.table(PartitionKeyValue)} SET {sql.col(PartitionKeyValue, 'value')} = %s "
                 f"WHERE {sql.col(PartitionKeyValue, 'partition')} = %s "
                 f"AND {sql.col(PartitionKeyValue, 'position')} = %s", (value, part_id, position), 1)
        )  # fmt: skip
    stats = PartitionColumnStatistics.objects.using(metastore.alias).filter(partition_id=part_id).count()
    if stats and metastore.schema.has(PartitionColumnStatistics, "partition_name"):
        steps.append(
            Step("Statistics back under the old partition name", "PART_COL_STATS", "update",
                 f"UPDATE {sql.table(PartitionColumnStatistics)} "
                 f"SET {sql.col(PartitionColumnStatistics, 'partition_name')} = %s "
                 f"WHERE {sql.col(PartitionColumnStatistics, 'partition')} = %s", (old["name"], part_id), stats)
        )  # fmt: skip
    return steps


def _location_step(sql: MetastoreSql, sd_id: int, location: str | None) -> Step:
    return Step(
        f"Point back at {location}",
        "SDS",
        "update",
        f"UPDATE {sql.table(StorageDescriptor)} SET {sql.col(StorageDescriptor, 'location')} = %s "
        f"WHERE {sql.col(StorageDescriptor, 'id')} = %s",
        (location, sd_id),
        1,
    )


def _delete_allocated(metastore: Metastore, sql: MetastoreSql, allocated: dict[str, int]) -> list[Step]:
    """Remove the column descriptor an execution created (after everything points back at the old one)."""
    steps = []
    for key, new_id in sorted(allocated.items()):
        if not key.startswith("CDS:"):
            continue
        columns = Column.objects.using(metastore.alias).filter(cd_id=new_id).count()
        steps += [
            Step(f"Remove the columns of descriptor {new_id}", "COLUMNS_V2", "delete",
                 f"DELETE FROM {sql.table(Column)} WHERE {sql.col(Column, 'cd')} = %s", (new_id,), columns),
            Step(f"Remove descriptor {new_id}", "CDS", "delete",
                 f"DELETE FROM {sql.table(ColumnDescriptor)} WHERE {sql.col(ColumnDescriptor, 'id')} = %s",
                 (new_id,), 1),
        ]  # fmt: skip
    return steps
