"""
Where a ``TRUNCATE TABLE``'s data goes: every entry of each truncated directory (files and sub-directories, hidden
ones too, as Hive's ``moveToTrash`` of the whole directory takes them) moves to the console's trash, the one trash
``DROP PARTITION`` uses (``<database location>/.catalog-admin-trash/<table>/…``), under
``truncate-<fingerprint>/<unit>`` (``unit``: the partition's name, or ``table`` for an unpartitioned table). The
directory itself stays, empty, with its own permissions: Hive moves it and makes it again (``fs.mkdirs`` +
``HdfsUtils.setFullFileStatus``); moving its entries leaves the same empty directory without re-creating it.

One move per entry, each through the containment guard (``MoveContext``: the entry is the truncated owner's own; a
sub-directory holding another partition's location is refused). A link among the data is refused, never followed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from catalog_admin.locations import filesystem_for
from operations.containment import MoveContext
from operations.planners.partitions.directories import TRASH_DIR
from operations.preview import DirectoryMove
from operations.rules import Finding
from operations.table_state import TableState

__all__ = ("TABLE_UNIT", "TruncateMoves", "TruncatedDirectory", "trash_root", "truncate_moves")

TABLE_UNIT = "table"  # the trash folder of an unpartitioned table's entries (a partition's has '=' in its name)
NAMED = 5


@dataclass(frozen=True)
class TruncatedDirectory:
    """One directory whose entries go to the trash: its location, its unit name, whose rows use it."""

    location: str | None
    unit: str
    context: MoveContext


@dataclass
class TruncateMoves:
    """The entries' moves, their contexts by source, and what blocks or is worth a warning."""

    moves: list[DirectoryMove]
    contexts: dict[str, MoveContext]
    blockers: list[Finding]
    missing: list[str]
    empty: int = 0


def trash_root(state: TableState) -> str:
    """Where this truncate's entries go: ``<database>/.catalog-admin-trash/<table>/truncate-<fingerprint>``."""
    return f"{state.database_location.rstrip('/')}/{TRASH_DIR}/{state.ref.table}/truncate-{state.fingerprint[:12]}"


def truncate_moves(state: TableState, directories: Iterable[TruncatedDirectory]) -> TruncateMoves:
    """Every entry of every directory, moved to the trash (a pure read: listings only)."""
    root = trash_root(state)
    found = TruncateMoves([], {}, [], [])
    links: list[str] = []
    unreachable: set[str] = set()
    for directory in directories:
        if not directory.location:
            continue
        location = directory.location.rstrip("/")
        filesystem = filesystem_for(location)
        entries = filesystem.list_directory(location)  # one listing; the rarer cases asked after
        if entries is None:
            exists = filesystem.exists(location)
            if exists is None:
                unreachable.add(urlsplit(location).scheme)
            elif not exists:
                found.missing.append(location)
            else:  # there, but not a directory this console may list: a link, or a file
                links.append(location)
            continue
        if not entries:
            found.empty += 1
            continue
        files = filesystem.list_files(location) or []
        links += [f.location for f in files if f.symlink]
        sizes = _sizes_by_entry(files)
        for entry in entries:
            source = f"{location}/{entry.name}"
            count, size = sizes.get(entry.name, (0, 0))
            found.moves.append(
                DirectoryMove(source=source, destination=f"{root}/{directory.unit}/{entry.name}",
                              partitions_moving=0, partitions_staying=1, files=count, bytes=size,
                              source_exists=True, destination_free=True, same_filesystem=True)
            )  # fmt: skip
            found.contexts[source] = directory.context
    found.blockers += _link_blockers(links) + _unreachable_blockers(unreachable)
    return found


def _sizes_by_entry(files: Iterable) -> dict[str, tuple[int, int]]:
    """Files and bytes under each top-level entry (a file counts as its own entry)."""
    sizes: dict[str, tuple[int, int]] = {}
    for file in files:
        top = file.relative.split("/", 1)[0]
        count, size = sizes.get(top, (0, 0))
        sizes[top] = (count + 1, size + file.size)
    return sizes


def _link_blockers(links: list[str]) -> list[Finding]:
    if not links:
        return []
    return [
        Finding(
            "symlink_in_data",
            "truncate",
            f"{len(links)} symbolic link(s) among the data to truncate (first: {', '.join(links[:NAMED])}): the "
            "console never follows or moves a link; remove it with Hive or by hand first.",
        )
    ]


def _unreachable_blockers(schemes: set[str]) -> list[Finding]:
    if not schemes:
        return []
    return [
        Finding(
            "filesystem_unreachable",
            "truncate",
            f"The data to truncate is on {', '.join(sorted(schemes))}, which this console cannot reach: it could "
            "not be moved to the trash.",
        )
    ]
