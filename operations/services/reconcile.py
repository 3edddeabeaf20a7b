"""
Recovery of executions that a dying process left RUNNING with directories moved (the move journal).

``alter_execute`` moves directories before it commits the metastore transaction, and journals each move
(INTENDED, then MOVED). If the process dies after a move, two cases are possible:

* the transaction never committed: the metastore is still at the previewed state (same fingerprint, the
  table still under its old name, no storage descriptor pointing at a moved destination). The directories
  are moved back (destination → source, only where the destination exists and the source does not), the
  records marked RESTORED and the execution FAILED;
* the transaction committed but the journal was not updated: the records are marked COMMITTED and the
  execution RECONCILED.

The table row is locked while deciding (as execution locks it), so an execution still running in another
process is never mistaken for a dead one: it is re-read after the lock and skipped once it has finished.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, NotFound
from catalog_admin.locations import filesystem_for
from catalog_admin.models import StorageDescriptor
from catalog_admin.selectors.metastores import Metastore, get_metastore
from operations.models import DirectoryMoveRecord, Execution
from operations.services.audit import record_audit
from operations.specs import TableRef
from operations.table_state import read_table_state

__all__ = ("MoveOutcome", "Reconciliation", "reconcile_executions")

logger = logging.getLogger(__name__)

OPEN_MOVES = (DirectoryMoveRecord.State.INTENDED, DirectoryMoveRecord.State.MOVED)
ACTOR = "system:reconcile_executions"


@dataclass(frozen=True)
class MoveOutcome:
    """What happened (or would happen) to one journalled move."""

    source: str
    destination: str
    action: str  # moved back | already back | kept (committed) | conflict: …


@dataclass(frozen=True)
class Reconciliation:
    """One execution left RUNNING: whether its transaction committed, why, and what was done about it."""

    execution_id: int
    metastore: str
    statement: str
    committed: bool | None  # None: could not be decided (metastore unavailable)
    reason: str
    moves: tuple[MoveOutcome, ...]
    state: str  # the execution's state afterwards (unchanged on a dry run, a conflict or an undecided case)
    dry_run: bool = False


def reconcile_executions(
    *, dry_run: bool = False, metastore: str | None = None, execution_id: int | None = None
) -> list[Reconciliation]:
    """Settle every RUNNING execution with INTENDED or MOVED journal records (optionally of one metastore or one
    execution); with ``dry_run`` only report what would be done."""
    executions = Execution.objects.filter(state=Execution.State.RUNNING, moves__state__in=OPEN_MOVES).distinct()
    if metastore:
        executions = executions.filter(metastore=metastore)
    if execution_id is not None:
        executions = executions.filter(pk=execution_id)
    return [_reconcile(execution, dry_run=dry_run) for execution in executions.order_by("pk")]


def _reconcile(execution: Execution, *, dry_run: bool) -> Reconciliation:
    try:
        metastore = get_metastore(execution.metastore)
    except ApplicationError as exc:
        return _undecided(execution, f"the metastore cannot be read: {exc.message}", dry_run)
    ref = TableRef(execution.database_name, execution.table_name)
    # Lock the table row as execution does, so a live execution finishes before we look at it.
    with allow_metastore_writes(), transaction.atomic(using=metastore.alias):
        committed, reason = _committed(metastore, execution, ref)
        execution.refresh_from_db()
        if execution.state != Execution.State.RUNNING:
            return _undecided(execution, f"it finished meanwhile ({execution.state})", dry_run)
        records = list(execution.moves.filter(state__in=OPEN_MOVES).order_by("-pk"))
        if committed:
            return _settle_committed(execution, records, reason, dry_run)
        return _settle_rolled_back(execution, records, reason, dry_run)


def _committed(metastore: Metastore, execution: Execution, ref: TableRef) -> tuple[bool, str]:
    """Whether the execution's metastore transaction committed, and the evidence."""
    try:
        state = read_table_state(metastore, ref, for_update=True)
    except NotFound:
        return True, f"{ref.database}.{ref.table} no longer exists under that name"
    if state.fingerprint != execution.fingerprint:
        return True, f"{ref.database}.{ref.table} is no longer at the previewed state"
    destinations = list(execution.moves.filter(state__in=OPEN_MOVES).values_list("destination", flat=True))
    if _referenced(metastore, destinations):
        return True, "the metastore already points at a moved directory"
    return False, f"{ref.database}.{ref.table} is still at the previewed state"


def _referenced(metastore: Metastore, locations: list[str]) -> bool:
    """Whether a storage descriptor points at one of ``locations`` (e.g. a renamed partition's new directory)."""
    if not locations:
        return False
    condition = Q()
    for location in locations:
        condition |= Q(location=location) | Q(location=location.rstrip("/") + "/")
    return StorageDescriptor.objects.using(metastore.alias).filter(condition).exists()


def _settle_committed(
    execution: Execution, records: list[DirectoryMoveRecord], reason: str, dry_run: bool
) -> Reconciliation:
    moves = tuple(MoveOutcome(r.source, r.destination, "kept (committed)") for r in reversed(records))
    if not dry_run:
        DirectoryMoveRecord.objects.filter(pk__in=[r.pk for r in records]).update(
            state=DirectoryMoveRecord.State.COMMITTED, updated_at=timezone.now()
        )
        _finish(execution, Execution.State.RECONCILED, error="")
        _audit(execution, committed=True, reason=reason, moves=moves)
    return _result(execution, True, reason, moves, dry_run)


def _settle_rolled_back(
    execution: Execution, records: list[DirectoryMoveRecord], reason: str, dry_run: bool
) -> Reconciliation:
    outcomes = []
    settled = True
    for record in records:  # the last move first, as the in-process restore does
        action = _move_back(record, dry_run)
        settled = settled and not action.startswith("conflict")
        outcomes.append(MoveOutcome(record.source, record.destination, action))
    moves = tuple(reversed(outcomes))
    if not dry_run and settled:
        moved_back = sum(outcome.action == "moved back" for outcome in moves)
        _finish(
            execution,
            Execution.State.FAILED,
            error=f"The process died before the metastore transaction committed; nothing was changed in the "
            f"metastore, and reconcile_executions moved {moved_back} directory(ies) back.",
        )
        _audit(execution, committed=False, reason=reason, moves=moves)
    return _result(execution, False, reason, moves, dry_run)


def _move_back(record: DirectoryMoveRecord, dry_run: bool) -> str:
    """Move one directory back (destination → source) when only the destination exists, and journal it."""
    filesystem = filesystem_for(record.destination)
    source_exists, destination_exists = (
        filesystem_for(record.source).exists(record.source),
        filesystem.exists(record.destination),
    )
    if destination_exists and source_exists is False:
        if dry_run:
            return "moved back"
        try:
            filesystem.rename(record.destination, record.source)
        except OSError as exc:
            logger.exception("Could not move %s back to %s", record.destination, record.source)
            return f"conflict: moving back failed ({exc})"
        if record.created_parents:
            filesystem.prune_empty_parents(record.destination, levels=record.created_parents)
        action = "moved back"
    elif source_exists and destination_exists is False:
        action = "already back"
    else:
        return f"conflict: source {_exists(source_exists)}, destination {_exists(destination_exists)}; left alone"
    if not dry_run:
        record.state = DirectoryMoveRecord.State.RESTORED
        record.save(update_fields=["state", "updated_at"])
    return action


def _exists(flag: bool | None) -> str:
    return {True: "exists", False: "is missing", None: "cannot be checked"}[flag]


def _finish(execution: Execution, state: str, *, error: str) -> None:
    execution.state = state
    execution.error = error
    execution.finished_at = timezone.now()
    execution.save(update_fields=["state", "error", "finished_at"])


def _audit(execution: Execution, *, committed: bool, reason: str, moves: tuple[MoveOutcome, ...]) -> None:
    record_audit(
        actor=ACTOR,
        action="reconcile",
        outcome=execution.state,
        execution_id=execution.pk,
        metastore=execution.metastore,
        database_name=execution.database_name,
        table_name=execution.table_name,
        statement=execution.statement,
        details={"committed": committed, "reason": reason, "moves": [m.__dict__ for m in moves]},
    )


def _result(
    execution: Execution, committed: bool, reason: str, moves: tuple[MoveOutcome, ...], dry_run: bool
) -> Reconciliation:
    return Reconciliation(
        execution_id=execution.pk,
        metastore=execution.metastore,
        statement=execution.statement,
        committed=committed,
        reason=reason,
        moves=moves,
        state=execution.state,
        dry_run=dry_run,
    )


def _undecided(execution: Execution, reason: str, dry_run: bool) -> Reconciliation:
    return Reconciliation(
        execution_id=execution.pk,
        metastore=execution.metastore,
        statement=execution.statement,
        committed=None,
        reason=reason,
        moves=(),
        state=execution.state,
        dry_run=dry_run,
    )
