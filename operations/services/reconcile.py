"""
Recovery of executions a dying process left RUNNING: did the metastore transaction commit, and what to do now.

``alter_execute`` moves directories under a journal (INTENDED, then MOVED) before it commits the metastore
transaction, and that transaction also writes the execution's commit marker (see ``commit_markers``). The
verdict is read from the marker alone, never from how the table looks (someone may have changed it since):

* marker present: the transaction committed. The journal's moves stay (records COMMITTED), the execution is
  RECONCILED (a relocation's swap: its record SWAPPED) and the marker is deleted;
* marker absent: it never committed, and the fence ``claim_commit_marker`` inserts makes sure it never will.
  Exactly the journalled moves are undone, the last first (destination → source, only where the destination
  exists and the source does not; only the parent directories the move created are removed), the records are
  RESTORED and the execution FAILED (a relocation's swap: the cleanup then removes its copy), and the rows it
  captured for a revert are removed. The journal plans every move before the first and marks them done in batches
  (``move_journal``), so an INTENDED record may have moved or not: the disk decides (source gone and destination
  there: moved, so moved back; source there and destination gone: never moved). A directory found at both ends or
  at neither is left for a person, named, and the execution stays RUNNING;
* the metastore cannot answer (unreachable, locked, or an execution recorded before markers existed): nothing
  is done and the execution is reported, for a later run.

An execution is looked at once it has journalled moves still open, or once it has been running longer than
``older_than`` seconds (``CATALOG_JOB_HEARTBEAT_TIMEOUT_SECONDS`` by default): one without moves has nothing
to move back, but its request and job wait for its verdict (``stuck_jobs``). A live execution is safe: the
fence waits for its transaction to end, and the execution is re-read afterwards and skipped if it finished.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import Q
from django.utils import timezone

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError
from catalog_admin.locations import filesystem_for
from catalog_admin.models import Sequence
from catalog_admin.selectors.metastores import get_metastore
from operations.lifecycle import heartbeat_timeout
from operations.models import DirectoryMoveRecord, Execution
from operations.services.audit import record_audit
from operations.services.commit_markers import PREFIX, claim_commit_marker, drop_commit_marker
from operations.services.relocation_cleanup import settle_relocation
from operations.services.row_capture import discard_captured_rows

__all__ = (
    "MoveOutcome",
    "Reconciliation",
    "reconcile_execution",
    "reconcile_executions",
    "silence_limit",
    "sweep_commit_markers",
)

logger = logging.getLogger(__name__)

OPEN_MOVES = (DirectoryMoveRecord.State.INTENDED, DirectoryMoveRecord.State.MOVED)
ACTOR = "system:reconcile_executions"
COMMITTED = "its commit marker is in the metastore"
NOT_COMMITTED = "no commit marker in the metastore"


@dataclass(frozen=True)
class MoveOutcome:
    """What happened (or would happen) to one journalled move."""

    source: str
    destination: str
    action: str  # moved back | already back | never moved | kept (committed) | conflict: …


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


def silence_limit(older_than: float | None = None) -> timedelta:
    """How long a RUNNING execution or job may show no sign of life before it is taken as abandoned: ``older_than``
    seconds when the operator says so, else the jobs' heartbeat timeout."""
    return heartbeat_timeout() if older_than is None else timedelta(seconds=older_than)


def reconcile_executions(
    *,
    dry_run: bool = False,
    metastore: str | None = None,
    execution_id: int | None = None,
    older_than: float | None = None,
) -> list[Reconciliation]:
    """Settle every RUNNING execution with open journal records or running longer than ``older_than`` seconds
    (optionally of one metastore or one execution); with ``dry_run`` only report what would be done."""
    cutoff = timezone.now() - silence_limit(older_than)
    executions = Execution.objects.filter(state=Execution.State.RUNNING).filter(
        Q(moves__state__in=OPEN_MOVES) | Q(started_at__lte=cutoff)
    )
    if metastore:
        executions = executions.filter(metastore=metastore)
    if execution_id is not None:
        executions = executions.filter(pk=execution_id)
    return [reconcile_execution(execution, dry_run=dry_run) for execution in executions.distinct().order_by("pk")]


def sweep_commit_markers(*, dry_run: bool = False, metastore: str | None = None) -> int:
    """Delete the markers of executions already finished (left when a process died between recording the outcome
    and deleting the marker); markers this console does not know (another console's) stay. Returns how many."""
    swept = 0
    for config in settings.METASTORE_CONFIGS:
        if metastore and config.name != metastore:
            continue
        try:
            found = get_metastore(config.name)
            names = list(
                Sequence.objects.using(found.alias).filter(name__startswith=PREFIX).values_list("name", flat=True)
            )
            finished = list(
                Execution.objects.filter(commit_marker__in=names)
                .exclude(state=Execution.State.RUNNING)
                .values_list("commit_marker", flat=True)
            )
            if finished and not dry_run:
                with allow_metastore_writes(), transaction.atomic(using=found.alias):
                    Sequence.objects.using(found.alias).filter(name__in=finished).delete()
        except (ApplicationError, DatabaseError):
            logger.exception("Could not sweep commit markers on %s", config.name)
            continue
        swept += len(finished)
    return swept


def reconcile_execution(execution: Execution, *, dry_run: bool = False) -> Reconciliation:
    """Decide one RUNNING execution from its commit marker and settle it (see the module docstring)."""
    if not execution.commit_marker:
        return _undecided(execution, "it was recorded before commit markers existed; check it by hand", dry_run)
    try:
        metastore = get_metastore(execution.metastore)
    except ApplicationError as exc:
        return _undecided(execution, f"the metastore cannot be read: {exc.message}", dry_run)
    try:
        with allow_metastore_writes(), transaction.atomic(using=metastore.alias):
            committed = claim_commit_marker(metastore, execution.commit_marker)
            result = _settle(execution, committed, dry_run)
            if dry_run:
                transaction.set_rollback(True, using=metastore.alias)
            elif result.committed is not None or not committed:
                drop_commit_marker(metastore, execution.commit_marker)  # the settled marker, or our fence
            return result
    except DatabaseError as exc:
        logger.exception("Could not reconcile execution %s", execution.pk)
        return _undecided(execution, f"a database did not answer: {_first_line(exc)}", dry_run)


def _settle(execution: Execution, committed: bool, dry_run: bool) -> Reconciliation:
    execution.refresh_from_db()
    if execution.state != Execution.State.RUNNING:
        return _undecided(execution, f"it finished meanwhile ({execution.state})", dry_run)
    records = list(execution.moves.filter(state__in=OPEN_MOVES).order_by("-pk"))
    if committed:
        return _settle_committed(execution, records, COMMITTED, dry_run)
    return _settle_rolled_back(execution, records, NOT_COMMITTED, dry_run)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _settle_committed(
    execution: Execution, records: list[DirectoryMoveRecord], reason: str, dry_run: bool
) -> Reconciliation:
    moves = tuple(MoveOutcome(r.source, r.destination, "kept (committed)") for r in reversed(records))
    if not dry_run:
        DirectoryMoveRecord.objects.filter(pk__in=[r.pk for r in records]).update(
            state=DirectoryMoveRecord.State.COMMITTED, updated_at=timezone.now()
        )
        _finish(execution, Execution.State.RECONCILED, error="")
        settle_relocation(execution)
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
        discard_captured_rows(execution)  # nothing committed: nothing to revert
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
    metastore = record.execution.metastore
    filesystem = filesystem_for(record.destination, metastore)
    source_exists, destination_exists = (
        filesystem_for(record.source, metastore).exists(record.source),
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
    elif source_exists and destination_exists is False:  # moved back already, or planned and never started
        action = "never moved" if record.state == DirectoryMoveRecord.State.INTENDED else "already back"
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
