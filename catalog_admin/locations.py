"""
The filesystems behind Hive locations (URIs); the pure location rules are in :mod:`catalog_admin.hive.locations`.

Hive stores local paths as ``file:/abs/path``; other writers use ``file:///abs/path``. Only
``file:`` locations can be checked here; other schemes (hdfs, s3a …) report "unknown" through
the same interface until a real client is configured for them.
"""

from __future__ import annotations

import errno
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from catalog_admin.hive.locations import is_under, normalize_location

__all__ = (
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

    def rename(self, source: str, destination: str) -> None:
        raise OSError(f"The console has no client for {self.scheme}: locations cannot be moved there.")

    def prune_empty_parents(self, location: str, levels: int | None = None) -> None:
        return None

    def remove_tree(self, location: str) -> bool:
        raise OSError(f"The console has no client for {self.scheme}: {location} cannot be removed.")


def filesystem_for(location: str) -> FileSystem:
    scheme = urlsplit(location).scheme or "file"
    return LocalFileSystem() if scheme == "file" else UnreachableFileSystem(scheme)


def _local_path(location: str) -> Path:
    return Path(urlsplit(normalize_location(location)).path)  # Hive stores escaped names as they are on disk
