"""
Filesystems reached through fsspec: S3-compatible object stores (s3fs) and HDFS (hdfs-native).

Locations keep Hive's spelling (``s3a://bucket/key``, ``hdfs://namenode:8020/path``); fsspec is given the scheme's
own path (``bucket/key`` for s3fs, the full URL for hdfs-native). On an object store a directory is a key prefix: a
"rename" copies every object and deletes the originals, which is why :attr:`FsspecFileSystem.renames_by_copy` tells
previews to show that cost (``operations.planners.common``) and large ones go through a relocation job.
"""

from __future__ import annotations

import errno
import os
import queue
import threading
from collections.abc import Callable
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from catalog_admin.hive.acid import DirEntry
from catalog_admin.hive.locations import normalize_location
from catalog_admin.locations import CHECKSUM_CHUNK, Digest, FileEntry, TreeSize, dir_entries, is_hidden, stream_digest

__all__ = (
    "JOB_CREDENTIALS",
    "SOURCE_JOB_CREDENTIALS",
    "UNREACHABLE",
    "FsspecFileSystem",
    "credentials_environment",
    "fsspec_filesystem",
    "plan_credentials_environment",
    "plan_filesystems",
    "profile_credentials",
    "with_credentials",
)

# What a client raises when the store cannot be reached or asked (hdfs-native raises RuntimeError for a missing or
# unreachable namenode, botocore its own errors for missing credentials): the interface answers "unknown" (None).
UNREACHABLE = (Exception,)


@cache
def _cached_filesystem(protocol: str, frozen: tuple[tuple[str, str], ...], authority: str = "") -> Any:
    import fsspec

    options = dict(frozen)
    if protocol == "s3":
        client: dict[str, Any] = {k: options[k] for k in ("endpoint_url",) if k in options}
        if "region" in options:
            client["region_name"] = options["region"]
        kwargs: dict[str, Any] = {"client_kwargs": client, "use_listings_cache": False, "skip_instance_cache": True}
        for name in ("profile", "key", "secret", "token"):
            if name in options:
                kwargs[name] = options[name]
        return fsspec.filesystem("s3", **kwargs)
    host, _, port = authority.partition(":")
    # hdfs-native: one client per namenode (or name service); the options are Hadoop configuration keys.
    return fsspec.filesystem("hdfs", host=host or None, port=int(port) if port else None, **options)


def fsspec_filesystem(scheme: str, options: dict[str, str], authority: str = "") -> Any:
    """The fsspec filesystem of ``scheme`` (``s3``/``s3a``/``s3n`` → s3fs, ``hdfs`` → hdfs-native for the namenode
    ``authority``), one per options."""
    if scheme not in ("hdfs", "viewfs"):
        options = options if "profile" in options else with_credentials(options)
        return _cached_filesystem("s3", tuple(sorted(options.items())))
    return _cached_filesystem("hdfs", tuple(sorted(options.items())), authority)


# The variables a worker sets in a job driver's environment (only there, never on disk): the S3 credentials of the
# job's metastore, resolved by the worker from its profile or its environment; for a merge's data copy, the source
# metastore's too (its store may need other credentials than the target's).
JOB_CREDENTIALS = ("CATALOG_JOB_S3_KEY", "CATALOG_JOB_S3_SECRET", "CATALOG_JOB_S3_TOKEN")
SOURCE_JOB_CREDENTIALS = ("CATALOG_JOB_SOURCE_S3_KEY", "CATALOG_JOB_SOURCE_S3_SECRET", "CATALOG_JOB_SOURCE_S3_TOKEN")
# Where a job's plan keeps each side's filesystem options (no secrets), with the variables of its credentials.
PLAN_FILESYSTEMS = {"filesystems": JOB_CREDENTIALS, "source_filesystems": SOURCE_JOB_CREDENTIALS}
_AWS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")


def with_credentials(options: dict[str, str], variables: tuple[str, str, str] = JOB_CREDENTIALS) -> dict[str, str]:
    """``options`` plus the S3 credentials of this process's environment: in a job's driver the job's own
    (``variables``, replacing a named profile the executors' hosts may lack), else the standard
    ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` (``AWS_SESSION_TOKEN``) unless a profile is named. A Spark
    program's driver hands them to its executors this way, in the tasks' closure, never in its JSON plan."""
    if "key" in options:
        return options
    key, secret, token = (os.environ.get(name) for name in variables)
    if not (key and secret):
        if "profile" in options:
            return options
        key, secret, token = (os.environ.get(name) for name in _AWS)
    if not (key and secret):
        return options
    own = {name: value for name, value in options.items() if name != "profile"}
    return {**own, "key": key, "secret": secret, **({"token": token} if token else {})}


def plan_filesystems(plan: dict[str, Any], side: str = "filesystems") -> dict[str, Any]:
    """A job plan's filesystem options for ``side`` (``filesystems``: the job's metastore; ``source_filesystems``: a
    merge's source, the same as the other when the plan has none) with this process's credentials for it."""
    if side not in plan:
        side = "filesystems"
    options = plan.get(side, {})
    return {**options, "s3": with_credentials(dict(options.get("s3", {})), PLAN_FILESYSTEMS[side])}


def plan_credentials_environment(plan: dict[str, Any]) -> dict[str, str]:
    """The variables a job's driver needs to reach each side of ``plan`` (:func:`credentials_environment`)."""
    return {
        name: value
        for side, variables in PLAN_FILESYSTEMS.items()
        if side in plan
        for name, value in credentials_environment(plan[side].get("s3", {}), variables).items()
    }


def credentials_environment(
    s3_options: dict[str, str], variables: tuple[str, str, str] = JOB_CREDENTIALS
) -> dict[str, str]:
    """The ``variables`` for a job's driver reaching S3 with ``s3_options`` (a metastore's): its profile's
    credentials as botocore resolves them, else this process's standard AWS variables; empty when there are none
    (the preview blocks such a job: ``operations.planners.data_scope``)."""
    if "profile" in s3_options:
        found = profile_credentials(s3_options["profile"])
        values = (found.access_key, found.secret_key, found.token) if found is not None else (None, None, None)
    else:
        values = tuple(os.environ.get(name) for name in _AWS)
    if not (values[0] and values[1]):
        return {}
    return {name: value for name, value in zip(variables, values, strict=True) if value}


def profile_credentials(profile: str) -> Any:
    """A named profile's frozen credentials (``access_key``, ``secret_key``, ``token``), or None when botocore finds
    no such profile or no credentials in it."""
    import botocore.exceptions
    import botocore.session

    try:
        credentials = botocore.session.Session(profile=profile).get_credentials()
    except botocore.exceptions.BotoCoreError:
        return None
    return credentials.get_frozen_credentials() if credentials is not None else None


class FsspecFileSystem:
    """A Hive location scheme served by an fsspec filesystem."""

    def __init__(
        self,
        scheme: str,
        options: dict[str, str] | None = None,
        *,
        renames_by_copy: bool = True,
        authority: str = "",
        probe_seconds: float = 10.0,
    ) -> None:
        self.scheme = scheme
        self.options = dict(options or {})
        self.renames_by_copy = renames_by_copy
        self.authority = authority  # HDFS: the namenode or name service
        self.probe_seconds = probe_seconds

    @property
    def fs(self) -> Any:
        return fsspec_filesystem(self.scheme, self.options, self.authority)

    def path(self, location: str) -> str:
        """The path fsspec is given: ``bucket/key`` on an object store, the URL itself on HDFS."""
        location = normalize_location(location)
        if not self.renames_by_copy:
            return location
        parts = urlsplit(location)
        return f"{parts.netloc}{parts.path}".rstrip("/")

    def location(self, path: str) -> str:
        """A path fsspec returned, as a location of this scheme."""
        if not self.renames_by_copy:
            parts = urlsplit(path)
            return path if parts.scheme else f"{self.scheme}://{path.lstrip('/')}"
        return f"{self.scheme}://{path.lstrip('/')}"

    def _probe(self, ask: Callable[[], Any]) -> Any:
        """``ask()``, or None when it fails or, on HDFS, takes longer than ``probe_seconds`` (hdfs-native retries an
        unreachable namenode without end): a preview then says "unknown" instead of hanging."""
        if self.renames_by_copy:
            try:
                return ask()
            except UNREACHABLE:
                return None
        answer: queue.Queue = queue.Queue(maxsize=1)

        def probe() -> None:
            try:
                answer.put(ask())
            except UNREACHABLE:
                answer.put(None)

        threading.Thread(target=probe, daemon=True, name=f"probe {self.scheme}://{self.authority}").start()
        try:
            return answer.get(timeout=self.probe_seconds)
        except queue.Empty:
            return None

    def exists(self, location: str) -> bool | None:
        """On an object store a directory exists while an object lies under its prefix (an emptied "folder" some
        servers keep does not count)."""
        path = self.path(location)
        if not self.renames_by_copy:
            return self._probe(lambda: bool(self.fs.exists(path)))

        def under_prefix() -> bool:
            found = self.fs.find(path, detail=True)
            return any(info.get("type") != "directory" for info in found.values()) or bool(self.fs.isfile(path))

        return self._probe(under_prefix)

    def tree_size(self, location: str) -> TreeSize | None:
        files = self.list_files(location)
        if files is None:
            return None
        return TreeSize(files=len(files), bytes=sum(f.size for f in files))

    def list_files(self, location: str, limit: int | None = None) -> list[FileEntry] | None:
        root = self.path(location)

        def listing() -> dict[str, Any] | None:
            found = self.fs.find(root, detail=True)
            return found if found or self.fs.exists(root) else None

        found = self._probe(listing)
        if found is None:
            return None
        entries = []
        for path, info in sorted(found.items()):
            if info.get("type") == "directory":
                continue
            relative = path[len(root) :].lstrip("/") if path.startswith(root) else path.rsplit("/", 1)[-1]
            entries.append(FileEntry(self.location(path), relative, int(info.get("size") or 0)))
            if limit is not None and len(entries) >= limit:
                break
        return entries

    def list_directory(self, location: str) -> tuple[DirEntry, ...] | None:
        files = self.list_files(location)
        if files is None:
            return None
        return dir_entries(files, lambda child: self.open(child).read().decode())

    def quick_stats(self, location: str) -> TreeSize | None:
        files = self.list_files(location)
        if files is None:
            return None if self.exists(location) is None else TreeSize(files=0, bytes=0)
        shown = [f for f in files if not is_hidden(f.relative)]
        return TreeSize(files=len(shown), bytes=sum(f.size for f in shown))

    def checksum(self, location: str, algorithm: str = "md5") -> str:
        return self.digest(location, algorithm).hexdigest

    def digest(self, location: str, algorithm: str = "md5") -> Digest:
        with self.open(location) as stream:
            return stream_digest(stream, algorithm)

    def open(self, location: str, mode: str = "rb") -> Any:
        return self.fs.open(self.path(location), mode)

    def copy_file(self, source: str, destination: str) -> None:
        with self.open(source) as reader, self.open(destination, "wb") as writer:
            while chunk := reader.read(CHECKSUM_CHUNK):
                writer.write(chunk)

    def delete_tree(self, location: str) -> None:
        path = self.path(location)
        if self.fs.exists(path):
            self.fs.rm(path, recursive=True)

    def rename(self, source: str, destination: str) -> None:
        """Hive's ``renameDir``: on an object store every object is copied, then the originals deleted."""
        if self.exists(destination):
            raise FileExistsError(errno.EEXIST, "the destination already exists", destination)
        if not self.renames_by_copy:
            self.fs.mv(self.path(source), self.path(destination))
            return
        files = self.list_files(source) or []
        for entry in files:
            self.copy_file(entry.location, f"{destination.rstrip('/')}/{entry.relative}")
        self.delete_tree(source)

    def prune_empty_parents(self, location: str, levels: int | None = None) -> None:
        """Object stores have no directories to leave behind; on HDFS empty parents are removed."""
        if self.renames_by_copy:
            return
        parent = location.rstrip("/").rpartition("/")[0]
        while levels != 0 and parent.count("/") > 3 and self.exists(parent) and not self.fs.ls(self.path(parent)):
            self.fs.rmdir(self.path(parent))
            parent = parent.rpartition("/")[0]
            levels = None if levels is None else levels - 1
