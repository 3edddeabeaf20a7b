"""
The Spark driver's entry point: ``entry.py <job directory>`` (through ``spark-submit``) or
``python -m operations.spark.entry <job directory>`` (Spark Connect).

It reads ``job.json`` (program, plan, master, configuration, the worker's pid), builds the SparkSession, imports
``operations.spark.programs.<program>`` and calls its ``run``. Progress goes to ``progress.jsonl`` (one JSON object a
line, flushed at once; the first names the Spark application and its UI), the result manifest to ``manifest.json``
(written whole, then renamed). A watchdog ends the driver's whole process group when the worker that launched it
dies, so an orphaned driver never runs beside the job's resumed run.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ("MANIFEST_FILE", "PROGRESS_FILE", "SPEC_FILE", "main", "process_alive")

SPEC_FILE = "job.json"
PROGRESS_FILE = "progress.jsonl"
MANIFEST_FILE = "manifest.json"
WATCH_SECONDS = 1.0


def main(argv: list[str]) -> int:
    directory = Path(argv[1])
    spec = json.loads((directory / SPEC_FILE).read_text())
    if spec.get("worker_pid"):
        _watch_worker(int(spec["worker_pid"]))
    with (directory / PROGRESS_FILE).open("a", encoding="utf-8") as progress:
        report = _reporter(progress)
        spark = _session(spec)
        try:
            report(_application(spark))
            program = importlib.import_module(f"operations.spark.programs.{spec['program']}")
            manifest = program.run(spark, spec["plan"], report)
        finally:
            spark.stop()
    _write_manifest(directory / MANIFEST_FILE, manifest)
    return 0


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


def _watch_worker(pid: int) -> None:
    def watch() -> None:
        while process_alive(pid):
            time.sleep(WATCH_SECONDS)
        os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, name="worker-watchdog", daemon=True).start()


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


def _application(spark: Any) -> dict[str, Any]:
    """The Spark application's id and web UI (none through Spark Connect)."""
    try:
        context = spark.sparkContext
    except Exception:  # Spark Connect has no SparkContext on the client
        return {"spark_app_id": "", "spark_ui_url": ""}
    return {"spark_app_id": context.applicationId, "spark_ui_url": context.uiWebUrl or ""}


def _reporter(stream: Any) -> Callable[[dict[str, Any]], None]:
    lock = threading.Lock()

    def report(event: dict[str, Any]) -> None:
        line = json.dumps({"at": time.time(), **event}, default=str)
        with lock:
            stream.write(line + "\n")
            stream.flush()

    return report


def _write_manifest(path: Path, manifest: Any) -> None:
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(manifest, default=str))
    partial.rename(path)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
