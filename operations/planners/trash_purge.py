"""
``ALTER TABLE t PURGE TRASH [OLDER THAN n DAYS]`` (console extension): the governed purge of the console's trash.

The trash is the one ``DROP PARTITION`` and ``TRUNCATE TABLE`` move data into (``<database>/.catalog-admin-trash/
<table>/…``); its entries are the journalled moves (``DirectoryMoveRecord``) of this table's executions that put data
there and that are still there on disk. The plan lists every entry it deletes (files, bytes; the list is
fingerprinted, so approval binds exactly them) and the executions that lose their revert. The metastore's retention
(``METASTORE_TRASH_RETENTION_DAYS_<NAME>``) is the default age and the least one: a younger ``OLDER THAN`` is
refused. Execution (``services/trash_purge``) deletes only those entries, re-checked at delete time.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from django.utils import timezone

from catalog_admin.locations import filesystem_for
from catalog_admin.selectors.metastores import Metastore
from operations.models import DirectoryMoveRecord, Execution
from operations.planners.common import build_preview, snapshot
from operations.planners.partitions.directories import TRASH_DIR
from operations.preview import Preview, TrashEntry, TrashPurge
from operations.rules import Finding
from operations.specs import PurgeTrash
from operations.table_state import TableState

__all__ = ("plan_purge_trash", "table_trash")

RULE = "trash"


def table_trash(state: TableState) -> str:
    """The table's folder of the console's trash (every drop and truncate of it moves data below)."""
    return f"{state.database_location.rstrip('/')}/{TRASH_DIR}/{state.ref.table}/"


def plan_purge_trash(metastore: Metastore, state: TableState, spec: PurgeTrash) -> Preview:
    """The plan of a purge of ``state``'s trash: a pure read of the journal and the disk."""
    retention = metastore.config.trash_retention_days
    days = spec.older_than_days if spec.older_than_days is not None else retention
    blockers: list[Finding] = []
    if retention is not None and days is not None and days < retention:
        blockers.append(
            Finding(
                "within_retention",
                RULE,
                f"The trash of {metastore.name} keeps data {retention} day(s) (METASTORE_TRASH_RETENTION_DAYS_"
                f"{metastore.name.upper()}): purge entries older than {retention} day(s) or more, not {days}.",
            )
        )
    entries, links = _entries(metastore, state, days) if not blockers else ((), [])
    if links:
        blockers.append(
            Finding("symlink_in_data", RULE, f"{len(links)} trash entry(ies) are links (first: {links[0]}): the "
                    "console never follows or deletes through a link.")
        )  # fmt: skip
    if not entries and not blockers:
        age = f" older than {days} day(s)" if days is not None else ""
        blockers.append(Finding("nothing_to_purge", RULE, f"The trash of {state.ref} holds no entry{age}."))
    executions = tuple(sorted({e.execution for e in entries} - _reverted({e.execution for e in entries})))
    purge = TrashPurge(entries=entries, executions=executions, retention_days=retention)
    preview = build_preview(
        metastore,
        state,
        spec,
        steps=[],
        after=snapshot(state),
        blockers=blockers,
        warnings=_warnings(purge),
        inverse={"purged_executions": list(executions), "entries": len(entries)},
    )
    return replace(preview, trash_purge=purge)


def _entries(metastore: Metastore, state: TableState, days: int | None) -> tuple[tuple[TrashEntry, ...], list[str]]:
    """The journalled trash entries of the table still on disk, older than ``days`` (sorted by location)."""
    records = DirectoryMoveRecord.objects.filter(
        execution__metastore=metastore.name,
        execution__database_name=state.ref.database,
        execution__table_name=state.ref.table,
        execution__state__in=(Execution.State.SUCCEEDED, Execution.State.RECONCILED),
        state=DirectoryMoveRecord.State.COMMITTED,
        destination__startswith=table_trash(state),
    )
    if days is not None:
        records = records.filter(execution__finished_at__lt=timezone.now() - timedelta(days=days))
    found, links = [], []
    for destination, execution, finished in records.order_by("destination").values_list(
        "destination", "execution_id", "execution__finished_at"
    ):
        filesystem = filesystem_for(destination)
        if not filesystem.exists(destination):
            continue
        files = filesystem.list_files(destination) or []
        links += [f.location for f in files if f.symlink]
        found.append(TrashEntry(destination, len(files), sum(f.size for f in files), execution,
                                finished.isoformat() if finished else ""))  # fmt: skip
    return tuple(dict.fromkeys(found)), links


def _reverted(ids: set[int]) -> set[int]:
    """Those of ``ids`` a succeeded revert already undid (their entries hold nothing a revert needs)."""
    done = (Execution.State.SUCCEEDED, Execution.State.RECONCILED)
    return set(Execution.objects.filter(reverts_id__in=ids, state__in=done).values_list("reverts_id", flat=True))


def _warnings(purge: TrashPurge) -> list[Finding]:
    if not purge.entries:
        return []
    lost = ", ".join(f"#{pk}" for pk in purge.executions[:10])
    more = f" and {len(purge.executions) - 10} more" if len(purge.executions) > 10 else ""
    return [
        Finding(
            "data_deleted_for_good",
            RULE,
            f"{len(purge.entries):,} trash entry(ies), {purge.files:,} file(s), {purge.bytes:,} bytes are deleted for "
            f"good; execution(s) {lost or 'none'}{more} can no longer be reverted.",
            "warning",
        )
    ]
