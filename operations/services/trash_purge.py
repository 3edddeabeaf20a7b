"""
Executing a purge of the console's trash (``PURGE TRASH``): the approved entries are deleted, each re-checked at
delete time first: strictly inside a governed root and inside the console's trash folder, not a link and holding no
link (nothing is followed), and no table or partition of the metastore at, inside or above it. One refused entry
refuses the purge before anything is deleted.
"""

from __future__ import annotations

import logging

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.hive.locations import canonical
from catalog_admin.locations import filesystem_for
from catalog_admin.selectors.locations import governed_roots, location_users
from catalog_admin.selectors.metastores import Metastore
from operations.containment import ancestors
from operations.planners.partitions.directories import TRASH_DIR
from operations.preview import TrashPurge

__all__ = ("purge_refusals", "purge_trash_entries")

logger = logging.getLogger(__name__)
NAMED = 5


def purge_refusals(metastore: Metastore, purge: TrashPurge) -> list[str]:
    """Why entries may not be deleted now (empty: every one may)."""
    roots = governed_roots(metastore)
    locations = [canonical(entry.location) for entry in purge.entries]
    refusals = [
        f"{location} is not inside the console's trash of a governed root"
        for location in locations
        if f"/{TRASH_DIR}/" not in location or not roots.governs(location)
    ]
    above = sorted({a for location in locations for a in ancestors(location)})
    users = location_users(metastore, sorted(set(locations)), ancestors=above)
    refusals += [f"{user.location} is the directory of {user.owner}" for user in users]
    for location in locations:
        listed = filesystem_for(location).list_files(location) or []
        refusals += [f"{file.location} is a symbolic link" for file in listed if file.symlink]
    return refusals


def purge_trash_entries(metastore: Metastore, purge: TrashPurge) -> dict[str, int]:
    """Delete the approved entries (re-checked first); returns what was deleted (entries, files, bytes)."""
    refusals = purge_refusals(metastore, purge)
    if refusals:
        raise ApplicationError(
            ErrorCode.INVALID_STATE,
            f"The trash purge was refused at delete time, nothing was deleted: {'; '.join(refusals[:NAMED])}"
            + (f" (and {len(refusals) - NAMED} more)" if len(refusals) > NAMED else "")
            + ".",
            {"refusals": refusals[:20]},
        )
    for entry in purge.entries:
        filesystem_for(entry.location).delete_tree(entry.location)
        filesystem_for(entry.location).prune_empty_parents(entry.location, levels=2)
        logger.info("Purged %s from the trash (%s files, %s bytes)", entry.location, entry.files, entry.bytes)
    return {"delete": len(purge.entries), "insert": 0, "update": 0}
