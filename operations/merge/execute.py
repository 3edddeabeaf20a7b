"""
``merge_execute``: run an approved merge preview — reserve, copy the data its location rules move
(``operations.merge.data_copy``: verified, or nothing is published), copy the rows (invisible), publish (one
transaction) — journaled in a :class:`~operations.models.MergeImport`, so a crashed run resumes (``merge_resume``) or
reverts.

Reserve: every id range comes from the target's own allocators under the target's locks, in a short transaction
committed before any row is written, and the journal row right after it (a crash between the two wastes ids, never
hands a range to two owners). Hive allocates the same way, on every version: DataNucleus's value generator reads and
raises ``SEQUENCE_TABLE.NEXT_VAL`` (ObjectStore through JDO), and Hive 4's direct-SQL inserts ask the same generator
(standalone-metastore/metastore-server/…/metastore/DirectSqlInsertPart.java ``getDataStoreId``:
``ec.getStoreManager().getValueGenerationStrategyValue``); no carried table is allocated by ``MAX(id)``. So a live
Hive keeps allocating past the reserved range, and its cached blocks lie below it.

Publish: on PostgreSQL a large publish checks its foreign keys once each after its rows instead of by a trigger per
row (``services.batched_foreign_keys.batched_insert_checks``; a row naming a missing key refuses the merge and nothing
is published), then writes the notification events built meanwhile, and commits.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from django.db import DatabaseError, connections, transaction

from catalog_admin.db import allow_metastore_writes, check_metastore_statement
from catalog_admin.errors import ApplicationError, ErrorCode, metastore_unavailable
from catalog_admin.ids import reserve_ids
from operations.merge.copy_plan import build_plan, check_supported, plan_secrets
from operations.merge.data_copy import copy_merge_data, data_journal
from operations.merge.engine import Elsewhere
from operations.merge.events import PrebuiltEvents, prebuild_merge_events, write_merge_events
from operations.merge.plan import MergePreview
from operations.merge.preview import merge_preview
from operations.merge.reads import MetastoreReader
from operations.merge.request import LocationRule, MergeRequest
from operations.merge.revert import imported_rows
from operations.merge.scope import CARRIED_TABLES, sequence_of
from operations.merge.workflow import MERGE_FIELDS, MergeChange
from operations.models import Execution, MergeImport
from operations.rules import blocked_error
from operations.services.batched_foreign_keys import BatchedInsertChecks, OwnKeys, batched_insert_checks
from operations.spark.programs import merge as program
from operations.staleness import compare_plans, stale_message, stale_preview_error

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ("UNFINISHED", "merge_execute", "merge_resume", "request_of", "unfinished_merges")

UNFINISHED = MergeImport.UNFINISHED

BY_NAME = {t.name: t for t in CARRIED_TABLES}


def merge_execute(
    request: MergeRequest,
    approved: MergePreview,
    *,
    report: Callable[[dict], None] = lambda e: None,
    spark: SparkSession | None = None,
    execution: Execution | None = None,
    elsewhere: Elsewhere | None = None,
) -> MergeImport:
    """Re-preview, refuse when the plan changed since ``approved`` or is blocked, then reserve, copy and publish."""
    current = merge_preview(request)
    staleness = compare_plans(MergeChange(approved), MergeChange(current), MERGE_FIELDS)
    if staleness.is_stale:
        message = stale_message("The merge", "preview it again", since="it was previewed", staleness=staleness)
        raise stale_preview_error(message, staleness)
    if not current.is_executable:
        raise blocked_error(MergeChange(current).blockers)
    merge = _reserve(current, execution)
    spans = {t.table: t.source_keys for t in current.tables}
    return _run(merge, report, spark, key_spans=spans, elsewhere=elsewhere)


def merge_resume(
    merge: MergeImport,
    *,
    report: Callable[[dict], None] = lambda e: None,
    spark: SparkSession | None = None,
    elsewhere: Elsewhere | None = None,
) -> MergeImport:
    """Finish a merge that stopped before publishing: completed units are skipped, the rest copied, then published.
    A merge whose publishing transaction committed (the crash came after it) is only marked published."""
    if merge.state not in UNFINISHED:
        raise ApplicationError(
            ErrorCode.INVALID_STATE, f"Merge #{merge.pk} is {merge.state}: nothing to resume.", {"state": merge.state}
        )
    if _is_published(merge):
        return _finish(merge, MergeImport.State.PUBLISHED, "")
    return _run(merge, report, spark, elsewhere=elsewhere)


def unfinished_merges(source: str, target: str) -> list[MergeImport]:
    """Merges from ``source`` into ``target`` that stopped before publishing (newest first): a page previewing the
    same merge says one is resumable (``merge_resume``) or revertible instead of starting another."""
    rows = MergeImport.objects.filter(source=source, target=target, state__in=UNFINISHED)
    return list(rows.order_by("-created_at"))


def request_of(merge: MergeImport) -> MergeRequest:
    """The journaled request as a :class:`MergeRequest`."""
    data = merge.request
    return MergeRequest(
        source=data["source"],
        target=data["target"],
        databases=tuple(data["databases"]),
        renames=tuple(sorted(data["renames"].items())),
        location_rules=tuple(LocationRule(r["old"], r["new"]) for r in data["location_rules"]),
    )


# Reserve -----------------------------------------------------------------------------------------------------------


def _reserve(preview: MergePreview, execution: Execution | None) -> MergeImport:
    request = preview.request
    src, tgt = MetastoreReader(request.source), MetastoreReader(request.target)
    database_ids = _database_ids(src, request)
    check_supported(preview)
    spans = {t.table: t.source_ids for t in preview.tables if t.source_ids and tgt.has_table(t.table)}
    try:
        with allow_metastore_writes(), transaction.atomic(using=request.target):
            starts = {
                table: reserve_ids(request.target, table, BY_NAME[table].id_column or "", sequence_of(table) or "",
                                   high - low + 1)
                for table, (low, high) in sorted(spans.items())  # one lock order for every merge
            }  # fmt: skip
    except DatabaseError as exc:
        raise metastore_unavailable(exc) from exc
    return MergeImport.objects.create(
        source=request.source,
        target=request.target,
        request=request.as_dict(),
        fingerprint=preview.fingerprint,
        database_ids=database_ids,
        id_ranges={t: [starts[t], starts[t] + high - low] for t, (low, high) in spans.items()},
        offsets={t: starts[t] - low for t, (low, _) in spans.items()},
        execution=execution,
        data_copy=data_journal(preview.data_copy),  # the data to copy, journaled with the ids: a resume copies it too
    )


def _database_ids(src: MetastoreReader, request: MergeRequest) -> list[int]:
    marks = ", ".join(["%s"] * len(request.databases))
    sql = f'SELECT "DB_ID" FROM "DBS" WHERE LOWER("NAME") IN ({marks})'
    if src.has_table("CTLGS"):
        sql += " AND \"CTLG_NAME\" = 'hive'"
    return sorted(int(i) for (i,) in src.rows(sql, request.databases))


# Copy and publish --------------------------------------------------------------------------------------------------


def _run(
    merge: MergeImport,
    report: Callable[[dict], None],
    spark: SparkSession | None,
    key_spans: dict[str, tuple[int, int] | None] | None = None,
    elsewhere: Elsewhere | None = None,
) -> MergeImport:
    """The data the location rules move, copied and verified; then the program on the journaled plan (cut by the
    executed preview's ``key_spans``, or read again on resume): its copy units, each journaled once done; then the
    publish (:func:`_publish`). The copies run in this process, or ``elsewhere`` (a Spark driver given each program's
    password-free plan)."""
    merge.state, merge.error = MergeImport.State.COPYING, ""
    merge.save(update_fields=["state", "error", "updated_at"])

    def journal(units: list[str]) -> None:
        merge.completed = list(dict.fromkeys([*merge.completed, *units]))
        merge.save(update_fields=["completed", "updated_at"])

    def journaled(event: dict[str, Any]) -> None:
        if "unit_done" in event:
            journal([event["unit_done"]])
        report(event)

    try:
        # the data the location rules move: verified before any publish
        copy_merge_data(merge, report, spark, elsewhere)
        plan = build_plan(
            request_of(merge), merge.database_ids, merge.offsets, merge.completed, id_spans=_reserved_spans(merge),
            key_spans=key_spans,
        )  # fmt: skip
        in_memory = _guarded(program.with_passwords(plan, plan_secrets(plan)), merge.target)  # never written
        with allow_metastore_writes():
            if elsewhere is None:
                program.copy(spark, in_memory, journaled)
            else:
                check_metastore_statement(merge.target, "INSERT")  # the driver's executors write on their own
                units = {program.unit_key(s, r[0]) for s in plan["steps"] if s["phase"] == "copy" for r in s["ranges"]}
                elsewhere("merge", {**plan, "phases": ["copy"]}, lambda done: journal([k for k in done if k in units]))
        report({"phase": "publish"})  # the point of no return: a cancel is taken only before it
        events = prebuild_merge_events(merge, in_memory)  # built while the rows publish
        _publish(merge, in_memory, report, spark, events)
    except BaseException as exc:
        _finish(merge, MergeImport.State.FAILED, f"{type(exc).__name__}: {exc}")
        raise
    return _finish(merge, MergeImport.State.PUBLISHED, "")


def _guarded(plan: dict[str, Any], target: str) -> dict[str, Any]:
    """``plan`` whose target connections pass every statement through the metastore write guard."""
    return {**plan, "target": {**plan["target"], "guard": partial(check_metastore_statement, target)}}


def _publish(
    merge: MergeImport,
    plan: dict[str, Any],
    report: Callable[[dict], None],
    spark: Any,
    events: PrebuiltEvents | None = None,
) -> None:
    """The publishing transaction, opened here (after the copy: the worker's target connection does not idle in a
    transaction while units are copied) on this process's connection under the write guard: the program's rows and
    the notification events (``operations.merge.events``; ``events``: built meanwhile in another thread, numbered
    and inserted here) commit together."""
    progress: dict[str, Any] = {}  # the publish's last progress, which the events' line repeats

    def reported(event: dict) -> None:
        progress.update({k: v for k, v in event.items() if k in ("partitions_done", "partitions_total")})
        report(event)

    try:
        with allow_metastore_writes(), transaction.atomic(using=merge.target):
            checks = _batched_checks(merge, plan)
            program.publish(spark, plan, reported, into=connections[merge.target])
            if checks is not None:
                started = time.monotonic()
                with connections[merge.target].cursor() as cursor:
                    checks.check(cursor)
                report({**progress, "message": f"Foreign keys: {len(checks.references)} checked once each over the "
                        f"published rows in {time.monotonic() - started:.1f} s"})  # fmt: skip
            written = sum(write_merge_events(merge, events).values())
            if written:
                report({**progress, "message": f"Events: {written} written{_built(events)}"})
    finally:
        if events is not None:
            events.discard()


def _batched_checks(merge: MergeImport, plan: dict[str, Any]) -> BatchedInsertChecks | None:
    """The publish's foreign keys checked once each after its last row (``batched_insert_checks``: PostgreSQL, a
    large merge), not by a trigger per row: the rows of each table are the ones the merge's journaled ranges name
    (``imported_rows``), and the publishing tables' own ranges are rows no other session can see yet."""
    tgt = MetastoreReader(merge.target)
    tables = [step["table"] for step in plan["steps"] if step["phase"] == "publish"]
    inserted = {table: imported_rows(merge, table, tgt) if table in BY_NAME else None for table in tables}
    own = {
        table: OwnKeys(str(BY_NAME[table].id_column), low, high)
        for table, (low, high) in merge.id_ranges.items()
        if table in tables and table in BY_NAME and BY_NAME[table].id_column
    }
    rows = sum(high - low + 1 for table, (low, high) in merge.id_ranges.items() if table in tables)
    with connections[merge.target].cursor() as cursor:
        return batched_insert_checks(cursor, merge.target, inserted, own, rows)


def _built(events: PrebuiltEvents | None) -> str:
    if events is None or events.counts is None:
        return " (built in the publishing transaction)"
    return f" (built beside the rows in {events.seconds:.1f} s, then waited for {events.waited:.1f} s)"


def _reserved_spans(merge: MergeImport) -> dict[str, tuple[int, int]]:
    """The source ids each reserved target range was reserved for (target id = source id + offset)."""
    return {t: (first - merge.offsets[t], last - merge.offsets[t]) for t, (first, last) in merge.id_ranges.items()}


def _finish(merge: MergeImport, state: str, error: str) -> MergeImport:
    merge.state, merge.error = state, error
    merge.save(update_fields=["state", "error", "updated_at"])
    return merge


def _is_published(merge: MergeImport) -> bool:
    """Whether the publishing transaction committed: the target holds a DBS row of the reserved range."""
    if "DBS" not in merge.id_ranges:
        return False
    low, high = merge.id_ranges["DBS"]
    tgt = MetastoreReader(merge.target)
    connections[merge.target].close_if_unusable_or_obsolete()
    return bool(tgt.scalar('SELECT COUNT(*) FROM "DBS" WHERE "DB_ID" BETWEEN %s AND %s', [low, high]))
