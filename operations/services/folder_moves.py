"""
A folder that moves whole for its partitions (``DirectoryMove.entries``: a dropped day of hourly partitions,
``planners/partitions/trash.py``): listed again right before it moves, and once more where it went.

* Before any directory moves: each folder must hold exactly the planned sub-directories, nothing else. Anything that
  differs (a directory or file written since the plan, a planned one gone, a link) refuses the execution, naming
  it, with nothing moved or written; the steward previews it again.
* After its move: an entry that appeared between that listing and the move moved with the folder; it is moved back
  to where it was written, so a write that landed meanwhile is never left in the trash.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.locations import filesystem_for, local_entries
from operations.preview import DirectoryMove

__all__ = ("put_back_unplanned", "refuse_changed_folders")

logger = logging.getLogger(__name__)
NAMED = 10


def refuse_changed_folders(moves: Iterable[DirectoryMove]) -> None:
    """Refuse (:data:`ErrorCode.STALE_PREVIEW`) unless each folder moving whole holds exactly its ``entries``, all
    directories (before anything moves)."""
    for move in moves:
        if move.entries:
            _refuse_changed_folder(move)


def _refuse_changed_folder(move: DirectoryMove) -> None:
    entries = local_entries(move.source)
    if entries is None:
        raise ApplicationError(
            ErrorCode.STALE_PREVIEW,
            f"{move.source} can no longer be listed (it is gone or reached through a link): the plan moves it whole "
            "with its partitions. Nothing was applied; preview the change again.",
            {"directory": move.source},
        )
    planned = set(move.entries)
    appeared = [name for name, is_directory in entries if name not in planned or not is_directory]
    gone = sorted(planned.difference(name for name, _ in entries))
    if not appeared and not gone:
        return
    problems = []
    if appeared:
        problems.append(f"{len(appeared)} entr{'y' if len(appeared) == 1 else 'ies'} not planned or not a directory")
    if gone:
        problems.append(f"{len(gone)} planned partition director{'y' if len(gone) == 1 else 'ies'} gone")
    named = ", ".join([*appeared[:NAMED], *gone[:NAMED]])
    raise ApplicationError(
        ErrorCode.STALE_PREVIEW,
        f"{move.source} changed since the preview ({' and '.join(problems)}: {named}): the plan moves it whole with "
        f"its {len(planned)} partition directories only. Nothing was applied; preview the change again.",
        {"directory": move.source, "appeared": appeared[:200], "gone": gone[:200]},
    )


def put_back_unplanned(move: DirectoryMove, metastore: str) -> list[str]:
    """Move back to ``move.source`` every entry of ``move.destination`` the plan did not move (written between
    :func:`refuse_changed_folders` and the move); returns their names. One that cannot be moved back stays beside
    the planned ones (logged): never an error, since the folder's move itself stands."""
    entries = local_entries(move.destination) or ()
    planned = set(move.entries)
    unplanned = [name for name, _ in entries if name not in planned]
    filesystem = filesystem_for(move.source, metastore)
    for name in unplanned:
        try:
            filesystem.rename(f"{move.destination}/{name}", f"{move.source}/{name}")
        except OSError:  # the folder's move stands (it is journaled); the entry stays with it, recoverable
            logger.exception(
                "%s/%s appeared while its folder moved: left at %s/%s", move.source, name, move.destination, name
            )
            continue
        logger.warning("%s/%s appeared while its folder moved to the trash: moved back", move.source, name)
    return unplanned
