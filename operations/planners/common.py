"""Pieces every planner uses: snapshots, Hive cost estimates, ACID warnings (risk criteria: ``operations.risk``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from django.conf import settings

from catalog_admin.models import (
    CompactionMetric,
    CompactionQueueEntry,
    CompletedCompaction,
    CompletedTransactionComponent,
    DatabaseParam,
    HiveLock,
    NextWriteId,
    TransactionComponent,
    TransactionWriteId,
    WriteSetEntry,
)
from catalog_admin.selectors.metastores import Metastore
from operations.containment import MoveContext, move_blockers
from operations.planners.object_store_moves import object_store_move_findings
from operations.preview import (
    DataCopy,
    DirectoryMove,
    HiveComparison,
    PartitionsAffected,
    Preview,
    Step,
    TableSnapshot,
)
from operations.risk import plan_criteria, risk_of
from operations.rules import Finding, check_alter_form
from operations.specs import AlterSpec
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = (
    "ACID_BOOKKEEPING",
    "acid_warnings",
    "build_preview",
    "console_seconds",
    "hive_seconds",
    "metadata_only_hive",
    "param_delete_steps",
    "param_upsert_steps",
    "replication_source",
    "snapshot",
)

# The console's set-based statements on PostgreSQL (benchmarks/alter.py: ~10 µs per row changed, renames and
# CASCADE at 10,000 and 100,000 partitions). Hive's own cost is a setting, CATALOG_HIVE_COST.
CONSOLE_SECONDS_BASE = 0.05
CONSOLE_SECONDS_PER_ROW = 0.00001
# Each directory moved: the rename (opened component by component without following links) and the pruning of
# emptied parents; the journal is written in batches (services/move_journal.py: one bulk insert before the moves, a
# done-mark every 500 moves or second). Measured by benchmarks/drop_range_preview.py --execute-only (8,760 partitions
# to the trash: 15.7 s and 20.8 s in all in two runs at load 11-13 on the shared 2-core machine with the console on
# SQLite, 1.7-2.3 ms per move; 3d42d91's two committed journal writes per move took 313.6 s in the first run's
# conditions). Measured only on the loaded machine: an idle one runs faster than estimated.
CONSOLE_SECONDS_PER_MOVE = 0.0015


# Hive's ACID bookkeeping: rows keyed by database and table name (most also by partition name), not by id, that follow
# a rename (TxnHandler.onRename's tables, in its order).
ACID_BOOKKEEPING = (
    TransactionComponent,
    CompletedTransactionComponent,
    HiveLock,
    CompactionQueueEntry,
    CompletedCompaction,
    WriteSetEntry,
    TransactionWriteId,
    NextWriteId,
    CompactionMetric,
)


def snapshot(state: TableState, **changes: object) -> TableSnapshot:
    """The steward-facing view of ``state``, with ``changes`` applied for the after-image."""
    base = TableSnapshot(
        database=state.ref.database,
        name=state.ref.table,
        type=state.table_type,
        owner=state.owner,
        location=state.location,
        input_format=state.input_format,
        output_format=state.output_format,
        serde_lib=state.serde_lib,
        columns=tuple((c.name, c.type, c.comment) for c in state.columns),
        partition_keys=tuple((k.name, k.type) for k in state.partition_keys),
        params=tuple(sorted(state.params.items())),
        serde_params=tuple(sorted(state.serde_params.items())),
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def hive_seconds(partitions: int, statistics: int) -> float:
    """Hive's time for ``partitions`` partition round trips and ``statistics`` statistics rows deleted."""
    cost = settings.CATALOG_HIVE_COST
    return round(
        cost["base_seconds"] + (cost["partition_ms"] * partitions + cost["statistic_ms"] * statistics) / 1000, 2
    )


def console_seconds(steps: tuple[Step, ...], moves: int = 0) -> float:
    """The console's time for ``steps`` (rows changed) and ``moves`` directories moved."""
    rows = sum(max(step.expected_rows, 0) for step in steps)
    return round(CONSOLE_SECONDS_BASE + CONSOLE_SECONDS_PER_ROW * rows + CONSOLE_SECONDS_PER_MOVE * moves, 3)


def replication_source(metastore: Metastore, *databases: str) -> bool:
    """Whether any of ``databases`` is a replication source (a non-empty ``repl.source.for`` parameter)."""
    return (
        DatabaseParam.objects.using(metastore.alias)
        .filter(database__name__in=databases, key="repl.source.for")
        .exclude(value="")
        .exists()
    )


def acid_warnings(metastore: Metastore, state: TableState) -> list[Finding]:
    """Open transactions and locks on the table (TXN_COMPONENTS, HIVE_LOCKS)."""
    alias, db, name = metastore.alias, state.ref.database, state.ref.table
    findings = []
    txns = TransactionComponent.objects.using(alias).filter(database=db, table=name).values("txn_id").distinct().count()
    if txns:
        findings.append(
            Finding("open_transactions", "acid", f"{txns} open transaction(s) write to {db}.{name}.", "warning")
        )
    locks = HiveLock.objects.using(alias).filter(database=db, table=name).count()
    if locks:
        findings.append(
            Finding("locks_held", "acid", f"{locks} lock(s) are held or waited for on {db}.{name}.", "warning")
        )
    return findings


def build_preview(
    metastore: Metastore,
    state: TableState,
    spec: AlterSpec,
    *,
    steps: list[Step],
    after: TableSnapshot,
    blockers: list[Finding],
    warnings: list[Finding] = (),  # type: ignore[assignment]
    moves: tuple[DirectoryMove, ...] = (),
    partitions_touched: int = 0,
    statistics_moved: int = 0,
    statistics_dropped: int = 0,
    drops: int = 0,
    columns_changed: bool = False,
    hive: HiveComparison | None = None,
    inverse: dict | None = None,
    move_contexts: Mapping[str, MoveContext] | None = None,
    affected: PartitionsAffected | None = None,
    data_copy: DataCopy | None = None,
    swapped_back: int = 0,
    directories_created: tuple[str, ...] = (),
    directories_removed: tuple[str, ...] = (),
    table_lock: bool = False,
    hive_write: bool = False,
) -> Preview:
    """Assemble a :class:`Preview` from a planner's parts, with the risk and estimates derived from them.

    Every directory move passes the containment guard here (``move_contexts``: what the planner knows of each move,
    by source; a move without one is checked strictly), so no planner can leave it out."""
    frozen_steps = tuple(steps)
    copy_blockers, copy_warnings = object_store_move_findings(moves)
    warnings = [*warnings, *copy_warnings]
    form = check_alter_form(written_on_view=spec.on_view, is_view=state.is_view)
    blockers = [*form, *blockers, *move_blockers(metastore, moves, move_contexts or {}), *copy_blockers]
    before = snapshot(state)
    criteria = plan_criteria(
        before=before,
        after=after,
        moves=moves,
        warnings=warnings,
        partitions_touched=partitions_touched,
        statistics_moved=statistics_moved,
        statistics_dropped=statistics_dropped,
        drops=drops,
        columns_changed=columns_changed,
        spec=spec,
        data_copy=data_copy,
        swapped_back=swapped_back,
    )
    return Preview(
        metastore=metastore.name,
        schema_version=str(metastore.schema.version),
        spec=spec,
        statement=spec.to_ddl(),
        state_fingerprint=state.fingerprint,
        before=before,
        after=after,
        steps=frozen_steps,
        moves=moves,
        blockers=tuple(blockers),
        warnings=tuple(warnings),
        hive=hive or metadata_only_hive(metastore),
        estimated_seconds=console_seconds(frozen_steps, len(moves)),
        risk=risk_of(criteria),
        criteria=criteria,
        partitions_touched=partitions_touched,
        statistics_moved=statistics_moved,
        statistics_dropped=statistics_dropped,
        inverse=inverse or {},
        affected=affected,
        data_copy=data_copy,
        directories_created=directories_created,
        directories_removed=directories_removed,
        table_lock=table_lock,
        hive_write=hive_write,
    )


def metadata_only_hive(metastore: Metastore) -> HiveComparison:
    """Hive's cost for a change that touches only table-level rows."""
    return HiveComparison(str(metastore.schema.version), 0, 0, hive_seconds(0, 0))


def param_upsert_steps(
    sql: MetastoreSql, model: type, owner_field: str, owner_id: int, current: dict, values: tuple[tuple[str, str], ...]
) -> list[Step]:
    """One UPDATE or INSERT per key of a *_PARAMS table (a handful of keys: no set-based form needed)."""
    table, key_col, value_col, owner_col = (
        model._meta.db_table,
        sql.col(model, "key"),
        sql.col(model, "value"),
        sql.col(model, owner_field),
    )
    steps = []
    for key, value in values:
        if key in current:
            if current[key] == value:
                continue
            steps.append(
                Step(
                    f"Set {key} = {value}",
                    table,
                    "update",
                    f"UPDATE {sql.table(model)} SET {value_col} = %s WHERE {owner_col} = %s AND {key_col} = %s",
                    (value, owner_id, key),
                    1,
                )
            )
        else:
            steps.append(
                Step(
                    f"Add {key} = {value}",
                    table,
                    "insert",
                    f"INSERT INTO {sql.table(model)} ({owner_col}, {key_col}, {value_col}) VALUES (%s, %s, %s)",
                    (owner_id, key, value),
                    1,
                )
            )
    return steps


def param_delete_steps(sql: MetastoreSql, model: type, owner_field: str, owner_id: int, keys: list[str]) -> list[Step]:
    return [
        Step(
            f"Remove {key}",
            model._meta.db_table,
            "delete",
            f"DELETE FROM {sql.table(model)} WHERE {sql.col(model, owner_field)} = %s AND {sql.col(model, 'key')} = %s",
            (owner_id, key),
            1,
        )
        for key in keys
    ]
