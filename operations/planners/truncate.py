"""
``TRUNCATE TABLE t [PARTITION (…)]``, with Hive's rules (``TruncateTableAnalyzer.checkTruncateEligibility``, 4.0;
``DDLSemanticAnalyzer.analyzeTruncateTable``, 2.3 and 3.1): a view or a table that is not managed is refused
("Cannot truncate non-managed table"; 4.0's ``FORCE`` and ``external.table.purge`` are Hive's own to run), a
partition spec on an unpartitioned table is refused, a spec naming a key the table does not have is refused, a full
or partial spec selects the partitions it matches (``PartitionUtils.getPartitions``), none matching is refused (Hive:
"Partition not found" for a full spec).

A transactional table is truncated under Hive's EXCLUSIVE lock on it (``table_lock``: execution takes the lock as
``services/hive_locks`` does, lists the directories again under it and moves every entry, base and delta
directories alike, to the trash); on Hive 4 it also records the Hive transaction and write id Hive's truncate
leaves. What Hive does, per line:

- 2.3: no write ids; the files are deleted under the table's EXCLUSIVE lock. The console does the same.
- 3.1 (3.1.2, 3.1.3): the files are deleted under the table's EXCLUSIVE lock (``DDLSemanticAnalyzer
  .analyzeTruncateTable``'s DDL_EXCLUSIVE output, a ``NO_TXN`` lock component) in a transaction that allocates no
  write id (``TruncateTableDesc`` is a plain ``DDLDesc``; 3.1 has no ``WRITE_ID`` columns). The console does the same
  under its lock; the transaction Hive opens and commits leaves nothing behind but a used transaction id.
- 4.0: the statement's transaction allocates the table a write id (``TruncateTableDesc`` is a
  ``DDLDescWithWriteId``) and the metastore sets the truncated table's or partitions' ``WRITE_ID`` to it
  (``alterTableStatsForTruncate``). With ``hive.acid.truncate.usebase`` (its default) or lockless reads the files
  stay (``TRUNCATE_SKIP_DATA_DELETION``) and ``HMSHandler.addTruncateBaseFile`` writes an empty ``base_<writeId>``
  into each directory under a DDL_EXCL_WRITE lock, the Cleaner removing the old files later; otherwise the files are
  deleted under an EXCLUSIVE lock. The console takes that second path (its files to the trash) and records the same
  committed transaction and write id (``Preview.hive_write``: ``services/hive_writes``; the ``WRITE_ID`` updates take
  it as a ``NewWriteId`` parameter), so readers see a new snapshot of the table, as after Hive's truncate.

Open transactions writing the table and locks on it block the plan: Hive's statement would wait for them.

The data goes to the console's trash (``truncate_moves``), the directories stay, empty; the statistics reset as
Hive's metastore resets them (``truncate_stats``); Hive's events: one ALTER_TABLE for an unpartitioned table, one
ALTER_PARTITION per truncated partition (``HMSHandler.alterTableStatsForTruncate``).
"""

from __future__ import annotations

from catalog_admin.models import HiveLock, NextWriteId, Transaction, TransactionComponent
from catalog_admin.selectors.metastores import Metastore
from operations.containment import MoveContext
from operations.planners.common import build_preview, snapshot
from operations.planners.partitions.matching import matching_partitions
from operations.planners.truncate_moves import TABLE_UNIT, TruncatedDirectory, TruncateMoves, truncate_moves
from operations.planners.truncate_stats import truncate_stats_steps, write_id_steps
from operations.preview import HiveComparison, Preview
from operations.rules import Finding
from operations.specs import DropPartitions, PartitionPredicate, TruncateTable
from operations.table_state import TableState

__all__ = ("plan_truncate_table", "truncate_blockers")

RULE = "truncate"


def plan_truncate_table(metastore: Metastore, state: TableState, spec: TruncateTable) -> Preview:
    """The plan of a ``TRUNCATE TABLE`` on ``state``: a pure read."""
    blockers = truncate_blockers(metastore, state, spec)
    if state.is_transactional and not blockers:
        blockers += _transactional_findings(metastore, state)
    partitions = _matched(metastore, state, spec) if not blockers and state.is_partitioned else []
    if state.is_partitioned and not blockers and not partitions:
        blockers.append(Finding("no_partition_matches", RULE, f"No partition of {state.ref} matches {spec.to_ddl()}"))
    directories = _directories(state, partitions) if not blockers else []
    found = truncate_moves(state, directories)
    owners = [p["id"] for p in partitions] if state.is_partitioned else [state.table_id]
    stats = truncate_stats_steps(metastore, owners, partitioned=state.is_partitioned) if not blockers else None
    steps = stats.steps if stats else []
    statistics = stats.column_statistics if stats else 0
    hive_write = state.is_transactional and metastore.schema.capabilities.truncate_allocates_write_id
    if hive_write and not blockers:
        steps += write_id_steps(metastore, owners, partitioned=state.is_partitioned)
    moves = tuple(found.moves)
    return build_preview(
        metastore,
        state,
        spec,
        steps=steps,
        after=snapshot(state),
        blockers=blockers + found.blockers,
        warnings=_warnings(found) + ([_transactional_warning(metastore, state)] if state.is_transactional else []),
        moves=moves,
        move_contexts=found.contexts,
        partitions_touched=len(partitions),
        statistics_dropped=statistics,
        hive=HiveComparison(str(metastore.schema.version), len(partitions), statistics, 0.0),
        inverse={
            "truncated": len(directories),
            "partition_ids": owners if state.is_partitioned else [],
            "replaced_params": _replaced(state, stats.flags_inserted if stats else []),
            "trash": [m.destination for m in moves[:100]],
        },
        table_lock=state.is_transactional,
        hive_write=hive_write,
    )


def truncate_blockers(metastore: Metastore, state: TableState, spec: TruncateTable) -> list[Finding]:
    """Hive's refusals, before anything is read from the partitions or the disk."""
    if state.is_view or state.table_type != "MANAGED_TABLE":
        what = "a view" if state.is_view else f"a {state.table_type}"
        return [Finding("non_managed_table", RULE, f"Cannot truncate non-managed table {state.ref} ({what}).")]
    if spec.partition and not state.is_partitioned:
        return [Finding("not_partitioned", RULE, f"Partition spec for non-partitioned table {state.ref}.")]
    keys = {k.name for k in state.partition_keys}
    unknown = sorted({key for key, _value in spec.partition} - keys)
    if unknown:
        return [
            Finding(
                "unknown_partition_key",
                RULE,
                f"{', '.join(unknown)} is not a partition key of {state.ref}; keys: {', '.join(sorted(keys))}",
            )
        ]
    return []


def _transactional_findings(metastore: Metastore, state: TableState) -> list[Finding]:
    """What stands in the way of a transactional table's truncate: open transactions writing it and locks on it
    (Hive's statement would wait for them; the console's lock refuses instead)."""
    ref, alias = state.ref, metastore.alias
    findings = []
    written = TransactionComponent.objects.using(alias).filter(database=ref.database, table=ref.table)
    open_ids = Transaction.objects.using(alias).filter(state="o", id__in=written.values("txn_id"))
    txns = sorted(open_ids.values_list("id", flat=True))
    if txns:
        findings.append(
            Finding(
                "open_transactions",
                "acid",
                f"{len(txns)} open transaction(s) write to {ref} ({', '.join(map(str, txns[:10]))}): Hive's "
                "truncate would wait for them, and the console truncates only once they have ended.",
            )
        )
    locks = HiveLock.objects.using(alias).filter(database=ref.database, table=ref.table).count()
    if locks:
        findings.append(
            Finding(
                "locks_held",
                "acid",
                f"{locks} lock(s) are held or waited for on {ref}: Hive's truncate would wait for them, and the "
                "console truncates only once they are released.",
            )
        )
    return findings


def _transactional_warning(metastore: Metastore, state: TableState) -> Finding:
    """How the console truncates a transactional table, beside what Hive does on the metastore's line."""
    ref, line = state.ref, metastore.schema.version.line_name
    if not metastore.schema.has_write_ids:
        hive = f"as Hive {line} does (no write ids on this line)"
    else:
        row = NextWriteId.objects.using(metastore.alias).filter(database=ref.database, table=ref.table).first()
        write_id = row.next if row else 1  # TxnHandler.allocateTableWriteIds: no row yet starts at 1
        if metastore.schema.capabilities.truncate_allocates_write_id:
            hive = (
                f"as Hive {line} does with hive.acid.truncate.usebase=false, and records the committed Hive "
                f"transaction Hive's would leave: write id {write_id} (or the next one free when it runs) allocated "
                "to the table and set as the truncated table's or partitions' WRITE_ID, so readers see a new "
                f"snapshot of it. By default Hive {line} writes an empty base_{write_id} into each directory "
                "instead, leaving the old files to the Cleaner. Readers that take no Hive lock "
                "(hive.acid.lockless.reads.enabled) must not be reading it meanwhile"
            )
        else:
            hive = f"as Hive {line} does (its truncate allocates no write id: the table's next, {write_id}, stays)"
    return Finding(
        "transactional_truncate",
        RULE,
        f"{ref} is transactional: the console holds Hive's EXCLUSIVE lock on it while it lists the directories "
        f"again and moves their files (base and delta directories alike) to the trash, {hive}. Hive's readers and "
        "writers wait for the lock.",
        "warning",
    )


def _matched(metastore: Metastore, state: TableState, spec: TruncateTable) -> list[dict]:
    """The partitions a full or partial spec selects (all of them without a spec), by name."""
    predicates = tuple(PartitionPredicate(key, "=", value) for key, value in spec.partition)
    return matching_partitions(metastore, state, DropPartitions(target=spec.target, specs=(predicates,)))


def _directories(state: TableState, partitions: list[dict]) -> list[TruncatedDirectory]:
    if not state.is_partitioned:
        return [TruncatedDirectory(state.location, TABLE_UNIT, MoveContext(table_id=state.table_id))]
    enclosing = frozenset({state.sd_id}) if state.sd_id is not None else frozenset[int]()
    return [
        TruncatedDirectory(
            p["sd__location"], p["name"], MoveContext(sd_ids=frozenset({p["sd_id"]}), enclosing=enclosing)
        )
        for p in partitions
    ]


def _replaced(state: TableState, inserted: list[int]) -> dict[str, dict[str, list]]:
    """The flags the truncate inserts, for the revert to delete before it writes the old rows back."""
    if not inserted:
        return {}
    table = "PARTITION_PARAMS" if state.is_partitioned else "TABLE_PARAMS"
    return {table: {"owners": sorted(inserted), "keys": ["COLUMN_STATS_ACCURATE"]}}


def _warnings(found: TruncateMoves) -> list[Finding]:
    warnings = [
        Finding(
            "data_to_trash",
            RULE,
            "The data goes to the console's trash (never deleted by the truncate); a revert moves it back while the "
            "trash holds it.",
            "warning",
        )
    ]
    if found.missing:
        warnings.append(
            Finding(
                "directories_missing",
                RULE,
                f"{len(found.missing)} truncated directory(ies) do not exist (first: {found.missing[0]}): only "
                "their statistics reset.",
                "warning",
            )
        )
    return warnings
