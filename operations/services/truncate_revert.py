"""
What refuses reverting a ``TRUNCATE TABLE`` (untruncate): the entries it moved go back into their directories only
if those hold nothing written since (a file there now is newer than the truncate: never overwritten, never deleted,
never mixed with the old data), and only while the trash still holds every entry (a purge of the trash ends the
revert).
"""

from __future__ import annotations

from catalog_admin.locations import filesystem_for
from operations.models import DirectoryMoveRecord, Execution
from operations.rules import Finding

__all__ = ("TRUNCATE_KIND", "truncate_revert_blockers")

TRUNCATE_KIND = "truncate_table"
NAMED = 5


def truncate_revert_blockers(execution: Execution) -> list[Finding]:
    """The revert's blockers for a truncate (none for another kind)."""
    if execution.operation.get("kind") != TRUNCATE_KIND:
        return []
    records = list(
        execution.moves.filter(state=DirectoryMoveRecord.State.COMMITTED).values_list("source", "destination")
    )
    return _purged(execution, records) + _written_since(execution, records)


def _purged(execution: Execution, records: list[tuple[str, str]]) -> list[Finding]:
    gone = [destination for _source, destination in records if not filesystem_for(destination).exists(destination)]
    if not gone:
        return []
    return [
        Finding(
            "trash_purged",
            "truncate",
            f"{len(gone)} of the {len(records)} entries execution #{execution.pk} moved to the trash are no longer "
            f"there (first: {', '.join(gone[:NAMED])}): the trash was purged, so the data cannot be moved back.",
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
