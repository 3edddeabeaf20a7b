"""
The relocate program: copy the files the console planned, in parallel on Spark, each verified by size and checksum.

``plan`` (JSON, built by ``operations.services.relocate.relocation_copy_plan``)::

    {"units": [{"key": "dt=2024-01-01", "source": "...", "destination": "...",
                "files": [{"source": "...", "destination": "...", "size": 123}, ...]}, ...],
     "filesystems": {...},           # catalog_admin.filesystem_options, no secrets
     "source_filesystems": {...},    # how the sources are read, when other than that (a merge's source)
     "completed": ["dt=...", ...],   # units a previous run verified: skipped
     "batch_files": 256,             # files per Spark job (optional)
     "pause_seconds": 0,             # a wait after each batch, to run gently beside other work (optional)
     "checksum": "xxh3_128"}         # how copies are verified (optional; catalog_admin.locations.CHECKSUM_ALGORITHMS)

Units are copied in batches (one Spark job each: a frame of the batch's files spread over the executors, copied by
``mapInArrow``, the DataFrame API only, so the program runs through Spark Connect too); after a batch every unit whose
files all verified is reported with ``{"unit_done": key}``, so a resumed run skips it. A file that fails to verify
fails the program: nothing is swapped, and the run can resume. The manifest returns what was copied and verified,
with each copy's checksum and the algorithm. Each Spark task (or, without a session, this process) copies its files
with two threads; without a session this process copies with two threads per core.
Credentials are not in the plan: the driver takes them from its environment into the executors' closure (each side's:
``object_stores.plan_filesystems``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TYPE_CHECKING, Any

from catalog_admin.locations import CHECKSUM_ALGORITHMS, COPY_CHECKSUM
from catalog_admin.object_stores import plan_filesystems
from operations.spark.programs.file_copy import copy_verified
from operations.spark.programs.frames import map_rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

__all__ = ("CopyFailed", "run")

DEFAULT_BATCH_FILES = 256
DEFAULT_BATCH_BYTES = 2 << 30  # a few seconds of copying on local disk (docs/benchmarks.md: 400-800 MB/s)
COPY_THREADS = 2  # per Spark task
IN_PROCESS_THREADS = 2 * (os.cpu_count() or 1)  # without Spark: as many as local[*]'s tasks together


class CopyFailed(RuntimeError):
    """Some files did not copy or verify; the units reported done stay done for a resumed run."""


def run(spark: SparkSession | None, plan: dict, report: Callable[[dict], None]) -> dict:
    """Copy every unit not in ``plan["completed"]``; the manifest of what was copied and verified.

    ``spark`` None copies in this process (small relocations, and the quick tests of everything around the copy)."""
    started = time.monotonic()
    completed = set(plan.get("completed", ()))
    pending = [unit for unit in plan["units"] if unit["key"] not in completed]
    totals = _totals(plan["units"], completed)
    report({"message": f"Copying {len(pending)} of {len(plan['units'])} units", **totals})
    algorithm = plan.get("checksum", COPY_CHECKSUM)
    if algorithm not in CHECKSUM_ALGORITHMS:
        raise ValueError(f"Unknown checksum {algorithm!r} in the plan; known: {', '.join(CHECKSUM_ALGORITHMS)}")
    copy = partial(
        copy_verified, plan_filesystems(plan), algorithm=algorithm,
        source_options=plan_filesystems(plan, "source_filesystems"),
    )  # fmt: skip
    done: dict[str, dict[str, Any]] = {}
    progress = {"partitions_done": totals["partitions_done"], "files_done": totals["files_done"],
                "bytes_done": totals["bytes_done"]}  # fmt: skip
    for batch in _batches(
        pending, plan.get("batch_files", DEFAULT_BATCH_FILES), plan.get("batch_bytes", DEFAULT_BATCH_BYTES)
    ):
        results = _copy_batch(spark, copy, batch)
        failed = [r for r in results if not r["ok"]]
        for unit in batch:
            verified = [r for r in results if r["unit"] == unit["key"] and r["ok"]]
            if len(verified) != len(unit["files"]):
                continue
            done[unit["key"]] = _unit_manifest(unit, verified)
            progress["partitions_done"] += 1
            progress["files_done"] += len(verified)
            progress["bytes_done"] += sum(r["size"] for r in verified)
            report({"unit_done": unit["key"]})
        report(dict(progress))
        time.sleep(float(plan.get("pause_seconds", 0)))
        if failed:
            first = failed[0]
            raise CopyFailed(
                f"{len(failed)} file(s) failed to copy or verify; first: {first['source']}: {first['error']}"
            )
    return {
        "program": "relocate",
        "units": done,
        "skipped": sorted(completed),
        "checksum": algorithm,
        "files": sum(u["files"] for u in done.values()),
        "bytes": sum(u["bytes"] for u in done.values()),
        "seconds": round(time.monotonic() - started, 3),
    }


def _copy_batch(spark: SparkSession | None, copy: Callable[[dict], dict], batch: list[dict]) -> list[dict]:
    """The batch's files copied on the executors (without a session: in this process), each slice by a few threads."""
    items = [{"unit": unit["key"], **entry} for unit in batch for entry in unit["files"]]
    if not items:
        return []
    if spark is None:
        return _copy_each(copy, items, IN_PROCESS_THREADS)
    return map_rows(spark, items, *_schemas(), partial(_copy_each, copy, threads=COPY_THREADS))


def _schemas() -> tuple[StructType, StructType]:
    """A batch's files (``unit``, ``source``, ``destination``, ``size``) and their copies' results."""
    from pyspark.sql.types import BooleanType, LongType, StringType, StructField, StructType

    names = ("unit", "source", "destination")
    files = [*(StructField(name, StringType(), False) for name in names), StructField("size", LongType(), False)]
    outcome = [StructField("ok", BooleanType(), False), *(StructField(n, StringType()) for n in ("checksum", "error"))]
    return StructType(files), StructType([*files, *outcome])


def _copy_each(copy: Callable[[dict], dict], items: list[dict], threads: int) -> list[dict]:
    """``copy`` of every item by ``threads`` threads: the kernel's copies and the hashing release the GIL, and one
    copy's wait for the disk overlaps another's hashing."""
    with ThreadPoolExecutor(threads, thread_name_prefix="relocate-copy") as pool:
        return list(pool.map(copy, items))


def _batches(units: list[dict], batch_files: int, batch_bytes: int = DEFAULT_BATCH_BYTES) -> Iterator[list[dict]]:
    """Consecutive units holding about ``batch_files`` files or ``batch_bytes`` bytes together, whichever comes first
    (a unit is never split): units of big files report done every few seconds too, not after 256 of them."""
    batch: list[dict] = []
    files = size = 0
    for unit in units:
        batch.append(unit)
        files += len(unit["files"])
        size += sum(f["size"] for f in unit["files"])
        if files >= batch_files or size >= batch_bytes:
            yield batch
            batch, files, size = [], 0, 0
    if batch:
        yield batch


def _unit_manifest(unit: dict, verified: list[dict]) -> dict[str, Any]:
    return {
        "source": unit["source"],
        "destination": unit["destination"],
        "files": len(verified),
        "bytes": sum(r["size"] for r in verified),
        "checksums": {r["destination"]: r["checksum"] for r in verified},
    }


def _totals(units: list[dict], completed: set[str]) -> dict[str, int]:
    files = [f for u in units for f in u["files"]]
    done = [f for u in units if u["key"] in completed for f in u["files"]]
    return {
        "partitions_total": len(units),
        "partitions_done": sum(1 for u in units if u["key"] in completed),
        "files_total": len(files),
        "files_done": len(done),
        "bytes_total": sum(f["size"] for f in files),
        "bytes_done": sum(f["size"] for f in done),
    }
