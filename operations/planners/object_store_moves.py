"""
The cost of a directory "rename" on an object store: S3 has no rename, so Hive (``Warehouse.renameDir`` through the
S3A connector) and the console copy every object and delete the originals. A preview shows that cost for every such
move; above ``CATALOG_OBJECT_STORE_RENAME_LIMIT_BYTES`` (or when the size cannot be listed) the request thread refuses
it and points to the relocation job (``ALTER TABLE … SET LOCATION '…' WITH DATA``), which copies on Spark, verifies
each file and keeps the source for revert.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings

from catalog_admin.locations import filesystem_for
from operations.preview import DirectoryMove
from operations.rules import Finding

__all__ = ("object_store_move_findings",)

RULE = "object_store"


def object_store_move_findings(moves: Sequence[DirectoryMove]) -> tuple[list[Finding], list[Finding]]:
    """``(blockers, warnings)`` for the moves whose filesystem renames by copying."""
    blockers: list[Finding] = []
    warnings: list[Finding] = []
    limit = settings.CATALOG_OBJECT_STORE_RENAME_LIMIT_BYTES
    for move in moves:
        if not filesystem_for(move.source).renames_by_copy:
            continue
        if move.bytes is None or move.files is None:
            blockers.append(_too_big(move, "its size cannot be listed"))
            continue
        warnings.append(
            Finding(
                "object_store_copy",
                RULE,
                f"{move.source} is on an object store: moving it copies {move.files} file(s), {move.bytes} bytes, "
                "then deletes the originals.",
                "warning",
            )
        )
        if move.bytes > limit:
            blockers.append(_too_big(move, f"{move.bytes} bytes exceed the limit of {limit} bytes"))
    return blockers, warnings


def _too_big(move: DirectoryMove, why: str) -> Finding:
    return Finding(
        "object_store_move_too_big",
        RULE,
        f"Moving {move.source} on an object store copies every file and cannot run in the request thread ({why}): "
        f"relocate the data with a job instead: ALTER TABLE … SET LOCATION '{move.destination}' WITH DATA.",
    )
