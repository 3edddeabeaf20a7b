"""Pieces every planner uses: snapshots, Hive cost estimates, risk, ACID warnings."""

from __future__ import annotations

from dataclasses import replace

from django.conf import settings

from catalog_admin.models import HiveLock, TransactionComponent
from catalog_admin.selectors.metastores import Metastore
from operations.preview import DirectoryMove, Step, TableSnapshot
from operations.rules import Finding
from operations.table_state import TableState

__all__ = (
    "acid_warnings",
    "console_seconds",
    "hive_seconds",
    "risk_level",
    "snapshot",
)

# Calibrated on this machine kind from Spark's Hive 2.3 client (docs/benchmarks.md, shared witness notes):
# ~3.2 ms per partition rewritten and ~0.7 ms per statistics row deleted, plus client overhead.
HIVE_SECONDS_BASE = 0.5
HIVE_SECONDS_PER_PARTITION = 0.0032
HIVE_SECONDS_PER_STATISTIC = 0.0007
# The console's set-based statements (measured by benchmarks/alter.py on PostgreSQL).
CONSOLE_SECONDS_BASE = 0.05
CONSOLE_SECONDS_PER_ROW = 0.00002


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
    return round(
        HIVE_SECONDS_BASE + HIVE_SECONDS_PER_PARTITION * partitions + HIVE_SECONDS_PER_STATISTIC * statistics, 2
    )


def console_seconds(steps: tuple[Step, ...]) -> float:
    rows = sum(max(step.expected_rows, 0) for step in steps)
    return round(CONSOLE_SECONDS_BASE + CONSOLE_SECONDS_PER_ROW * rows, 3)


def risk_level(
    *, moves: tuple[DirectoryMove, ...], partitions_touched: int, statistics_dropped: int, drops: int = 0,
    metadata_changes: int = 0,
) -> str:  # fmt: skip
    """high: data moved, statistics lost, partitions dropped or many partitions touched; medium: any partition or
    column-level change; low: table-level metadata only."""
    many = getattr(settings, "CATALOG_HIGH_RISK_PARTITIONS", 10_000)
    if moves or statistics_dropped or drops or partitions_touched > many:
        return "high"
    if partitions_touched or metadata_changes:
        return "medium"
    return "low"


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
