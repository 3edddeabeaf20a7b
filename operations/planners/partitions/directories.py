"""
The data directories of partition changes. A renamed partition of a managed table moves to its new directory
(rule 17.3–17.4): the table's path plus the new name, under the scheme and authority of the partition's own
location, as Hive's ``constructRenamedPath``. The data of dropped partitions of managed tables goes to a recoverable
trash directory, never deleted outright (not even with PURGE).
"""

from __future__ import annotations

from catalog_admin.locations import (
    filesystem_for,
    location_filesystem,
    location_scheme,
)
from catalog_admin.selectors.metastores import Metastore
from operations.planners.rename_destination import with_scheme_of
from operations.preview import DirectoryMove
from operations.rules import Finding
from operations.table_state import TableState

__all__ = (
    "TRASH_DIR",
    "partition_move",
    "rename_warnings",
    "renamed_partition_location",
    "unreachable_data_blockers",
)

TRASH_DIR = ".catalog-admin-trash"


def renamed_partition_location(
    metastore: Metastore, state: TableState, location: str | None, new_name: str
) -> str | None:
    """
    Rules 17.3–17.4: where a renamed partition's data goes (None: it stays). ``<table path>/<new name>``, with the
    scheme and authority of the partition's own location (``constructRenamedPath``).
    """
    if not _moves_data(metastore, state) or not state.location:
        return None
    target = f"{state.location.rstrip('/')}/{new_name}"
    return with_scheme_of(location, target) if location else target


def _moves_data(metastore: Metastore, state: TableState) -> bool:
    """
    Rule 17.3: 4.x moves the data unless the table's EXTERNAL parameter is TRUE and TRANSLATED_TO_EXTERNAL is not
    (the table type does not count); 2.3 and 3.1 move it unless the table type is EXTERNAL_TABLE.
    """
    if not metastore.schema.capabilities.partition_move_decided_by_external_parameter:
        return state.table_type != "EXTERNAL_TABLE"
    return not _is_true(state.params, "EXTERNAL") or _is_true(state.params, "TRANSLATED_TO_EXTERNAL")


def _is_true(params: dict[str, str | None], key: str) -> bool:
    """``MetaStoreUtils.isPropertyTrue``: the value is TRUE in any case."""
    return (params.get(key) or "").upper() == "TRUE"


def partition_move(
    metastore: Metastore, state: TableState, source: str | None, destination: str | None
) -> tuple[DirectoryMove | None, list[Finding]]:
    """
    The directory move of rule 17.4 and what blocks it. Source and destination share a filesystem by construction. An
    existing target blocks the move; on 2.3 (whose HiveAlterHandler checks it first) even when the source is missing.
    """
    if not source or not destination or source == destination:
        return None, []
    source_fs = filesystem_for(source)
    exists = source_fs.exists(source)
    blockers = []
    if exists is None:
        # Hive would move the directory; without a client for the filesystem the console could only repoint the
        # partition at an empty directory.
        blockers.append(
            Finding(
                "filesystem_unreachable",
                "17.4",
                f"The console cannot check or move {source} (no client for its filesystem); rename the partition "
                "with Hive itself.",
            )
        )
    target_exists = filesystem_for(destination).exists(destination)
    if target_exists and (exists or metastore.schema.capabilities.partition_rename_refuses_existing_destination_first):
        blockers.append(
            Finding(
                "destination_exists",
                "17.4",
                f"New location for this table {state.ref.database}.{state.ref.table} already exists : {destination}",
            )
        )
    if not exists:
        return None, blockers
    size = source_fs.tree_size(source)
    move = DirectoryMove(
        source=source,
        destination=destination,
        partitions_moving=1,
        partitions_staying=0,
        files=size.files if size else None,
        bytes=size.bytes if size else None,
        source_exists=exists,
        destination_free=None if target_exists is None else not target_exists,
        same_filesystem=location_filesystem(source) == location_filesystem(destination),
    )
    return move, blockers


def rename_warnings(source: str | None, destination: str | None, move: DirectoryMove | None) -> list[Finding]:
    """A renamed partition whose directory does not exist: only its metadata changes."""
    if destination and source != destination and move is None:
        return [Finding("source_missing", "17.4", f"{source} does not exist: only the metadata changes.", "warning")]
    return []


def unreachable_data_blockers(matched: list[dict]) -> list[Finding]:
    """Managed data the console cannot move to its trash (hdfs, s3a …) would be orphaned: refuse instead."""
    unreachable = sorted(
        {location_scheme(p["sd__location"]) for p in matched if p["sd__location"] and _unreachable(p["sd__location"])}
    )
    if not unreachable:
        return []
    return [
        Finding(
            "filesystem_unreachable",
            "ddl",
            f"The dropped partitions' data is on {', '.join(unreachable)}, which this console cannot reach: "
            "it could not be moved to the trash.",
        )
    ]


def _unreachable(location: str) -> bool:
    if location_scheme(location) == "file":
        return False  # this machine's disk answers every question
    return filesystem_for(location).exists(location) is None
