"""
The filesystems behind Hive locations (URIs); the pure location rules are in :mod:`catalog_admin.hive.locations`.

Hive stores local paths as ``file:/abs/path``; other writers use ``file:///abs/path``. ``file:`` locations are this
machine's disk; ``s3a://``, ``s3://`` and ``s3n://`` are S3-compatible object stores and ``hdfs://`` is HDFS, both
through fsspec (:mod:`catalog_admin.object_stores`, configured by :mod:`catalog_admin.filesystem_options`). Other
schemes report "unknown" through the same interface.
"""

from __future__ import annotations

import errno
import hashlib
import json
import mmap
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol
from urllib.parse import urlsplit

from catalog_admin.filesystem_options import OBJECT_STORE_SCHEMES
from catalog_admin.hive.acid import DirEntry
from catalog_admin.hive.locations import is_under, normalize_location

__all__ = (
    "CHECKSUM_ALGORITHMS",
    "CHECKSUM_CHUNK",
    "COPY_CHECKSUM",
    "Digest",
    "DirEntry",
    "FileEntry",
    "FileSystem",
    "LocalFileSystem",
    "TreeSize",
    "UnreachableFileSystem",
    "dir_entries",
    "filesystem_for",
    "is_hidden",
    "is_under",
    "kernel_copy",
    "mapped_digest",
    "new_hash",
    "normalize_location",
    "stream_digest",
)

CHECKSUM_CHUNK = 8 << 20
CHECKSUM_ALGORITHMS = ("md5", "xxh3_128")
# What relocation copies are verified with: xxHash's XXH3 128-bit (non-cryptographic, ~15 GB/s on one core here, so
# hashing the source and reading the copy back costs little beside the copy itself; MD5 runs at ~650 MB/s).
COPY_CHECKSUM = "xxh3_128"


@dataclass(frozen=True)
class TreeSize:
    files: int
    bytes: int


@dataclass(frozen=True)
class Digest:
    """A file's checksum (``algorithm`` one of :data:`CHECKSUM_ALGORITHMS`) and the bytes it was computed over."""

    algorithm: str
    hexdigest: str
    size: int


@dataclass(frozen=True)
class FileEntry:
    """One file below a listed location: its own location, its path relative to the listed one, its size."""

    location: str
    relative: str
    size: int


class FileSystem(Protocol):
    """What the console needs of a filesystem holding table data."""

    scheme: str
    renames_by_copy: bool  # an object store: a "rename" copies every file and deletes the originals

    def exists(self, location: str) -> bool | None:
        """Whether the location exists; None when it cannot be checked."""

    def tree_size(self, location: str) -> TreeSize | None:
        """Files and bytes under the location; None when it cannot be checked."""

    def list_files(self, location: str, limit: int | None = None) -> list[FileEntry] | None:
        """The files under the location (recursively, sorted, at most ``limit``); None when it cannot be listed."""

    def list_directory(self, location: str) -> tuple[DirEntry, ...] | None:
        """The location's children (for ``AcidUtils.getAcidState``); None when it cannot be listed."""

    def quick_stats(self, location: str) -> TreeSize | None:
        """Files and bytes under the location as Hive's quick statistics count them (``populateQuickStats`` over
        ``getFileStatusRecurse``: hidden names, ``_…`` and ``.…``, skipped with what is below them; a missing
        location counts nothing); None when it cannot be checked."""

    def checksum(self, location: str, algorithm: str = "md5") -> str:
        """The checksum of one file's content (read in full); MD5 unless told."""

    def digest(self, location: str, algorithm: str = "md5") -> Digest:
        """One file's checksum and size, both from all of its bytes as the filesystem serves them now."""

    def open(self, location: str, mode: str = "rb") -> BinaryIO:
        """One file as a binary stream (``rb`` or ``wb``; writing creates the parents where there are any)."""

    def copy_file(self, source: str, destination: str) -> None:
        """Copy one file's bytes (creating the destination's parents), replacing a partial earlier copy."""

    def delete_tree(self, location: str) -> None:
        """Remove a file or a directory with everything below it (nothing when it does not exist)."""

    def rename(self, source: str, destination: str) -> None:
        """Move a directory (creating the destination's parent), as Hive's ``Warehouse.renameDir``; an existing
        destination is refused (OSError), never merged into or replaced."""

    def prune_empty_parents(self, location: str, levels: int | None = None) -> None:
        """Remove the location's parent directories as long as they are empty (at most ``levels`` of them)."""


def new_hash(algorithm: str) -> Any:
    """A fresh hash object of ``algorithm`` (one of :data:`CHECKSUM_ALGORITHMS`)."""
    if algorithm == "md5":
        return hashlib.md5(usedforsecurity=False)
    if algorithm == "xxh3_128":
        import xxhash  # only where copies are verified (the console, Spark's Python workers)

        return xxhash.xxh3_128()
    raise ValueError(f"Unknown checksum algorithm {algorithm!r}; known: {', '.join(CHECKSUM_ALGORITHMS)}")


def stream_digest(stream: Any, algorithm: str = "md5") -> Digest:
    """The digest of a readable binary stream, read in large chunks (an object store's file, a pipe)."""
    digest, size = new_hash(algorithm), 0
    while chunk := stream.read(CHECKSUM_CHUNK):
        digest.update(chunk)
        size += len(chunk)
    return Digest(algorithm, digest.hexdigest(), size)


def mapped_digest(path: str | Path, algorithm: str = "md5") -> Digest:
    """The digest of a local file hashed straight from the page cache through a read-only memory map (no copy into
    Python buffers; hashlib and xxhash release the GIL meanwhile, so threads hash in parallel). The size is the
    file's when opened: a file truncated while it is hashed is a bus error, so only files no writer holds (a
    table's data files, a copy just made) are given here."""
    digest = new_hash(algorithm)
    with open(path, "rb") as stream:
        size = os.fstat(stream.fileno()).st_size
        if size:
            with mmap.mmap(stream.fileno(), size, access=mmap.ACCESS_READ) as mapped:
                mapped.madvise(mmap.MADV_SEQUENTIAL)
                digest.update(mapped)
    return Digest(algorithm, digest.hexdigest(), size)


def kernel_copy(source: str | Path, destination: str | Path) -> int:
    """Copy a local file inside the kernel (``copy_file_range``, as ``cp`` does: no bytes through Python; a
    server-side copy or a reflink where the filesystem offers one), replacing ``destination``; the bytes copied.
    Falls back to ``shutil.copyfile`` (``sendfile``) where the kernel refuses, e.g. across filesystems on old
    kernels."""
    with open(source, "rb") as reader, open(destination, "wb") as writer:
        try:
            copied = 0
            while step := os.copy_file_range(reader.fileno(), writer.fileno(), 1 << 30):
                copied += step
            return copied
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
                raise
    shutil.copyfile(source, destination)
    return os.path.getsize(destination)


class LocalFileSystem:
    """``file:`` locations on this machine's disk."""

    scheme = "file"
    renames_by_copy = False

    def exists(self, location: str) -> bool | None:
        return _local_path(location).exists()

    def tree_size(self, location: str) -> TreeSize | None:
        files = self.list_files(location)
        return None if files is None else TreeSize(files=len(files), bytes=sum(f.size for f in files))

    def list_files(self, location: str, limit: int | None = None) -> list[FileEntry] | None:
        root = _local_path(location)
        if not root.exists():
            return None
        prefix = normalize_location(location)
        entries = []
        for dirpath, dirs, names in os.walk(root):
            dirs.sort()
            for name in sorted(names):
                relative = os.path.relpath(os.path.join(dirpath, name), root)
                entries.append(
                    FileEntry(f"{prefix}/{relative}", relative, os.path.getsize(os.path.join(dirpath, name)))
                )
                if limit is not None and len(entries) >= limit:
                    return entries
        return entries

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

    def checksum(self, location: str, algorithm: str = "md5") -> str:
        return self.digest(location, algorithm).hexdigest

    def digest(self, location: str, algorithm: str = "md5") -> Digest:
        return mapped_digest(_local_path(location), algorithm)

    def open(self, location: str, mode: str = "rb") -> BinaryIO:
        path = _local_path(location)
        if "w" in mode:
            path.parent.mkdir(parents=True, exist_ok=True)
        return open(path, mode)  # noqa: SIM115 - the caller closes it

    def copy_file(self, source: str, destination: str) -> None:
        target = _local_path(destination)
        target.parent.mkdir(parents=True, exist_ok=True)
        kernel_copy(_local_path(source), target)

    def delete_tree(self, location: str) -> None:
        path = _local_path(location)
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()

    def rename(self, source: str, destination: str) -> None:
        target = _local_path(destination)
        if target.exists() or target.is_symlink():
            # os.rename would silently replace an empty directory that appeared after the preview.
            raise FileExistsError(errno.EEXIST, "the destination already exists", str(target))
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(_local_path(source), target)

    def prune_empty_parents(self, location: str, levels: int | None = None) -> None:
        parent = _local_path(location).parent
        while levels != 0 and parent != parent.parent and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
            levels = None if levels is None else levels - 1


class UnreachableFileSystem:
    """A scheme this console has no client for: nothing can be checked."""

    renames_by_copy = False

    def __init__(self, scheme: str) -> None:
        self.scheme = scheme

    def exists(self, location: str) -> bool | None:
        return None

    def tree_size(self, location: str) -> TreeSize | None:
        return None

    def list_files(self, location: str, limit: int | None = None) -> list[FileEntry] | None:
        return None

    def list_directory(self, location: str) -> tuple[DirEntry, ...] | None:
        return None

    def quick_stats(self, location: str) -> TreeSize | None:
        return None

    def checksum(self, location: str, algorithm: str = "md5") -> str:
        raise self._refusal()

    def digest(self, location: str, algorithm: str = "md5") -> Digest:
        raise self._refusal()

    def open(self, location: str, mode: str = "rb") -> BinaryIO:
        raise self._refusal()

    def copy_file(self, source: str, destination: str) -> None:
        raise self._refusal()

    def delete_tree(self, location: str) -> None:
        raise self._refusal()

    def rename(self, source: str, destination: str) -> None:
        raise self._refusal()

    def prune_empty_parents(self, location: str, levels: int | None = None) -> None:
        return None

    def _refusal(self) -> OSError:
        return OSError(f"The console has no client for {self.scheme}: locations cannot be moved there.")


def filesystem_for(location: str, metastore: str | None = None, options: dict[str, Any] | None = None) -> FileSystem:
    """The filesystem of ``location``: with ``metastore``, that metastore's own object-store options apply;
    ``options`` (a :func:`~catalog_admin.filesystem_options.filesystem_options` mapping) replaces the settings'."""
    scheme = urlsplit(location).scheme or "file"
    if scheme == "file":
        return LocalFileSystem()
    if scheme not in OBJECT_STORE_SCHEMES and scheme != "hdfs":
        return UnreachableFileSystem(scheme)
    from catalog_admin.object_stores import FsspecFileSystem

    configured = options if options is not None else _settings_options()
    if scheme == "hdfs":
        hdfs = configured.get("hdfs", {})
        if not hdfs and not os.environ.get("HADOOP_CONF_DIR"):
            return UnreachableFileSystem(scheme)  # no cluster configured: nothing to ask
        probe = float(configured.get("hdfs_probe_seconds", 10))
        authority = urlsplit(location).netloc
        return FsspecFileSystem(scheme, hdfs, renames_by_copy=False, authority=authority, probe_seconds=probe)
    own = configured.get("metastores", {}).get(metastore or "", {}).get("s3")
    s3 = own if own is not None else configured.get("s3", {})
    if not s3 and not (os.environ.get("AWS_ACCESS_KEY_ID") or os.environ.get("AWS_PROFILE")):
        return UnreachableFileSystem(scheme)  # no object store configured: nothing to ask
    return FsspecFileSystem(scheme, s3)


def _settings_options() -> dict[str, Any]:
    from django.conf import settings

    return getattr(settings, "CATALOG_FILESYSTEMS", {})


def _local_path(location: str) -> Path:
    return Path(urlsplit(normalize_location(location)).path)  # Hive stores escaped names as they are on disk


def is_hidden(relative: str) -> bool:
    """Whether any part of a relative path is hidden by Hive's ``FileUtils.HIDDEN_FILES_PATH_FILTER``."""
    return any(_hidden(part) for part in relative.split("/"))


def dir_entries(files: list[FileEntry], read_text: Any) -> tuple[DirEntry, ...]:
    """A directory's children built from a recursive file listing (object stores have no directories of their own);
    ``read_text(location)`` reads a base's ``_metadata_acid``."""
    children: dict[str, list[FileEntry]] = {}
    for entry in files:
        children.setdefault(entry.relative.split("/", 1)[0], []).append(entry)
    result = []
    for name, entries in sorted(children.items()):
        if len(entries) == 1 and entries[0].relative == name:
            result.append(DirEntry(name=name, is_dir=False, size=entries[0].size))
            continue
        inner = [e.relative.split("/", 1)[1] for e in entries]
        marker = next((e.location for e in entries if e.relative == f"{name}/_metadata_acid"), None)
        result.append(
            DirEntry(
                name=name,
                is_dir=True,
                size=sum(e.size for e in entries),
                compacted=marker is not None and _compacted_marker(read_text, marker),
                files=tuple(sorted(r for r in inner if not _hidden(r.rsplit("/", 1)[-1]))),
            )
        )
    return tuple(result)


def _hidden(name: str) -> bool:
    """Hive's ``FileUtils.HIDDEN_FILES_PATH_FILTER``."""
    return name.startswith(("_", "."))


def _dir_entry(path: Path) -> DirEntry:
    """A child of a table or partition directory: a file with its size, or a directory with the bytes and the
    (non-hidden) files under it and whether the compactor marked it (``_metadata_acid``, Hive's ``MetaDataFile``)."""
    if not path.is_dir():
        return DirEntry(name=path.name, is_dir=False, size=path.stat().st_size)
    files, size = [], 0
    for dirpath, _dirs, names in os.walk(path):
        for name in names:
            size += os.path.getsize(os.path.join(dirpath, name))
            if not _hidden(name):
                files.append(os.path.relpath(os.path.join(dirpath, name), path))
    return DirEntry(
        name=path.name,
        is_dir=True,
        size=size,
        compacted=_compacted_marker(lambda p: Path(p).read_text(), str(path / "_metadata_acid")),
        files=tuple(sorted(files)),
    )


def _compacted_marker(read_text: Any, metadata: str) -> bool:
    """``MetaDataFile.isCompacted``: the file exists and its ``dataFormat`` is ``compacted``."""
    try:
        return json.loads(read_text(metadata)).get("dataFormat") == "compacted"
    except (OSError, ValueError, AttributeError):
        return False
