"""
The Spark driver's entry point: ``entry.py <launch directory or job.json>`` (through ``spark-submit``; in cluster
deploy mode ``job.json`` travels with ``--files`` and is read from the driver's working directory) or
``python -m operations.spark.entry <launch directory>`` (Spark Connect).

It reads ``job.json`` (program, plan, master, configuration, the work location and the filesystem options to reach
it, the worker's pid), builds the SparkSession, imports ``operations.spark.programs.<program>`` and calls its ``run``.
Progress and the result manifest go to the work location (``operations.spark.work``: a local directory, or an
object-store/HDFS prefix the console reads through the same filesystem layer); the first event names the Spark
application and its UI. A watchdog ends the driver's whole process group when the worker following it dies (so
an orphaned driver never runs beside the job's resumed run) or when the console asks the work location to cancel (a
driver the console cannot signal: cluster deploy mode). A worker that stops on SIGTERM hands the driver over instead:
the work location's ``follower`` record says so (pid 0), and the watchdog lets the driver run on until a successor
names itself there, then follows that worker.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from operations.spark.work import WorkDir

__all__ = ("SPEC_FILE", "main", "process_alive", "read_spec")

SPEC_FILE = "job.json"
WATCH_SECONDS = 1.0


def main(argv: list[str]) -> int:
    spec = read_spec(Path(argv[1]))
    work = WorkDir(spec.get("work") or argv[1], spec.get("filesystems") or {})
    if work.cancel_requested():
        return 3  # a cluster's retry of a cancelled driver does nothing
    _watch(int(spec.get("worker_pid") or 0), work)
    report = work.reporter()
    spark = _session(spec)
    try:
        report(_application(spark, spec))
        program = importlib.import_module(f"operations.spark.programs.{spec['program']}")
        manifest = program.run(spark, spec["plan"], report)
    finally:
        spark.stop()
    work.write_manifest(manifest)
    return 0


def read_spec(given: Path) -> dict[str, Any]:
    """``job.json`` in the launch directory ``given``, ``given`` itself, or (cluster deploy mode) the copy
    ``--files`` put in the working directory."""
    for path in (given / SPEC_FILE, given, Path(SPEC_FILE)):
        if path.is_file():
            return dict(json.loads(path.read_text()))
    raise FileNotFoundError(f"No {SPEC_FILE} at {given} nor in {Path.cwd()}")


def process_alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped by its parent, does not)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return fields[0] not in ("Z", "X")


def _watch(worker_pid: int, work: WorkDir) -> None:
    """End this process group (the driver, and in client mode ``spark-submit``'s JVM) once the worker following it is
    gone without handing it over, or the work location holds a cancel request. ``worker_pid`` 0: nobody here to
    watch (cluster deploy mode)."""

    def watch() -> None:
        watched, handed_over = worker_pid, False
        while not _cancel_requested(work):
            if handed_over or (watched and not process_alive(watched)):
                follower = _follower_pid(work)
                if follower is None or (follower == watched and not handed_over):
                    break  # the worker died (kill -9) without handing the driver over, or its successor did
                if follower == -1:
                    pass  # the store did not answer this time: ask again
                else:
                    watched, handed_over = follower, follower == 0
                    if watched and not process_alive(watched):
                        break
            time.sleep(WATCH_SECONDS)
        os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, name="driver-watchdog", daemon=True).start()


def _follower_pid(work: WorkDir) -> int | None:
    """The pid of the worker following this driver now, from the work location's ``follower`` record: None when there
    is none (never handed over), 0 when nobody here follows it (handed over and waiting for a successor, or followed
    from another host), -1 when the store did not answer."""
    try:
        record = work.follower()
    except (OSError, ValueError):
        return -1
    if record is None:
        return None
    return int(record.get("pid") or 0) if record.get("host") == socket.gethostname() else 0


def _cancel_requested(work: WorkDir) -> bool:
    try:
        return work.cancel_requested()
    except OSError:  # the store did not answer this time: ask again
        return False


def _session(spec: dict[str, Any]) -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(spec.get("app_name", "catalog-admin"))
    master = spec["master"]
    if master.startswith("sc://"):
        builder = builder.remote(master)
    for key, value in spec.get("conf", {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if master.startswith("sc://") and spec.get("py_files"):
        spark.addArtifacts(*spec["py_files"], pyfile=True)  # spark-submit ships them with --py-files
    return spark


def _application(spark: Any, spec: dict[str, Any]) -> dict[str, Any]:
    """The Spark application's id and web UI; through Spark Connect, the server's application and the UI the
    engine's configuration names (``CATALOG_SPARK_MASTER_UI``)."""
    try:
        context = spark.sparkContext
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext on the client
        return {"spark_app_id": spark.conf.get("spark.app.id", ""), "spark_ui_url": spec.get("ui_url", "")}
    return {"spark_app_id": context.applicationId, "spark_ui_url": context.uiWebUrl or ""}


if __name__ == "__main__":
    sys.exit(main(sys.argv))
