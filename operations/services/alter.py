"""
Preview and execute ALTER operations on a metastore.

``alter_preview`` is a pure read returning a :class:`~operations.preview.Preview`, whose fingerprint binds the exact
plan (statements, moves, counts, the partitions in scope, the table's rows). ``alter_execute`` takes that preview
(and, for a change request, the approved plan it must equal), locks the table row, refuses it if the table's rows or
the partitions in scope changed since (compared with the preview's own values), moves directories under a journal,
runs exactly the previewed statements in one metastore transaction, checks every count, and records the execution.
Any failure rolls the metastore back and moves the directories back.
The same transaction writes the execution's commit marker (``commit_markers``), so ``reconcile_executions`` knows
exactly whether a crashed execution committed.
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from django.db import connections, transaction

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.hive.partition_names import partition_name
from catalog_admin.ids import allocate_ids
from catalog_admin.locations import filesystem_for, make_directory, remove_empty_directories
from catalog_admin.models import (
    ColumnDescriptor,
    Database,
    Partition,
    PartitionColumnStatistics,
    SerDe,
    StorageDescriptor,
    Table,
    TableColumnStatistics,
)
from catalog_admin.selectors.metastores import Metastore, get_metastore
from operations.collector import collector_paused
from operations.ddl.parser import parse_alter
from operations.events.planning import plan_events
from operations.events.writer import capture_before, write_events
from operations.models import DirectoryMoveRecord, Execution
from operations.models.executions import jsonable_value
from operations.planners.analyze import plan_analyze
from operations.planners.columns import plan_column_change
from operations.planners.common import snapshot
from operations.planners.compaction import plan_compaction
from operations.planners.create_table import creation_fingerprint, plan_create_table
from operations.planners.drop_table import absence_fingerprint, plan_drop_absent, plan_drop_table
from operations.planners.exchange_partition import plan_exchange_partition
from operations.planners.locations import plan_rewrite_partition_locations, plan_set_location
from operations.planners.metadata import (
    plan_set_owner,
    plan_set_serde_properties,
    plan_set_table_properties,
    plan_unset_table_properties,
)
from operations.planners.partitions import plan_drop_partitions, plan_rename_partition
from operations.planners.partitions.add import plan_add_partitions
from operations.planners.partitions.msck import plan_msck_repair
from operations.planners.relocate import plan_relocate
from operations.planners.rename_table import plan_rename_table
from operations.planners.rewrite import plan_rewrite, plan_set_file_format
from operations.planners.transactions import plan_abort_transactions
from operations.planners.trash_purge import plan_purge_trash
from operations.planners.truncate import plan_truncate_table
from operations.preview import DirectoryMove, Measured, NewId, NewWriteId, Preview, Step
from operations.services.batched_foreign_keys import batched_foreign_keys
from operations.services.commit_markers import new_commit_marker, write_commit_marker
from operations.services.folder_moves import put_back_unplanned, refuse_changed_folders
from operations.services.hive_writes import HiveWrite, commit_hive_write
from operations.services.move_journal import MoveJournal
from operations.services.move_journal import mark as mark_moves
from operations.services.one_transaction import Counts, refuse_unexecutable, run_execution
from operations.services.plan_lock import plan_lock
from operations.services.row_capture import DELETED, UPDATED, RowCapture, discard_captured_rows
from operations.services.trash_purge import purge_trash_entries
from operations.services.undrop import check_name_free
from operations.specs import (
    AbortTransactions,
    AddColumns,
    AddPartitions,
    AlterSpec,
    AnalyzeTable,
    ChangeColumn,
    CompactFiles,
    CompactTable,
    ConvertFormat,
    CreateTable,
    DropPartitions,
    DropTable,
    ExchangePartition,
    PurgeTrash,
    Relocate,
    RenamePartition,
    RenameTable,
    RepairPartitions,
    ReplaceColumns,
    RewritePartitionLocations,
    SetFileFormat,
    SetLocation,
    SetOwner,
    SetSerdeProperties,
    SetTableProperties,
    TruncateTable,
    UnsetTableProperties,
)
from operations.staleness import ALTER_FIELDS, StaleChange, Staleness, compare_plans, stale_message, stale_preview_error
from operations.table_state import TableState, read_partition_scope, read_table_state, table_exists

__all__ = ("alter_execute", "alter_preview", "alter_preview_statement", "fault_point", "fetch_rows", "with_events")

logger = logging.getLogger(__name__)

PLANNERS: dict[type[AlterSpec], Callable[[Metastore, TableState, Any], Preview]] = {
    RenameTable: plan_rename_table,
    AddColumns: plan_column_change,
    ReplaceColumns: plan_column_change,
    ChangeColumn: plan_column_change,
    SetTableProperties: plan_set_table_properties,
    UnsetTableProperties: plan_unset_table_properties,
    SetSerdeProperties: plan_set_serde_properties,
    SetOwner: plan_set_owner,
    SetLocation: plan_set_location,
    RewritePartitionLocations: plan_rewrite_partition_locations,
    RenamePartition: plan_rename_partition,
    DropPartitions: plan_drop_partitions,
    CompactTable: plan_compaction,
    AbortTransactions: plan_abort_transactions,
    Relocate: plan_relocate,
    CompactFiles: plan_rewrite,
    ConvertFormat: plan_rewrite,
    SetFileFormat: plan_set_file_format,
    ExchangePartition: plan_exchange_partition,
    AddPartitions: plan_add_partitions,
    RepairPartitions: plan_msck_repair,
    DropTable: plan_drop_table,
    TruncateTable: plan_truncate_table,
    PurgeTrash: plan_purge_trash,
    AnalyzeTable: plan_analyze,
}


_MODELS_BY_TABLE = {
    model._meta.db_table: model
    for model in (
        ColumnDescriptor,
        StorageDescriptor,
        Partition,
        SerDe,
        Table,
        PartitionColumnStatistics,
        TableColumnStatistics,
    )
}


# Plans that need to know where partitions are and which column descriptors they use.
NEEDS_PARTITION_LAYOUT = (RenameTable, AddColumns, ReplaceColumns, ChangeColumn)


def fault_point(name: str) -> None:
    """A named step of execution; tests replace this to inject failures.

    Test-only hook: a process whose ``CATALOG_ADMIN_KILL_AT`` names this point kills itself with SIGKILL here (a real
    crash, see ``tests/operations/services/test_reconcile_kill.py``); nothing sets that variable in production."""
    if os.environ.get("CATALOG_ADMIN_KILL_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)


@collector_paused()
def alter_preview(*, metastore: Metastore, spec: AlterSpec) -> Preview:
    """What ``spec`` would do on ``metastore``: a read-only plan with counts, moves, rules and risk."""
    if isinstance(spec, CreateTable):  # no table to read yet: the plan depends on its database and name
        return plan_create_table(metastore, spec)
    if isinstance(spec, DropTable) and spec.if_exists and not table_exists(metastore, spec.target):
        return plan_drop_absent(metastore, spec)  # Hive does nothing and succeeds
    planner = PLANNERS.get(type(spec))
    if planner is None:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"Previewing '{spec.kind}' is not available yet; supported: {', '.join(s.kind for s in PLANNERS)}.",
            {"operation": spec.kind},
        )
    layout = isinstance(spec, NEEDS_PARTITION_LAYOUT)
    state = read_table_state(metastore, spec.target, layout=layout)
    preview = planner(metastore, state, spec)
    selection = _scope_selection(state, spec, preview)
    if selection is not None:
        owner = preview.inverse.get("source_table_id", state.table_id)  # an exchange's partitions are the source's
        preview = replace(preview, scope=read_partition_scope(metastore, owner, selection))
    return with_events(metastore, state, preview)


def with_events(metastore: Metastore, state: TableState, preview: Preview) -> Preview:
    """``preview`` with the notification events its execution writes (part of the plan an approval binds)."""
    return replace(preview, events=plan_events(metastore, state, preview))


def _scope_selection(state: TableState, spec: AlterSpec, preview: Preview) -> dict[str, Any] | None:
    """Which partitions a partition-level plan reads or writes (``None``: a table-level plan, pinned by the table's
    rows, its counts and its moves)."""
    if isinstance(spec, SetLocation | RenamePartition) and spec.partition:
        given = [spec.partition] + ([spec.new_partition] if isinstance(spec, RenamePartition) else [])
        keys = [k.name for k in state.partition_keys]
        names = [partition_name([(k, dict(p)[k]) for k in keys]) for p in given if sorted(dict(p)) == sorted(keys)]
        return {"names": sorted(names)}
    if isinstance(spec, DropPartitions):
        dropped = (s for s in preview.steps if s.metastore_table == Partition._meta.db_table and s.action == "delete")
        return {"ids": sorted(p for step in dropped for p in step.params)}
    if isinstance(spec, RepairPartitions) and preview.inverse.get("dropped_ids"):
        return {"ids": list(preview.inverse["dropped_ids"])}
    if isinstance(spec, TruncateTable) and preview.inverse.get("partition_ids"):
        return {"ids": sorted(preview.inverse["partition_ids"])}
    if isinstance(spec, RewritePartitionLocations):
        return {"prefixes": sorted({spec.old_prefix, spec.new_prefix} - {""})}
    if isinstance(spec, ExchangePartition) and preview.inverse.get("partition_ids"):
        return {"ids": sorted(preview.inverse["partition_ids"])}
    return None


def alter_preview_statement(*, metastore: Metastore, statement: str, default_database: str = "default") -> Preview:
    """Parse Hive DDL text (column types in the metastore's own Hive grammar) and preview it."""
    spec = parse_alter(statement, default_database=default_database, version=metastore.schema.version)
    return alter_preview(metastore=metastore, spec=spec)


Progress = Callable[[int, int, str], None]


def alter_execute(
    *,
    preview: Preview,
    actor: str,
    source: str,
    reason: str = "",
    progress: Progress | None = None,
    approved: dict[str, Any] | None = None,
    data_copied: bool = False,
    measured: Mapping[tuple[str, str], object] | None = None,
    on_started: Callable[[Execution], None] | None = None,
    swap_moves: Sequence[DirectoryMove] = (),
) -> Execution:
    """Run exactly ``preview`` (or nothing), audit it, and return the execution record.

    ``approved``: the summary of the plan that was approved (a change request's); ``preview``, rebuilt just before,
    must be that very plan, or nothing runs. ``progress(done, total, description)`` is called before each statement.
    A plan that copies data first (relocate) runs only as the swap of ``relocate_execute`` (``data_copied``);
    ``measured``: what a rewrite wrote, by (unit, statistic), for its steps' :class:`Measured` parameters.
    ``on_started(execution)`` runs once the execution is recorded, before the metastore transaction (a relocation
    records what it copied there, so a process dying right after the commit leaves that record).
    ``swap_moves``: a rewrite's moves after the plan's own (``planners/rewrite_swap``), journaled the same way.
    """
    if preview.data_copy is not None and not data_copied:
        raise ApplicationError(
            ErrorCode.INVALID_STATE,
            f"{preview.statement} copies data before it re-points the metastore: it runs as a relocation job "
            "(operations.services.relocate.relocate_execute, on Spark), not as a plain ALTER.",
            {"operation": preview.spec.kind},
        )
    refuse_unexecutable(preview, approved, compared=ALTER_FIELDS, subject="The table")
    metastore = get_metastore(preview.metastore)
    execution = _start_execution(preview, actor=actor, source=source, reason=reason)

    def work() -> Counts:
        with plan_lock(preview, actor=actor) as lock_stands:
            if on_started is not None:
                on_started(execution)
            counts = _apply(metastore, preview, execution, progress, measured or {}, swap_moves, lock_stands)
        if preview.trash_purge is not None:  # after the commit: deleting is the one thing that cannot roll back
            counts["TRASH"] = purge_trash_entries(metastore, preview.trash_purge)
        return counts

    return run_execution(execution, preview, metastore, work)


def _start_execution(preview: Preview, *, actor: str, source: str, reason: str) -> Execution:
    return Execution.objects.create(
        metastore=preview.metastore,
        database_name=preview.spec.target.database,
        table_name=preview.spec.target.table,
        statement=preview.statement,
        operation=preview.spec.as_dict(),
        preview=preview.as_dict(),
        fingerprint=preview.state_fingerprint,  # what reconcile compares the table's rows with
        actor=actor,
        source=source,
        reason=reason,
        expected_counts=_expected_counts(preview),
        before_image=preview.inverse,
        reverts_id=preview.inverse.get("reverts"),
        commit_marker=new_commit_marker(),
    )


def _apply(
    metastore: Metastore,
    preview: Preview,
    execution: Execution,
    progress: Progress | None,
    measured: Mapping[tuple[str, str], object],
    swap_moves: Sequence[DirectoryMove] = (),
    lock_stands: Callable[[], None] = lambda: None,
) -> dict[str, dict[str, int]]:
    moved: list[DirectoryMoveRecord] = []
    made: list[str] = []
    capture = RowCapture(execution)
    journal: MoveJournal | None = None
    attempted = 0
    try:
        with allow_metastore_writes(), transaction.atomic(using=metastore.alias):
            if isinstance(preview.spec, CreateTable):
                _check_creation(metastore, preview)
            elif preview.inverse.get("noop"):
                _check_still_absent(metastore, preview)
            elif preview.inverse.get("undrop"):
                check_name_free(metastore, preview.spec.target)  # the table comes back: its name must be free
                _check_scope(metastore, preview)
            else:
                state = read_table_state(metastore, preview.spec.target, for_update=True)
                _check_fresh(preview, state)
                _check_scope(metastore, preview)
            write_commit_marker(metastore, execution.commit_marker, execution.pk)
            fault_point("locked")
            moves = (*preview.moves, *swap_moves)
            refuse_changed_folders(moves)
            journal = MoveJournal(execution, moves)
            for attempted, (record, move) in enumerate(zip(journal.records, moves, strict=True), start=1):
                _move_directory(execution, move)
                moved.append(record)
                fault_point(f"move:{attempted}")
                journal.moved(record)
            journal.flush()
            for location in preview.directories_created:  # CREATE TABLE's location, ADD PARTITION's managed ones
                made += make_directory(location)
            fault_point("moved")
            steps, allocated = _resolve_ids(metastore, _fill_measured(preview.steps, measured))
            hive_write = _record_hive_write(metastore, preview, execution) if preview.hive_write else None
            steps = _with_write_id(steps, hive_write)
            events = _created_table_events(preview, allocated)
            events_before = capture_before(metastore, events) if events else None
            counts = _run_steps(metastore, steps, capture, progress)
            if events and events_before:
                written = write_events(
                    metastore, events, events_before, write_id=hive_write.write_id if hive_write else None
                )
                counts["NOTIFICATION_LOG"] = {"insert": written, "update": 0, "delete": 0}
            _keep_before_image(execution, allocated, capture, made, hive_write)
            lock_stands()  # a plan_lock plan's Hive lock, heartbeated in the transaction: gone means roll back
            fault_point("before_commit")
    except BaseException:
        _restore_directories(moved)
        if journal is not None:  # planned, never started (a move that raised stays INTENDED, for a person)
            journal.forget(journal.records[attempted:])
        remove_empty_directories(made)
        discard_captured_rows(execution)
        raise
    fault_point("committed")
    for kept in remove_empty_directories(preview.directories_removed):  # a revert of those: only while empty
        logger.warning("Kept %s after execution #%s: it is no longer empty", kept, execution.pk)
    return counts


def _check_creation(metastore: Metastore, preview: Preview) -> None:
    """Under the database row's lock: the name is still free and LIKE's source as planned (a CREATE TABLE)."""
    spec = preview.spec
    assert isinstance(spec, CreateTable), "only a CREATE TABLE plan is checked by its database"
    databases = Database.objects.using(metastore.alias).filter(name=spec.target.database)
    if connections[metastore.alias].features.has_select_for_update:
        databases = databases.select_for_update()
    list(databases.values_list("pk", flat=True))
    now = creation_fingerprint(metastore, spec)
    if now != preview.state_fingerprint:
        change = StaleChange("table", "absent as planned", "created, or its database or LIKE source changed")
        _refuse_stale(preview, Staleness(True, (change,), preview.state_fingerprint, now))


def _check_still_absent(metastore: Metastore, preview: Preview) -> None:
    """A no-op ``DROP … IF EXISTS``: the table is still absent (else it would drop what nobody previewed)."""
    if absence_fingerprint(metastore, preview.spec.target) != preview.state_fingerprint:
        change = StaleChange("table", "absent as planned", "created, or its database changed")
        _refuse_stale(preview, Staleness(True, (change,), preview.state_fingerprint, "changed"))


def _created_table_events(preview: Preview, allocated: dict[str, int]) -> Any:
    """The plan's events, a CREATE TABLE's (table id 0) pointed at the table its statements create."""
    if preview.events is not None and preview.events.table_id == 0 and "TBLS:0" in allocated:
        return replace(preview.events, table_id=allocated["TBLS:0"])
    return preview.events


def _keep_before_image(
    execution: Execution,
    allocated: dict[str, int],
    capture: RowCapture,
    made: list[str],
    hive_write: HiveWrite | None = None,
) -> None:
    """Store the rows the statements replaced (``CapturedRows``) and what the execution's JSON keeps of them (their
    counts) before the metastore commits: an execution that dies after the commit (reconciled later) can still be
    reverted exactly. ``hive_write``: the Hive transaction and write id recorded (never taken back by a revert)."""
    capture.flush()
    execution.before_image = {
        **execution.before_image,
        "allocated_ids": allocated,
        "captured": capture.counts,
        **({"made_directories": made} if made else {}),
        **({"hive_write": hive_write.as_dict()} if hive_write else {}),
    }
    execution.save(update_fields=["before_image"])


def _fill_measured(steps: tuple[Step, ...], measured: Mapping[tuple[str, str], object]) -> tuple[Step, ...]:
    """Replace :class:`Measured` placeholders by what the data job wrote (every one must be known)."""
    if not any(isinstance(p, Measured) for step in steps for p in step.params):
        return steps
    missing = [p for step in steps for p in step.params if isinstance(p, Measured) and (p.unit, p.stat) not in measured]
    if missing:
        raise ApplicationError(
            ErrorCode.EXECUTION_FAILED,
            f"No {missing[0].stat} was measured for {missing[0].unit}; nothing was applied.",
            {"unit": missing[0].unit},
        )
    return tuple(
        replace(s, params=tuple(measured[(p.unit, p.stat)] if isinstance(p, Measured) else p for p in s.params))
        for s in steps
    )


def _resolve_ids(metastore: Metastore, steps: tuple[Step, ...]) -> tuple[tuple[Step, ...], dict[str, int]]:
    """Replace :class:`NewId` placeholders by ids reserved from SEQUENCE_TABLE (inside the transaction)."""
    wanted = sorted(
        {p for step in steps for p in step.params if isinstance(p, NewId)}, key=lambda n: (n.sequence, n.slot)
    )
    if not wanted:
        return steps, {}
    ids: dict[NewId, int] = {}
    for sequence in sorted({n.sequence for n in wanted}):
        slots = [n for n in wanted if n.sequence == sequence]
        first = allocate_ids(metastore.alias, _MODELS_BY_TABLE[sequence], sum(slot.count for slot in slots))
        for slot in slots:  # a block's slot is its first id (NewId.count)
            ids[slot], first = first, first + slot.count
    resolved = tuple(
        replace(s, params=tuple(ids.get(p, p) if isinstance(p, NewId) else p for p in s.params)) for s in steps
    )
    return resolved, {f"{n.sequence}:{n.slot}": i for n, i in ids.items()}


def _record_hive_write(metastore: Metastore, preview: Preview, execution: Execution) -> HiveWrite:
    """A ``hive_write`` plan's committed Hive transaction and the write id it allocates for the table."""
    target = preview.spec.target
    return commit_hive_write(metastore, target.database, target.table, user=execution.actor)


def _with_write_id(steps: tuple[Step, ...], hive_write: HiveWrite | None) -> tuple[Step, ...]:
    """Replace :class:`NewWriteId` placeholders by the write id allocated (a plan without them is left as it is)."""
    if hive_write is None:
        assert not any(isinstance(p, NewWriteId) for s in steps for p in s.params), "a write id needs a hive_write plan"
        return steps
    return tuple(
        replace(s, params=tuple(hive_write.write_id if isinstance(p, NewWriteId) else p for p in s.params))
        for s in steps
    )


def _check_fresh(preview: Preview, state: TableState) -> None:
    """Under the table lock: the table's rows are still those the plan was built on."""
    if state.fingerprint == preview.state_fingerprint:
        return
    changes = tuple(StaleChange(f, str(b), str(a)) for f, b, a in preview.before.diff(snapshot(state)))
    _refuse_stale(preview, Staleness(True, changes, preview.state_fingerprint, state.fingerprint))


def _check_scope(metastore: Metastore, preview: Preview) -> None:
    """Under the table lock: the partitions in the plan's scope still have the planned names, descriptors and
    locations (the plan's own digest, never a fresh read, is the reference)."""
    if preview.scope is None:
        return
    now = read_partition_scope(metastore, preview.scope.table_id, preview.scope.selection)
    if now.digest == preview.scope.digest:
        return
    _refuse_stale(preview, compare_plans(preview, replace(preview, scope=now)))


def _refuse_stale(preview: Preview, staleness: Staleness) -> None:
    """Under the table lock, the table is not as previewed: nothing is applied."""
    then = "preview it again before executing"
    message = stale_message(str(preview.spec.target), then, since="the preview", staleness=staleness)
    raise stale_preview_error(message, staleness)


def _move_directory(execution: Execution, move: DirectoryMove) -> None:
    """Move one directory (journaled by the caller's :class:`MoveJournal`), pruning its emptied source parents."""
    filesystem = filesystem_for(move.source, execution.metastore)
    filesystem.rename(move.source, move.destination)
    if move.entries:  # a folder moving whole with its partitions (services/folder_moves.py)
        put_back_unplanned(move, execution.metastore)
    if move.prune_source_levels:
        filesystem.prune_empty_parents(move.source, levels=move.prune_source_levels)


def _restore_directories(moved: list[DirectoryMoveRecord]) -> None:
    """Move each directory back, remove the parents its move created, and journal them RESTORED (one batch)."""
    restored = []
    for record in reversed(moved):
        try:
            filesystem = filesystem_for(record.destination, record.execution.metastore)
            filesystem.rename(record.destination, record.source)
            if record.created_parents:
                filesystem.prune_empty_parents(record.destination, levels=record.created_parents)
        except OSError:
            logger.exception(
                "Could not move %s back to %s; run reconcile_executions", record.destination, record.source
            )
            continue
        restored.append(record)
    mark_moves(restored, DirectoryMoveRecord.State.RESTORED)


def _run_steps(
    metastore: Metastore, steps: tuple[Step, ...], capture: RowCapture, progress: Progress | None = None
) -> dict[str, dict[str, int]]:
    """Run each step, checking its count; returns the counts. ``capture`` takes the old rows first (the
    before-image): every row a delete removes, and the rows of updates marked for capture."""
    counts: dict[str, dict[str, int]] = {}
    with connections[metastore.alias].cursor() as cursor:
        batched = batched_foreign_keys(cursor, metastore.alias, steps)  # large deletes: one check per foreign key
        for number, step in enumerate(steps, start=1):
            fault_point(f"step:{number}")
            if progress is not None:
                progress(number - 1, len(steps), step.description)
            if step.capture_sql:
                capture.capture(cursor, DELETED, step.metastore_table, step.capture_sql, step.params)
            if step.before_sql:
                capture.capture(cursor, UPDATED, step.metastore_table, step.before_sql, step.before_params)
            returning = batched.returning(step.metastore_table) if batched is not None else ""
            cursor.execute(step.sql + returning, step.params)
            changed = cursor.rowcount
            if returning:
                batched.keep(step.metastore_table, cursor.fetchall())  # type: ignore[union-attr]
            if step.expected_rows >= 0 and changed != step.expected_rows:
                raise ApplicationError(
                    ErrorCode.STALE_PREVIEW,
                    f"Step {number} ({step.description}) changed {changed} rows in {step.metastore_table}, "
                    f"the preview expected {step.expected_rows}; nothing was applied.",
                    {"step": number, "expected": step.expected_rows, "actual": changed},
                )
            table = counts.setdefault(step.metastore_table, {"insert": 0, "update": 0, "delete": 0})
            table[step.action] += max(changed, 0)
        if batched is not None:
            batched.check(cursor)
    return counts


def fetch_rows(cursor: Any, sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
    """The rows ``sql`` selects by column name, bytes and datetimes as a before-image keeps them in JSON (a
    database's execution keeps its rows there; :class:`RowCapture` keeps an ALTER's beside the execution)."""
    cursor.execute(sql, params)
    names = [column[0] for column in cursor.description]
    rows = cursor.fetchall()
    # Only the columns holding bytes or datetimes need converting: the others' rows go in as they are.
    special = {i for i in range(len(names)) if any(type(row[i]) in _SPECIAL for row in rows)}
    if not special:
        return [dict(zip(names, row, strict=True)) for row in rows]
    return [{n: jsonable_value(v) if i in special else v for i, (n, v) in enumerate(zip(names, row, strict=True))}
            for row in rows]  # fmt: skip


_SPECIAL = frozenset({bytes, bytearray, memoryview, datetime})


def _expected_counts(preview: Preview) -> dict[str, dict[str, int]]:
    """Rows per metastore table the steps change, and the notification events written."""
    counts = _counts(preview.steps)
    if preview.events is not None:
        counts["NOTIFICATION_LOG"] = {"insert": preview.events.total, "update": 0, "delete": 0}
    return counts


def _counts(steps: tuple[Step, ...]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for step in steps:
        table = counts.setdefault(step.metastore_table, {"insert": 0, "update": 0, "delete": 0})
        table[step.action] += max(step.expected_rows, 0)
    return counts
