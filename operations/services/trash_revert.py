"""
What refuses reverting an execution that moved data to the console's trash (``DROP PARTITION``, ``TRUNCATE TABLE``):
the data comes back only while the trash still holds every entry (after a purge, the revert is refused naming it);
and, for a truncate (untruncate), only into directories holding nothing written since (a file there now is newer
than the truncate: never overwritten, never deleted, never mixed with the old data).
"""

from __future__ import annotations

from catalog_admin.locations import filesystem_for
from operations.models import DirectoryMoveRecord, Execution
from operations.planners.partitions.directories import TRASH_DIR
from operations.rules import Finding

__all__ = ("PURGE_KIND", "TRUNCATE_KIND", "trash_revert_blockers")

TRUNCATE_KIND = "truncate_table"
PURGE_KIND = "purge_trash"
NAMED = 5


def trash_revert_blockers(execution: Execution) -> list[Finding]:
    """The revert's blockers for data in the trash (none for an execution that trashed nothing)."""
    records = [
        (source, destination)
        for source, destination in execution.moves.filter(state=DirectoryMoveRecord.State.COMMITTED).values_list(
            "source", "destination"
        )
        if f"/{TRASH_DIR}/" in destination
    ]
    if not records:
        return []
    written = _written_since(execution, records) if execution.operation.get("kind") == TRUNCATE_KIND else []
    return _purged(execution, records) + written


def _purged(execution: Execution, records: list[tuple[str, str]]) -> list[Finding]:
    gone = [destination for _source, destination in records if not filesystem_for(destination).exists(destination)]
    if not gone:
        return []
    purges = [
        purge.pk
        for purge in Execution.objects.filter(
            metastore=execution.metastore, pk__gt=execution.pk, operation__kind=PURGE_KIND
        ).only("pk", "before_image")
        if execution.pk in purge.before_image.get("purged_executions", [])
    ]
    by = f" by execution #{purges[-1]}" if purges else ""
    return [
        Finding(
            "trash_purged",
            "trash",
            f"{len(gone)} of the {len(records)} entries execution #{execution.pk} moved to the trash are no longer "
            f"there (first: {', '.join(gone[:NAMED])}): the trash was purged{by}, so the data cannot be moved back.",
        )
    ]


def _written_since(execution: Execution, records: list[tuple[str, str]]) -> list[Finding]:
    """Entries in a truncated directory now: written after the truncate (it left each directory empty)."""
    directories = sorted({source.rstrip("/").rpartition("/")[0] for source, _destination in records})
    newer: list[str] = []
    for directory in directories:
        entries = filesystem_for(directory).list_directory(directory) or ()
        newer += [f"{directory}/{entry.name}" for entry in entries]
    if not newer:
        return []
    return [
        Finding(
            "written_since_truncate",
            "truncate",
            f"{len(newer)} file(s) or folder(s) were written to the truncated directories since execution "
            f"#{execution.pk} (first: {', '.join(newer[:NAMED])}): moving the old data back would mix it with "
            "them. Move or remove them first (the console never overwrites or deletes a newer file).",
        )
    ]
