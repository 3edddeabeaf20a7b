"""ACID state for the demo: transactions, components, locks, write ids and compactions."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from catalog_admin.models import (
    CompactionMetric,
    CompactionQueueEntry,
    CompletedCompaction,
    CompletedTransactionComponent,
    HiveLock,
    NextWriteId,
    Transaction,
    TransactionComponent,
    TransactionWriteId,
    WriteSetEntry,
)
from catalog_admin.seeding.content import ABORTED_PARTITION, ACID_JOBS, NEXT_WRITE_IDS, OPEN_PARTITION
from catalog_admin.seeding.context import Context

__all__ = ("plan_acid_state",)


def plan_acid_state(ctx: Context, created: set[tuple[str, str]]) -> None:
    """Open txns (one holding a lock the other waits for), an aborted and a committed one, write ids, compactions."""
    if ACID_JOBS in created:
        _plan_transactions(ctx, ACID_JOBS)
    if ctx.schema.has_write_ids:
        for database, table in sorted(created):
            ctx.add(NextWriteId, database=database, table=table, next=NEXT_WRITE_IDS[(database, table)])
    for target in sorted(created):
        _plan_compactions(ctx, target, ABORTED_PARTITION if target == ACID_JOBS else None)


def _plan_transactions(ctx: Context, target: tuple[str, str]) -> None:
    committed, running, waiting, aborted = (ctx.plan.take("txn") for _ in range(4))
    for txn_id, state, user in ((running, "o", "etl"), (waiting, "o", "analyst"), (aborted, "a", "etl")):
        ctx.add(
            Transaction,
            id=txn_id,
            state=state,
            started=ctx.now_ms - 600_000,
            last_heartbeat=ctx.now_ms - 5_000,
            user=user,
            host=f"{user}-host-1.example.com",
            agent_info=f"hive_{user}_{ctx.now}",
            heartbeat_count=120,
            type=0,
        )
    component = {"database": target[0], "table": target[1], "operation_type": "i"}
    ctx.add(TransactionComponent, txn_id=running, partition=OPEN_PARTITION, write_id=3, **component)
    ctx.add(TransactionComponent, txn_id=aborted, partition=ABORTED_PARTITION, **component)
    if ctx.schema.has_write_ids:
        ctx.add(TransactionWriteId, txn_id=running, database=target[0], table=target[1], write_id=3)
    held, queued = ctx.plan.take("lock"), ctx.plan.take("lock")
    lock = {"int_id": 1, "database": target[0], "table": target[1], "partition": OPEN_PARTITION}
    ctx.add(HiveLock, ext_id=held, txn_id=running, state="a", type="w", **lock, **_lock_holder(ctx, "etl", 590))
    ctx.add(
        HiveLock,
        ext_id=queued,
        txn_id=waiting,
        state="w",
        type="e",
        blocked_by_ext_id=held,
        blocked_by_int_id=1,
        **lock,
        **_lock_holder(ctx, "analyst", None),
    )
    # The update that wrote write id 2 committed after the others opened (commit id: the highest txn id then).
    written = {"database": target[0], "table": target[1], "partition": OPEN_PARTITION}
    commit_time = datetime.fromtimestamp(ctx.now - 300, UTC).replace(tzinfo=None)
    ctx.add(
        CompletedTransactionComponent, txn_id=committed, timestamp=commit_time, write_id=2, update_delete="Y", **written
    )
    ctx.add(WriteSetEntry, txn_id=committed, commit_id=aborted, operation_type="u", **written)
    metric = {"metric_type": "HIVE_ACID_NUM_DELTAS", "value": 2, "version": 1}  # delta_1 and delta_2 (Hive 4)
    ctx.add(CompactionMetric, database=target[0], table=target[1], partition=ABORTED_PARTITION, **metric)


def _lock_holder(ctx: Context, user: str, held_seconds: int | None) -> dict[str, Any]:
    return {
        "last_heartbeat": ctx.now_ms - 3_000,
        "acquired_at": ctx.now_ms - held_seconds * 1000 if held_seconds else None,
        "user": user,
        "host": f"{user}-host-1.example.com",
        "heartbeat_count": 40,
        "agent_info": f"hive_{user}_{ctx.now}",
    }


def _plan_compactions(ctx: Context, target: tuple[str, str], partition: str | None) -> None:
    """One initiated major compaction, and a succeeded and a failed one in the history."""
    common = {"database": target[0], "table": target[1], "partition": partition, "run_as": "hive"}
    common |= {"highest_txn_id": 1, "highest_write_id": 2, "enqueue_time": ctx.now_ms - 3_600_000}
    ctx.add(CompactionQueueEntry, id=ctx.plan.take("compaction"), state="i", type="a", **common)
    history = (("s", "i", 86_400, ""), ("f", "a", 7_200, "java.io.IOException: Not enough history available"))
    for state, kind, ago, error in history:
        ctx.add(
            CompletedCompaction,
            id=ctx.plan.take("compaction"),
            state=state,
            type=kind,
            start=ctx.now_ms - ago * 1000,
            end=ctx.now_ms - (ago - 100) * 1000,
            worker_id="hms-1.example.com-42",
            error_message=error or None,
            **common,
        )
