"""
The filesystems behind Hive locations (URIs); the pure location rules are in :mod:`catalog_admin.hive.locations`.

Hive stores local paths as ``file:/abs/path``; other writers use ``file:///abs/path``. Only
``file:`` locations can be checked here; other schemes (hdfs, s3a …) report "unknown" through
the same interface until a real client is configured for them.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from catalog_admin.hive.acid import DirEntry
from catalog_admin.hive.locations import is_under, normalize_location

__all__ = (
    "DirEntry",
    "FileSystem",
    "LocalFileSystem",
    "TreeSize",
    "UnreachableFileSystem",
    "filesystem_for",
    "is_under",
    "normalize_location",
)


@dataclass(frozen=True)
class TreeSize:
    files: int
    bytes: int


class FileSystem(Protocol):
    """What the console needs of a filesystem holding table data."""

    scheme: str

    def exists(self, location: str) -> bool | None:
        """Whether the location exists; None when it cannot be checked."""

    def tree_size(self, location: str) -> TreeSize | None:
        """Files and bytes under the location; None when it cannot be checked."""

    def list_directory(self, location: str) -> tuple[DirEntry, ...] | None:
        """The location's children (for ``AcidUtils.getAcidState``); None when it cannot be listed."""

    def quick_stats(self, location: str) -> TreeSize | None:
        """Files and bytes under the location as Hive's quick statistics count them (``populateQuickStats`` over
        ``getFileStatusRecurse``: hidden names, ``_…`` and ``.…``, skipped with what is below them; a missing
        location counts nothing); None when it cannot be checked."""

    def rename(self, source: str, destination: str) -> None:
        """Move a directory (creating the destination's parent), as Hive's ``Warehouse.renameDir``; an existing
        destination is refused (OSError), never merged into or replaced."""

    def prune_empty_parents(self, location: str, levels: int | None = None) -> None:
        """Remove the location's parent directories as long as they are empty (at most ``levels`` of them)."""

    def remove_tree(self, location: str) -> bool:
        """Remove a directory and everything under it (a job's staging); False when it was not there."""


class LocalFileSystem:
    """``file:`` locations on this machine's disk."""

    scheme = "file"

    def exists(self, location: str) -> bool | None:
        return _local_path(location).exists()

    def tree_size(self, location: str) -> TreeSize | None:
        root = _local_path(location)
        if not root.exists():
            return None
        files = size = 0
        for dirpath, _dirs, names in os.walk(root):
            for name in names:
                files += 1
                size += os.path.getsize(os.path.join(dirpath, name))
        return TreeSize(files=files, bytes=size)

    def list_directory(self, location: str) -> tuple[DirEntry, ...] | None:
        root = _local_path(location)
        if not root.is_dir():
            return None
        return tuple(_dir_entry(child) for child in sorted(root.iterdir(), key=lambda p: p.name))

    def quick_stats(self, location: str) -> TreeSize | None:
        files = size = 0
        for dirpath, dirs, names in os.walk(_local_path(location)):
            dirs[:] = [d for d in dirs if not _hidden(d)]
            for name in names:
                if not _hidden(name):
                    files += 1
                    size += os.path.getsize(os.path.join(dirpath, name))
        return TreeSize(files=files, bytes=size)

    def rename(self, source: str, destination: str) -> None:
        target = _local_path(destination)
        if target.exists() or target.is_symlink():
            # os.rename would silently replace an empty directory that appeared after the preview.
            raise FileExistsError(errno.EEXIST, "the destination already exists", str(target))
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(_local_path(source), target)

    def remove_tree(self, location: str) -> bool:
        path = _local_path(location)
        if not path.exists():
            return False
        shutil.rmtree(path)
        return True

    def prune_empty_parents(self, location: str, levels: int | None = None) -> None:
        parent = _local_path(location).parent
        while levels != 0 and parent != parent.parent and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
            levels = None if levels is None else levels - 1


class UnreachableFileSystem:
    """A scheme this console has no client for (hdfs, s3a …): nothing can be checked."""

    def __init__(self, scheme: str) -> None:
        self.scheme = scheme

    def exists(self, location: str) -> bool | None:
        return None

    def tree_size(self, location: str) -> TreeSize | None:
        return None

    def list_directory(self, location: str) -> tuple[DirEntry, ...] | None:
        return None

    def quick_stats(self, location: str) -> TreeSize | None:
        return None

    def rename(self, source: str, destination: str) -> None:
        raise OSError(f"The console has no client for {self.scheme}: locations cannot be moved there.")

    def prune_empty_parents(self, location: str, levels: int | None = None) -> None:
        return None

    def remove_tree(self, location: str) -> bool:
        raise OSError(f"The console has no client for {self.scheme}: {location} cannot be removed.")


def filesystem_for(location: str) -> FileSystem:
    scheme = urlsplit(location).scheme or "file"
    return LocalFileSystem() if scheme == "file" else UnreachableFileSystem(scheme)


def _hidden(name: str) -> bool:
    """Hive's ``FileUtils.HIDDEN_FILES_PATH_FILTER``."""
    return name.startswith(("_", "."))


def _local_path(location: str) -> Path:
    return Path(urlsplit(normalize_location(location)).path)  # Hive stores escaped names as they are on disk


def _dir_entry(path: Path) -> DirEntry:
    """A child of a table or partition directory: a file with its size, or a directory with the bytes and the
    (non-hidden) files under it and whether the compactor marked it (``_metadata_acid``, Hive's ``MetaDataFile``)."""
    if not path.is_dir():
        return DirEntry(name=path.name, is_dir=False, size=path.stat().st_size)
    files, size = [], 0
    for dirpath, _dirs, names in os.walk(path):
        for name in names:
            size += os.path.getsize(os.path.join(dirpath, name))
            if not name.startswith(("_", ".")):
                files.append(os.path.relpath(os.path.join(dirpath, name), path))
    return DirEntry(
        name=path.name,
        is_dir=True,
        size=size,
        compacted=_is_compacted(path / "_metadata_acid"),
        files=tuple(sorted(files)),
    )


def _is_compacted(metadata: Path) -> bool:
    """``MetaDataFile.isCompacted``: the file exists and its ``dataFormat`` is ``compacted``."""
    try:
        return json.loads(metadata.read_text()).get("dataFormat") == "compacted"
    except (OSError, ValueError, AttributeError):
        return False
