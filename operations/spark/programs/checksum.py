"""
``checksum``: every file under some directories, with its size and checksum, computed in parallel by Spark.

Plan: ``{"directories": ["file:/…", …], "algorithm": "sha256", "pause_seconds": 0, "completed": […]}``. Each
directory is one unit: its files are listed by the driver, read and digested by the executors (a frame of paths and
``mapInArrow``: the DataFrame API only, so Spark Connect runs it too), and reported as done
(``unit_done``: the directory) once all its files are. A resumed run skips the directories in ``completed``.
``pause_seconds`` waits after each directory (to run gently beside other work; tests use it to cancel mid-way).
No symbolic link is followed: a directory holding one is refused naming it, and the executors open each file with
``O_NOFOLLOW`` at every level of its path (``catalog_admin.locations``), so a link swapped in later is not read.

Manifest: ``{"algorithm", "directories": {directory: {"files": {relative path: {"size", "checksum"}}, "bytes"}},
"skipped": [...]}``.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from catalog_admin.locations import SymlinkRefused, local_files, open_local
from operations.spark.programs.frames import map_rows

__all__ = ("run",)

CHUNK = 1 << 20


def run(spark: Any, plan: dict[str, Any], report: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    algorithm = plan.get("algorithm", "sha256")
    hashlib.new(algorithm)  # refuse an unknown algorithm before any work
    completed = set(plan.get("completed", []))
    listings = {directory: _list_files(directory) for directory in plan["directories"]}
    todo = [directory for directory in plan["directories"] if directory not in completed]
    report(
        {
            "partitions_total": len(listings),
            "partitions_done": len(listings) - len(todo),
            "files_total": sum(len(files) for files in listings.values()),
            "bytes_total": sum(size for files in listings.values() for _, size in files),
            "files_done": sum(len(listings[d]) for d in listings if d in completed),
            "bytes_done": sum(size for d in listings if d in completed for _, size in listings[d]),
            "message": f"{len(todo)} of {len(listings)} directories to checksum",
        }
    )
    manifest: dict[str, Any] = {"algorithm": algorithm, "directories": {}, "skipped": sorted(completed)}
    done_files = sum(len(listings[d]) for d in listings if d in completed)
    done_bytes = sum(size for d in listings if d in completed for _, size in listings[d])
    for index, directory in enumerate(todo, start=1):
        files = listings[directory]
        digests = _digest_all(spark, files, algorithm)
        root = _local_path(directory)
        manifest["directories"][directory] = {
            "files": {
                os.path.relpath(path, root): {"size": size, "checksum": digest} for path, size, digest in digests
            },
            "bytes": sum(size for _, size, _ in digests),
        }
        done_files += len(files)
        done_bytes += sum(size for _, size in files)
        report({"files_done": done_files, "bytes_done": done_bytes, "message": f"Checksummed {directory}"})
        report({"unit_done": directory, "partitions_done": len(listings) - len(todo) + index})
        time.sleep(float(plan.get("pause_seconds", 0)))
    return manifest


def file_digest(item: tuple[str, int], algorithm: str = "sha256") -> tuple[str, int, str]:
    """(path, size, hex digest) of one file, read in chunks; runs on an executor."""
    path, _ = item
    digest = hashlib.new(algorithm)
    size = 0
    with open_local(Path(path)) as stream:
        while chunk := stream.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return path, size, digest.hexdigest()


def _digest_all(spark: Any, files: list[tuple[str, int]], algorithm: str) -> list[tuple[str, int, str]]:
    """Every file digested on the executors (a frame of paths, ``mapInArrow``: the DataFrame API only)."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    listed = [StructField("path", StringType(), False), StructField("size", LongType(), False)]
    schema, result = StructType(listed), StructType([*listed, StructField("checksum", StringType(), False)])
    rows = [{"path": path, "size": size} for path, size in files]
    digests = map_rows(spark, rows, schema, result, partial(_digest_rows, algorithm=algorithm))
    return sorted((row["path"], row["size"], row["checksum"]) for row in digests)


def _digest_rows(rows: list[dict[str, Any]], algorithm: str) -> list[dict[str, Any]]:
    """On an executor: each row's file digested."""
    digests = (file_digest((row["path"], row["size"]), algorithm) for row in rows)
    return [{"path": path, "size": size, "checksum": digest} for path, size, digest in digests]


def _list_files(directory: str) -> list[tuple[str, int]]:
    _local_path(directory)  # local directories only
    found = []
    for entry in local_files(directory):
        if entry.symlink:
            raise SymlinkRefused(entry.location)
        found.append((urlsplit(entry.location).path, entry.size))
    return sorted(found)


def _local_path(location: str) -> str:
    parts = urlsplit(location)
    if parts.scheme not in ("", "file"):
        raise ValueError(f"checksum reads local directories only, not {parts.scheme}: locations")
    return parts.path
