"""
Where a rewrite (CONCATENATE, SET FILEFORMAT … WITH DATA) writes, and how its swap puts the new data home.

Hive replaces a partition's files in place: ``INSERT OVERWRITE`` and ``CONCATENATE`` write below a hidden staging
directory and their MoveTask moves the result into the partition's own directory, whose location does not change
(apache/hive ql/src/java/org/apache/hadoop/hive/ql/metadata/Hive.java ``replaceFiles``: the old files are trashed,
the new ones renamed into ``destf``). The console does the same with directories, so nothing hidden is the data's
home and nothing is left in the warehouse:

* each unit is written below a hidden staging directory on the unit's **own filesystem** (``<table root>/_compacted-
  <token>/<partition path>`` when the partition lies below its table's root on the root's filesystem, else
  ``<parent>/_compacted-<token>/<name>`` beside it; ``<parent>/_compacted-<token>/<table>`` beside an unpartitioned
  table's root). Hive's and Hadoop's listings skip ``_`` names (``FileUtils.HIDDEN_FILES_PATH_FILTER``), and so does
  ``MSCK REPAIR TABLE`` (``HiveMetaStoreChecker.getAllLeafDirs``), so no reader takes them for data before the swap;
* the swap (:func:`swap_moves`, journaled in the metastore transaction like a rename's moves) moves each unit's old
  directory to the console's trash (``<database location>/.catalog-admin-trash/<table>/<verb>-<token>/<path>`` when
  on the same filesystem, else the same below the unit's parent), then the new directory to the old one's place
  (the emptied staging directory goes with the last unit); the storage descriptors keep their locations;
* revert moves both back (the journal, last move first); the relocation cleanup deletes the trashed directory after
  the retention time, or the new one (back in its staging directory) after a revert, each with its emptied parents.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

from catalog_admin.selectors.metastores import Metastore
from operations.containment import MoveContext, canonical, is_inside, move_blockers
from operations.preview import CopyUnit, DirectoryMove
from operations.rules import Finding
from operations.table_state import TableState

__all__ = (
    "TRASH_DIR",
    "retained_levels",
    "staged",
    "staging_levels",
    "staging_roots",
    "swap_blockers",
    "swap_moves",
    "token_of",
)

TRASH_DIR = ".catalog-admin-trash"  # the DROP PARTITION trash's name (planners/partitions/directories.py)


def token_of(verb: str, statement: str, sources: Iterable[str]) -> str:
    """``<verb>-<digest>``: a digest of the operation and its sources, so the same plan previews to the same
    directories (approval binds them) and a second rewrite gets new ones."""
    digest = hashlib.sha256("\n".join([statement, *sorted(sources)]).encode()).hexdigest()[:10]
    return f"{verb}-{digest}"


def staged(state: TableState, token: str, location: str) -> tuple[str, str]:
    """``(destination, retained)`` of the unit at ``location``: the hidden directory the program writes it into, on
    the unit's own filesystem, and where the swap moves its old directory (the trash, on the same filesystem)."""
    source, root = canonical(location).rstrip("/"), canonical(state.location or "").rstrip("/")
    if state.is_partitioned and is_inside(source, root, strictly=True):
        parent, relative = root, source[len(root) + 1 :]
    else:
        parent, relative = source.rsplit("/", 1)
    trash_parent = canonical(state.database_location or "").rstrip("/")
    if not state.database_location or _filesystem(trash_parent) != _filesystem(source):
        trash_parent = parent
    return f"{parent}/_{token}/{relative}", f"{trash_parent}/{TRASH_DIR}/{state.ref.table}/{token}/{relative}"


def staging_levels(unit: CopyUnit, token: str) -> int:
    """The directories above a unit's staged directory that belong to the rewrite (its path's parents and the
    staging directory itself): removed once empty, never more."""
    return _below(unit.destination, f"_{token}")


def retained_levels(unit: CopyUnit, token: str) -> int:
    """The directories above a unit's trashed directory that the rewrite may have created (its path's parents, the
    token's, the table's and the trash's own): removed once empty."""
    return _below(unit.retained, token) + 2


def staging_roots(units: Sequence[CopyUnit], token: str) -> list[str]:
    """The hidden staging directories of ``units`` (one per filesystem and parent; usually one): what a cancel
    removes."""
    return sorted({unit.destination.split(f"/_{token}/", 1)[0] + f"/_{token}" for unit in units})


def swap_moves(units: Sequence[CopyUnit], token: str) -> tuple[DirectoryMove, ...]:
    """The swap's directory moves, in order: per unit, the old directory to the trash, then the new one into its
    place (which takes its emptied staging parents along)."""
    moves: list[DirectoryMove] = []
    for unit in units:
        moves += [
            DirectoryMove(unit.source, unit.retained, 1, 0, None, None, True, True, True),
            DirectoryMove(
                unit.destination, unit.source, 1, 0, None, None, True, True, True, staging_levels(unit, token)
            ),
        ]
    return tuple(moves)


def swap_blockers(metastore: Metastore, state: TableState, units: Sequence[CopyUnit]) -> list[Finding]:
    """The containment guard of the swap's moves to the trash (roots, links, other tables' and partitions' data at,
    in or above either end; the unit's own storage descriptor and its table's root above it allowed), and a trash
    directory that exists already refuses the move itself (``FileSystem.rename`` never merges)."""
    moves = [DirectoryMove(u.source, u.retained, 1, 0, None, None, True, None, True) for u in units]
    contexts = {u.source: _context(state, u) for u in units}
    return move_blockers(metastore, moves, contexts)


def _context(state: TableState, unit: CopyUnit) -> MoveContext:
    if unit.partition_id is None:
        return MoveContext(table_id=state.table_id)
    return MoveContext(sd_ids=_ids(unit.sd_id), enclosing=_ids(state.sd_id))


def _ids(*ids: int | None) -> frozenset[int]:
    return frozenset(i for i in ids if i is not None)


def _below(location: str, segment: str) -> int:
    """How many directories ``location`` lies below its segment ``segment`` (the rewrite's token is unique)."""
    return location.split(f"/{segment}/", 1)[1].count("/") + 1


def _filesystem(location: str) -> tuple[str, str]:
    parts = urlsplit(location)
    return (parts.scheme or "file", parts.netloc)
