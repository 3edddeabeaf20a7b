"""
Empty directories an execution makes or removes (``ADD PARTITION``'s managed partition directories and the revert
of them), local only, through no link (``catalog_admin.locations``); a directory holding anything is never removed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from catalog_admin.locations import make_local_directory, remove_empty_local_directory

__all__ = ("create_directories", "remove_created", "remove_empty_directories")

logger = logging.getLogger(__name__)


def create_directories(locations: Sequence[str]) -> list[str]:
    """Create each directory (Hive's ``createLocationForAddedPartition``: ``wh.mkdirs``); the ones created now."""
    created = []
    try:
        for location in locations:
            if make_local_directory(location):
                created.append(location)
    except BaseException:
        remove_created(created)
        raise
    return created


def remove_created(created: Sequence[str]) -> None:
    """Undo :func:`create_directories` after a failure (as ``add_partitions_core`` deletes the directories it made):
    each removed only while still empty."""
    for location in reversed(created):
        if not remove_empty_local_directory(location):
            logger.warning("Kept %s: it is no longer empty", location)


def remove_empty_directories(locations: Sequence[str]) -> list[str]:
    """Remove each directory that is still empty; the ones kept (something was written there since)."""
    return [location for location in locations if not remove_empty_local_directory(location)]
