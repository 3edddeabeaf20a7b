"""
What every revert shares (``revert.py``, and undrop's ``undrop.py``): the directories an execution moved, moved back
from where it put them (its trash, a new location); ``row_value`` (re-exported from the model that writes them): the
before-image's values as the rows held them.
"""

from __future__ import annotations

from catalog_admin.locations import filesystem_for
from operations.models import DirectoryMoveRecord, Execution
from operations.models.executions import row_value
from operations.preview import DirectoryMove

__all__ = ("moves_back", "row_value")


def moves_back(execution: Execution) -> list[DirectoryMove]:
    """The directories ``execution`` moved (its committed journal), moved back, last first: those still where it put
    them, through the execution's metastore's filesystems, each pruning exactly the parents its forward move
    created; ``destination_free`` says whether the old place is free again (``None``: the filesystem cannot tell)."""
    moves = []
    for record in execution.moves.filter(state=DirectoryMoveRecord.State.COMMITTED).order_by("-pk"):
        filesystem = filesystem_for(record.destination, execution.metastore)
        if not filesystem.exists(record.destination):
            continue
        size = filesystem.tree_size(record.destination)
        back_taken = filesystem_for(record.source, execution.metastore).exists(record.source)
        moves.append(
            DirectoryMove(
                source=record.destination,
                destination=record.source,
                partitions_moving=0,
                partitions_staying=0,
                files=size.files if size else None,
                bytes=size.bytes if size else None,
                source_exists=True,
                destination_free=None if back_taken is None else not back_taken,
                same_filesystem=True,
                prune_source_levels=record.created_parents,
            )
        )
    return moves
