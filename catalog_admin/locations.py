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
import posixpath
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import partial
from itertools import islice
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
    "FolderSizes",
    "LocalFileSystem",
    "SampledSize",
    "SymlinkRefused",
    "TreeSize",
    "UnreachableFileSystem",
    "dir_entries",
    "filesystem_for",
    "is_hidden",
    "is_under",
    "kernel_copy",
    "linked_ancestors",
    "list_directories",
    "local_entries",
    "local_exists",
    "local_files",
    "local_sampled_size",
    "local_sizes",
    "local_tree_sizes",
    "location_filesystem",
    "location_scheme",
    "make_directory",
    "mapped_digest",
    "new_hash",
    "normalize_location",
    "open_local",
    "remove_empty_directories",
    "stream_digest",
    "tree_sizes",
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
class SampledSize:
    """Files and bytes under a directory whose leaf directories (a table's partitions) were counted in part: the
    ``counted`` of the ``found`` leaves that were picked, their total scaled by ``found / counted``; everything else
    under the directory counted in full. ``counted == found``: exact."""

    files: int
    bytes: int
    counted: int
    found: int

    @property
    def sample(self) -> tuple[int, int] | None:
        """``(counted, found)`` when scaled from a sample; None when every leaf was counted."""
        return (self.counted, self.found) if self.counted < self.found else None


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
    symlink: bool = False


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
    table's data files, a copy just made) are given here. No link in its path is followed."""
    with open_local(Path(path)) as stream:
        return _mapped_stream_digest(stream, algorithm)


def _mapped_stream_digest(stream: BinaryIO, algorithm: str) -> Digest:
    digest = new_hash(algorithm)
    size = os.fstat(stream.fileno()).st_size
    if size:
        with mmap.mmap(stream.fileno(), size, access=mmap.ACCESS_READ) as mapped:
            mapped.madvise(mmap.MADV_SEQUENTIAL)
            digest.update(mapped)
    return Digest(algorithm, digest.hexdigest(), size)


def kernel_copy(source: str | Path, destination: str | Path) -> int:
    """Copy a local file inside the kernel (``copy_file_range``, as ``cp`` does: no bytes through Python; a
    server-side copy or a reflink where the filesystem offers one), replacing ``destination``; the bytes copied.
    Falls back to ``sendfile`` where the kernel refuses, e.g. across filesystems on old kernels. No link in either
    path is followed."""
    with open_local(Path(source)) as reader, open_local(Path(destination), "wb") as writer:
        return _copy_stream(reader, writer)


class LocalFileSystem:
    """``file:`` locations on this machine's disk. No symbolic link is ever followed, at any level of a path: every
    path is opened one component at a time from ``/`` with ``O_NOFOLLOW`` (:func:`open_local`), so a link in a
    parent directory is refused as surely as a link in place of the file; listings report links as links
    (``FileEntry.symlink``), never their targets."""

    scheme = "file"
    renames_by_copy = False

    def exists(self, location: str) -> bool | None:
        return os.path.lexists(_local_path(location))

    def tree_size(self, location: str) -> TreeSize | None:
        # Counted through descriptors, nothing kept per file (what ``list_files`` would count, without its list).
        return local_tree_sizes([location]).get(location)

    def list_files(self, location: str, limit: int | None = None) -> list[FileEntry] | None:
        try:
            return list(islice(local_files(location), limit)) if local_exists(location) else None
        except SymlinkRefused as refused:
            return [FileEntry(normalize_location(refused.filename), "", 0, symlink=True)]

    def list_directory(self, location: str) -> tuple[DirEntry, ...] | None:
        path = _local_path(location)
        try:
            with _directory(path) as fd:
                children = _children(fd)
        except (SymlinkRefused, NotADirectoryError, FileNotFoundError):
            return None
        return tuple(_dir_entry(location, name, info) for name, info in children)

    def quick_stats(self, location: str) -> TreeSize | None:
        files = size = 0
        try:
            for entry in local_files(location, skip_hidden=True):
                files, size = files + 1, size + entry.size
        except (FileNotFoundError, NotADirectoryError):
            pass
        return TreeSize(files=files, bytes=size)

    def checksum(self, location: str, algorithm: str = "md5") -> str:
        return self.digest(location, algorithm).hexdigest

    def digest(self, location: str, algorithm: str = "md5") -> Digest:
        with self.open(location) as stream:
            return _mapped_stream_digest(stream, algorithm)

    def open(self, location: str, mode: str = "rb") -> BinaryIO:
        return open_local(_local_path(location), mode)

    def copy_file(self, source: str, destination: str) -> None:
        with self.open(source) as reader, self.open(destination, "wb") as writer:
            _copy_stream(reader, writer)

    def delete_tree(self, location: str) -> None:
        path = _local_path(location)
        if not path.name:
            raise OSError(errno.EPERM, "the filesystem root is never deleted", str(path))
        try:
            with _directory(path.parent) as parent:
                _delete_entry(parent, path)
        except FileNotFoundError:
            return  # nothing there (or it went meanwhile)

    def rename(self, source: str, destination: str) -> None:
        origin, target = _local_path(source), _local_path(destination)
        with _directory(origin.parent) as source_fd, _directory(target.parent, create=True) as target_fd:
            info = _lstat(origin.name, source_fd)
            if info is not None and stat.S_ISLNK(info.st_mode):
                raise SymlinkRefused(str(origin))
            if _lstat(target.name, target_fd) is not None:
                # os.rename would silently replace an empty directory that appeared after the preview.
                raise FileExistsError(errno.EEXIST, "the destination already exists", str(target))
            os.rename(origin.name, target.name, src_dir_fd=source_fd, dst_dir_fd=target_fd)

    def prune_empty_parents(self, location: str, levels: int | None = None) -> None:
        parent = _local_path(location).parent
        while levels != 0 and parent != parent.parent:
            try:
                with _directory(parent.parent) as fd:
                    os.rmdir(parent.name, dir_fd=fd)  # refuses a link (ENOTDIR) and a non-empty directory
            except OSError:
                return
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
    scheme = location_scheme(location)
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


# Local paths, never through a link ------------------------------------------------------------------------------

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OPEN_FLAGS = {
    "rb": os.O_RDONLY,
    "wb": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    "ab": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
}


class SymlinkRefused(OSError):
    """A local path that is, or passes through, a symbolic link (``filename``: the link): the console follows none."""

    def __init__(self, path: str) -> None:
        super().__init__(errno.ELOOP, "a symbolic link is never followed", path)


@contextmanager
def _directory(path: Path, *, create: bool = False) -> Iterator[int]:
    """A descriptor of the directory ``path``, opened from ``/`` one component at a time with ``O_NOFOLLOW`` (a
    link anywhere raises :class:`SymlinkRefused`); ``create``: missing components are made on the way."""
    fd = os.open("/", _DIRECTORY_FLAGS)
    try:
        parts = path.parts[1:]
        for index, part in enumerate(parts):
            child = _open_child(fd, part, partial(_joined, parts[: index + 1]), create)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _joined(parts: tuple[str, ...]) -> str:
    return "/" + "/".join(parts)


def _open_child(fd: int, name: str, path: Callable[[], str], create: bool) -> int:
    """Open the directory ``name`` of ``fd`` (``path``: its full path, for a refusal's message)."""
    try:
        return os.open(name, _DIRECTORY_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        if not create:
            raise
        with suppress(FileExistsError):
            os.mkdir(name, dir_fd=fd)
        return _open_child(fd, name, path, create=False)
    except OSError:
        info = _lstat(name, fd)
        if info is not None and stat.S_ISLNK(info.st_mode):
            raise SymlinkRefused(path()) from None
        raise


def _delete_entry(parent: int, path: Path) -> None:
    """Remove ``path``, an entry of the directory ``parent``: a file, or a directory with everything below it
    (``rmtree`` through descriptors, never following a link below it); a link in its place is refused."""
    info = _lstat(path.name, parent)
    if info is None:
        return
    if stat.S_ISLNK(info.st_mode):
        raise SymlinkRefused(str(path))
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(path.name, dir_fd=parent)
    else:
        os.unlink(path.name, dir_fd=parent)


def _lstat(name: str, fd: int) -> os.stat_result | None:
    """The entry ``name`` of the directory ``fd`` itself (a link is not followed); None when it does not exist."""
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def open_local(path: Path, mode: str = "rb") -> BinaryIO:
    """A local file opened with no link followed anywhere in its path (:class:`SymlinkRefused`); ``rb``, ``wb`` or
    ``ab``, writing creates the missing parents."""
    if mode not in _OPEN_FLAGS:
        raise ValueError(f"Unsupported mode {mode!r}; one of {', '.join(_OPEN_FLAGS)}")
    flags = _OPEN_FLAGS[mode] | os.O_NOFOLLOW | os.O_CLOEXEC
    with _directory(path.parent, create=mode != "rb") as parent:
        try:
            fd = os.open(path.name, flags, 0o666, dir_fd=parent)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise SymlinkRefused(str(path)) from None
            raise
    return os.fdopen(fd, mode)


def linked_ancestors(locations: Iterable[str]) -> dict[str, str]:
    """For each local location that is a symbolic link or lies below one: that link (the one nearest ``/``), as a
    location. Every distinct directory on the way is checked once (``lstat``), whatever the number of locations: a
    directory's answer is its parent's (remembered) or itself; below a path that does not exist nothing is asked
    (a trash destination's 100,000 folders under one missing root cost one ``lstat``)."""
    links: dict[str, str | None] = {"/": None, "": None}
    missing: set[str] = set()

    def link_of(path: str) -> str | None:
        if path not in links:
            above = posixpath.dirname(path)
            parent = link_of(above)
            if parent is not None:
                links[path] = parent
            elif above in missing:
                links[path] = None
                missing.add(path)
            else:
                links[path] = _link_itself(path, missing)
        return links[path]

    found = {}
    for location in locations:
        normal = normalize_location(location)
        if not normal.startswith("file:") and urlsplit(normal).scheme != "file":
            continue
        link = link_of(_local_path_text(location))
        if link is not None:
            found[location] = f"file:{link}"
    return found


def _link_itself(path: str, missing: set[str]) -> str | None:
    """``path`` when it is a link itself (its parents are not); a path that does not exist is added to ``missing``."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        missing.add(path)
        return None
    except (OSError, ValueError):  # as os.path.islink: unreadable is not a link
        return None
    return path if stat.S_ISLNK(mode) else None


def tree_sizes(locations: Iterable[str], metastore: str | None = None) -> dict[str, TreeSize | None]:
    """Of ``locations``, those that exist, each with the files and bytes under it (None: it cannot be counted); a
    missing location, or one whose filesystem cannot be checked, is left out. The same answers as ``exists`` then
    ``tree_size`` of each, with the local ones found in one descent (:func:`local_tree_sizes`)."""
    found: dict[str, TreeSize | None] = {}
    local = []
    for location in locations:
        if _is_local(location):
            local.append(location)
            continue
        filesystem = filesystem_for(location, metastore)
        if filesystem.exists(location):
            found[location] = filesystem.tree_size(location)
    found.update(local_tree_sizes(local))
    return found


def local_tree_sizes(locations: Iterable[str]) -> dict[str, TreeSize | None]:
    """Files and bytes under each local location that exists (a missing one is left out), all found in one descent:
    the paths in sorted order, each directory on the way opened once (from ``/``, one component at a time with
    ``O_NOFOLLOW``) and kept open while the next path shares it, each location opened relative to its verified
    parent's descriptor and counted through descriptors. No link is followed at any level: a location that is a
    link, or is reached through one, counts as that one link (one file of no bytes, as ``list_files`` reports it);
    a file in a directory's place counts nothing; the filesystem root is not walked (None)."""
    return local_sizes(locations, ())[0]


FolderSizes = dict[str, TreeSize | None]  # a folder's entries by name: the size under each directory, None otherwise


def local_sizes(
    trees: Iterable[str], folders: Iterable[str]
) -> tuple[dict[str, TreeSize | None], dict[str, FolderSizes | None]]:
    """:func:`local_tree_sizes` of ``trees``, and for each local directory of ``folders`` the files and bytes under
    each of its entries by name (None for an entry that is not a directory: a file, a link); None for a folder that
    is missing or is or lies below a link. All found in one descent (each directory on the way opened once)."""
    paths: dict[tuple[str, ...], tuple[list[str], list[str]]] = {}
    sizes: dict[str, TreeSize | None] = {}
    listed: dict[str, FolderSizes | None] = {}
    for kind, locations in enumerate((trees, folders)):
        for location in locations:
            path = _local_path_text(location)
            if path.startswith("/") and path != "/":
                paths.setdefault(tuple(path[1:].split("/")), ([], []))[kind].append(location)
            elif kind:
                listed[location] = None
            elif os.path.lexists(path):  # the filesystem root itself, or a relative path: there, but never walked
                sizes[location] = None
    if not paths:
        return sizes, listed
    with _Descent() as descent:
        for parts in sorted(paths):
            at_trees, at_folders = paths[parts]
            size = descent.tree_size(parts) if at_trees else None
            for location in at_trees if size is not None else ():
                sizes[location] = size
            entries = descent.folder_sizes(parts) if at_folders else None
            listed.update(dict.fromkeys(at_folders, entries))
    return sizes, listed


def local_sampled_size(location: str, leaves: Iterable[str], picked: Iterable[str]) -> SampledSize | None:
    """Files and bytes under the local directory ``location`` (None: missing, a link or below one), each of its
    ``leaves`` (locations strictly inside it: a table's partition directories) counted only if it is ``picked``,
    the picked ones' total scaled to all the leaves found on disk; everything else counted in full (files beside
    the leaves, other directories). One descent through descriptors, no link followed: a leaf that is a link counts
    as the file it is. A leaf inside another leaf belongs to the outer one. When none of the picked leaves is on
    disk but others are, every leaf is counted."""
    root = _local_path_text(location).rstrip("/")
    inside = _relative_below(root, leaves)
    try:
        tally = _LeafTally(inside, _relative_below(root, picked) & inside).of(root)
        if tally.found and not tally.counted:
            tally = _LeafTally(inside, inside).of(root)
    except (SymlinkRefused, FileNotFoundError, NotADirectoryError):
        return None
    scale = tally.found / tally.counted if tally.counted else 0
    return SampledSize(
        files=tally.outside_files + round(tally.files * scale),
        bytes=tally.outside_bytes + round(tally.bytes * scale),
        counted=tally.counted,
        found=tally.found,
    )


def _relative_below(root: str, locations: Iterable[str]) -> set[str]:
    """The paths below the local directory ``root`` of those of ``locations`` strictly inside it."""
    paths = (_local_path_text(location) for location in locations)
    return {path[len(root) + 1 :] for path in paths if path.startswith(root + "/")}


class _LeafTally:
    """:func:`local_sampled_size`'s descent: what lies outside the leaves counted in full, the picked leaves apart."""

    def __init__(self, leaves: set[str], picked: set[str]) -> None:
        self.leaves, self.picked = leaves, picked
        self.found = self.counted = self.files = self.bytes = self.outside_files = self.outside_bytes = 0

    def of(self, root: str) -> _LeafTally:
        """The tally of the directory ``root`` (raises as :func:`_directory` when it cannot be opened)."""
        with _directory(Path(root)) as fd:
            self.outside_files, self.outside_bytes = self._count(fd, root, "")
        return self

    def _count(self, fd: int, path: str, relative: str) -> tuple[int, int]:
        """Files and bytes below ``fd`` outside the leaves (``relative``: its path below the root, ``""`` for it)."""
        files = size = 0
        for name, info in _kinds(fd):
            if info is not None:
                files, size = files + 1, size + info.st_size
                continue
            below = f"{relative}/{name}" if relative else name
            is_leaf = below in self.leaves
            self.found += is_leaf
            if is_leaf and below not in self.picked:
                continue
            try:
                child = _open_child(fd, name, partial(str.__add__, f"{path}/", name), create=False)
            except (FileNotFoundError, NotADirectoryError, SymlinkRefused):  # changed since the listing
                continue
            try:
                inner = _count(child, f"{path}/{name}") if is_leaf else self._count(child, f"{path}/{name}", below)
            finally:
                os.close(child)
            if is_leaf:
                self.counted, self.files, self.bytes = self.counted + 1, self.files + inner[0], self.bytes + inner[1]
            else:
                files, size = files + inner[0], size + inner[1]
        return files, size


def local_entries(location: str) -> tuple[tuple[str, bool], ...] | None:
    """The entries of a local directory, sorted by name, each with whether it is a directory (no link followed: a
    link is not one); None when the directory is missing or is or lies below a link."""
    try:
        with _directory(_local_path(location)) as fd:
            return tuple((name, info is None) for name, info in _kinds(fd))
    except (SymlinkRefused, FileNotFoundError, NotADirectoryError):
        return None


def list_directories(locations: Iterable[str], metastore: str | None = None) -> dict[str, tuple[DirEntry, ...] | None]:
    """``list_directory`` of each location (None: it cannot be listed), the local ones in one descent
    (:class:`_Descent`: each directory on the way opened once, no link followed at any level)."""
    listed: dict[str, tuple[DirEntry, ...] | None] = {}
    by_path: dict[tuple[str, ...], list[str]] = {}
    for location in locations:
        path = _local_path_text(location) if _is_local(location) else ""
        if path.startswith("/") and path != "/":
            by_path.setdefault(tuple(path[1:].split("/")), []).append(location)
        else:  # another filesystem, or the local root itself
            listed[location] = filesystem_for(location, metastore).list_directory(location)
    with _Descent() as descent:
        for parts in sorted(by_path):
            try:
                children: list[tuple[str, os.stat_result]] | None = _children(descent.open(parts))
            except (SymlinkRefused, NotADirectoryError, FileNotFoundError):
                children = None
            for location in by_path[parts]:
                listed[location] = (
                    None if children is None else tuple(_dir_entry(location, name, info) for name, info in children)
                )
    return listed


class _Descent:
    """Directories opened from ``/`` one component at a time without following a link, the chain kept open while
    the next (sorted) path shares it: each directory on the way is opened once."""

    def __init__(self) -> None:
        self.names: tuple[str, ...] = ()  # the directories open below ``/``, one descriptor each after the root's
        self.fds = [os.open("/", _DIRECTORY_FLAGS)]

    def __enter__(self) -> _Descent:
        return self

    def __exit__(self, *exc: object) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []

    def tree_size(self, parts: tuple[str, ...]) -> TreeSize | None:
        """What :meth:`LocalFileSystem.tree_size` says of the directory ``/parts…`` (None: it does not exist)."""
        try:
            fd = self.open(parts)
            files, size = _count(fd, _joined(parts))
        except SymlinkRefused:
            return TreeSize(files=1, bytes=0)
        except FileNotFoundError:
            return None
        except NotADirectoryError:  # a file in the location's place counts nothing; above it, nothing is there
            return TreeSize(files=0, bytes=0) if len(self.names) == len(parts) - 1 else None
        return TreeSize(files=files, bytes=size)

    def folder_sizes(self, parts: tuple[str, ...]) -> FolderSizes | None:
        """What :func:`local_sizes` says of the folder ``/parts…``."""
        try:
            fd = self.open(parts)
            entries = _kinds(fd)
        except (SymlinkRefused, FileNotFoundError, NotADirectoryError):
            return None
        path = _joined(parts)
        return {name: None if info else self._child_size(fd, f"{path}/{name}", name) for name, info in entries}

    @staticmethod
    def _child_size(fd: int, path: str, name: str) -> TreeSize | None:
        try:
            child = _open_child(fd, name, lambda: path, create=False)
        except OSError:  # gone, or replaced by a file or a link, since the listing
            return None
        try:
            files, size = _count(child, path)
        finally:
            os.close(child)
        return TreeSize(files=files, bytes=size)

    def open(self, parts: tuple[str, ...]) -> int:
        """The descriptor of the directory ``/parts…``: the shared start of the chain kept, the rest opened below it
        (:func:`_open_child`: a link raises :class:`SymlinkRefused`; on any failure the chain stops above it)."""
        shared = min(len(self.names), len(parts))
        while shared and self.names[:shared] != parts[:shared]:  # sorted neighbours differ near their ends
            shared -= 1
        while len(self.fds) > shared + 1:
            os.close(self.fds.pop())
        self.names = parts[:shared]
        for index in range(shared, len(parts)):
            self.fds.append(_open_child(self.fds[-1], parts[index], partial(_joined, parts[: index + 1]), create=False))
            self.names = parts[: index + 1]
        return self.fds[-1]


def _count(fd: int, path: str) -> tuple[int, int]:
    """Files and bytes below the directory ``fd`` (``path``: its path, for a refusal), through descriptors: every
    entry that is not a directory counts as a file of its own size (a link too, never followed)."""
    files = size = 0
    directories = []
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                directories.append(entry.name)
                continue
            try:
                size += entry.stat(follow_symlinks=False).st_size
                files += 1
            except FileNotFoundError:  # gone since the listing
                pass
    for name in directories:
        try:
            child = _open_child(fd, name, partial(str.__add__, f"{path}/", name), create=False)
        except (FileNotFoundError, NotADirectoryError):  # gone, or replaced by a file, since the listing
            continue
        try:
            inner_files, inner_size = _count(child, f"{path}/{name}")
        finally:
            os.close(child)
        files, size = files + inner_files, size + inner_size
    return files, size


def local_exists(location: str) -> bool:
    """Whether a local location exists, reached without following a link (:class:`SymlinkRefused` on one)."""
    path = _local_path(location)
    if not path.name:
        return True
    try:
        with _directory(path.parent) as fd:
            return _lstat(path.name, fd) is not None
    except (FileNotFoundError, NotADirectoryError):
        return False


def local_files(location: str, *, skip_hidden: bool = False) -> Iterator[FileEntry]:
    """The files under a local location (recursively, sorted, each directory's files before its subdirectories),
    a link listed as itself (``symlink``, its own size) and never followed; ``skip_hidden``: Hive's hidden names
    (``_…``, ``.…``) are left out with what is below them. A location that is a link, or is reached through one,
    raises :class:`SymlinkRefused`; a missing one lists nothing."""
    path, prefix = _local_path(location), normalize_location(location)
    try:
        with _directory(path) as fd:
            yield from _walk(fd, prefix, "", skip_hidden)
    except NotADirectoryError:
        with _directory(path.parent) as parent:
            info = _lstat(path.name, parent)
        if info is not None and stat.S_ISLNK(info.st_mode):
            raise SymlinkRefused(str(path)) from None
    except FileNotFoundError:
        return


def _walk(fd: int, prefix: str, relative: str, skip_hidden: bool) -> Iterator[FileEntry]:
    directories = []
    for name, info in _kinds(fd):
        if skip_hidden and _hidden(name):
            continue
        inner = f"{relative}{name}"
        if info is None:
            directories.append(name)
        else:
            yield FileEntry(f"{prefix}/{inner}", inner, info.st_size, symlink=stat.S_ISLNK(info.st_mode))
    for name in directories:
        child = _open_child(fd, name, partial(str.__add__, f"{prefix}/{relative}", name), create=False)
        try:
            yield from _walk(child, prefix, f"{relative}{name}/", skip_hidden)
        finally:
            os.close(child)


def _kinds(fd: int) -> list[tuple[str, os.stat_result | None]]:
    """The entries of the directory ``fd``, sorted by name: a directory as None (known from the listing's own entry
    type, no ``lstat``), anything else with its own status (links not followed)."""
    with os.scandir(fd) as entries:
        found = [(e.name, None if e.is_dir(follow_symlinks=False) else e.stat(follow_symlinks=False)) for e in entries]
    found.sort(key=_first)
    return found


def _first(pair: tuple[str, object]) -> str:
    return pair[0]


def _children(fd: int) -> list[tuple[str, os.stat_result]]:
    """The entries of the directory ``fd``, sorted by name, each as itself (links not followed)."""
    with os.scandir(fd) as entries:
        return sorted((e.name, e.stat(follow_symlinks=False)) for e in entries)


def _copy_stream(reader: BinaryIO, writer: BinaryIO) -> int:
    """Copy an open local file into another inside the kernel (``copy_file_range``), or by ``sendfile`` where the
    kernel refuses (across filesystems on old kernels); the bytes copied."""
    try:
        copied = 0
        while step := os.copy_file_range(reader.fileno(), writer.fileno(), 1 << 30):
            copied += step
        return copied
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
            raise
    reader.seek(0)
    writer.seek(0)
    writer.truncate()
    shutil.copyfileobj(reader, writer)
    return writer.tell()


def _settings_options() -> dict[str, Any]:
    from django.conf import settings

    return getattr(settings, "CATALOG_FILESYSTEMS", {})


def _local_path(location: str) -> Path:
    return Path(_local_path_text(location))  # Hive stores escaped names as they are on disk


def _local_path_text(location: str) -> str:
    """``str(_local_path(location))`` without a ``Path`` or a URI parse where the location is a plain ``file:/…``
    (no query, fragment, authority, doubled slash, ``.`` segment or trailing slash to resolve): a plan asks this of
    each of 100,000 directories."""
    normal = normalize_location(location)
    if normal.startswith("file:/") and not normal.startswith("file://"):
        path = normal[5:]
        plain = not ("?" in path or "#" in path or "//" in path or "/./" in path or "/../" in path)
        if plain and not path.endswith(("/", "/.", "/..")):
            return path  # a hidden name (``/.catalog-admin-trash``) is no ``.`` segment: it stays on the fast path
    return str(Path(urlsplit(normal).path))


def _is_local(location: str) -> bool:
    """Whether ``location`` is on this machine's disk (:func:`filesystem_for`'s ``LocalFileSystem``)."""
    return location_scheme(location) == "file"


def location_scheme(location: str) -> str:
    """The scheme of ``location`` as ``urlsplit`` reads it, ``file`` for none: without a URI parse for a local path
    (a plan asks this of each of 100,000 directories)."""
    if location.startswith(("file:", "/")):
        return "file"
    return urlsplit(location).scheme or "file"


def location_filesystem(location: str) -> tuple[str, str]:
    """The scheme (``file`` for none) and authority of ``location``: two locations with the same share a
    filesystem."""
    if location.startswith("/") or (location.startswith("file:") and not location.startswith("file://")):
        return "file", ""
    parts = urlsplit(location)
    return parts.scheme or "file", parts.netloc


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


def _dir_entry(location: str, name: str, info: os.stat_result) -> DirEntry:
    """A child of a table or partition directory: a file (or a link) with its own size, or a directory with the
    bytes and the (non-hidden) files under it and whether the compactor marked it (``_metadata_acid``, Hive's
    ``MetaDataFile``); no link is followed."""
    if not stat.S_ISDIR(info.st_mode):
        return DirEntry(name=name, is_dir=False, size=info.st_size)
    child = f"{normalize_location(location)}/{name}"
    try:
        entries = list(local_files(child))
    except SymlinkRefused:
        entries = []
    files = tuple(e.relative for e in entries if not _hidden(e.relative.rsplit("/", 1)[-1]))
    return DirEntry(
        name=name,
        is_dir=True,
        size=sum(e.size for e in entries),
        compacted=_compacted_marker(_read_local_text, f"{child}/_metadata_acid"),
        files=files,
    )


def _read_local_text(location: str) -> str:
    with open_local(_local_path(location)) as stream:
        return stream.read().decode()


def _compacted_marker(read_text: Any, metadata: str) -> bool:
    """``MetaDataFile.isCompacted``: the file exists and its ``dataFormat`` is ``compacted``."""
    try:
        return json.loads(read_text(metadata)).get("dataFormat") == "compacted"
    except (OSError, ValueError, AttributeError):
        return False


def make_directory(location: str) -> list[str]:
    """Create ``location`` and its missing parents on local disk, opening every component without following a link
    (:class:`SymlinkRefused`); the directories created, outermost first (none elsewhere: object stores have none)."""
    if urlsplit(normalize_location(location)).scheme != "file":
        return []
    path = _local_path(location)
    missing = []
    probe = path
    while not os.path.lexists(probe) and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    with _directory(path, create=True):
        pass
    return [f"file:{created}" for created in reversed(missing)]


def remove_empty_directories(locations: Iterable[str]) -> list[str]:
    """Remove each local directory of ``locations``, innermost first, only while it is empty (``rmdir``: never a
    file, never through a link); the ones kept because something is in them (or they are not directories)."""
    kept = []
    for location in sorted(locations, key=len, reverse=True):
        if urlsplit(normalize_location(location)).scheme != "file":
            continue
        path = _local_path(location)
        try:
            with _directory(path.parent) as fd:
                os.rmdir(path.name, dir_fd=fd)
        except FileNotFoundError:
            continue
        except OSError:
            kept.append(location)
    return kept
