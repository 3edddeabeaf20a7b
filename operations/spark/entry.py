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
names itself there, then follows that worker (the follower's host compared with the launching worker's
``CATALOG_WORKER_HOST``, given in ``job.json``): a process on this host is watched, one on another host holds a lease
it renews in its record (``operations.spark.lease``), and the driver beats (``alive``) for it. The driver leaves an
exit marker (``ended``) in the work location: ``succeeded`` after its manifest, ``failed`` after its Spark session
stopped, ``stopped`` once the watchdog ended every other process of its group (then it ends itself); a worker that
cannot see the driver's process waits for it.
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

from operations.spark.connect_sessions import interrupt_session
from operations.spark.lease import MIN_LEASE_SECONDS, DriverBeat, Freshness
from operations.spark.work import WorkDir

__all__ = ("SPEC_FILE", "main", "process_alive", "read_spec")

SPEC_FILE = "job.json"
WATCH_SECONDS = 1.0


def main(argv: list[str]) -> int:
    spec = read_spec(Path(argv[1]))
    work = WorkDir(spec.get("work") or argv[1], spec.get("filesystems") or {})
    if work.cancel_requested():
        work.write_ended("stopped", "asked to stop before it started")
        return 3  # a cluster's retry of a cancelled driver does nothing
    stopping = _watch(
        int(spec.get("worker_pid") or 0), work, str(spec.get("host") or socket.gethostname()), str(spec["master"])
    )
    report = work.reporter()
    spark = None
    try:
        spark = _session(spec)
        report(_application(spark, spec))
        program = importlib.import_module(f"operations.spark.programs.{spec['program']}")
        manifest = program.run(spark, spec["plan"], report)
    except BaseException as exc:
        _hold_while(stopping)  # the watchdog is ending the group: its marker says so, not this one
        if spark is not None:
            _stop_session(spark)
        work.write_ended("failed", f"{type(exc).__name__}: {exc}")
        raise
    spark.stop()
    work.write_manifest(manifest)
    work.write_ended("succeeded")
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


def _watch(worker_pid: int, work: WorkDir, host: str, master: str = "") -> threading.Event:
    """End this process group (the driver, and in client mode ``spark-submit``'s JVM) once the worker following it is
    gone without handing it over, a follower on another host let its lease lapse, or the work location holds a cancel
    request; meanwhile beat (``alive``). ``worker_pid`` 0: nobody here to watch (cluster deploy mode); ``host``: the
    launching worker's host name (``CATALOG_WORKER_HOST``), which a follower record must name for its pid to be
    watched here. The event returned is set once the watchdog ends the group, after interrupting what the driver's
    Spark Connect session (``master``) runs on its server."""
    stopping = threading.Event()

    def watch() -> None:
        following, beat = _Following(worker_pid, host), DriverBeat(work)
        while not (cancelled := _cancel_requested(work)) and following.goes_on(work):
            beat.beat()
            time.sleep(WATCH_SECONDS)
        stopping.set()
        interrupt_session(master)  # a Connect server runs a gone client's operations on: nothing for other engines
        _end_group(work, "a stop was requested in its work location" if cancelled else following.gone)

    threading.Thread(target=watch, name="driver-watchdog", daemon=True).start()
    return stopping


class _Following:
    """Who follows this driver, as its watchdog sees it: a worker's process on this host (``watched``), nobody while
    it waits for a successor after a hand-over (``handed_over``), or a worker on another host that holds a lease
    (``lease``: how long its record has stayed the same)."""

    def __init__(self, worker_pid: int, host: str) -> None:
        self.watched, self.host = worker_pid, host
        self.handed_over = False
        self.lease: Freshness | None = None
        self.lease_seconds = MIN_LEASE_SECONDS
        self.gone = ""  # why the driver does not go on
        self.holder = ""  # the follower elsewhere that holds the lease

    def goes_on(self, work: WorkDir) -> bool:
        """Whether the driver runs on, from the follower record read now (a hand-over or a new follower may have
        written it while the watched worker still ran)."""
        try:
            record = work.follower()
        except (OSError, ValueError):  # the store did not answer this time: ask again, while a lease runs out
            return self.lease is None or self._lease_holds(None)
        if record is None:  # never handed over: its launching worker follows it (nobody in cluster deploy mode)
            return self._worker_alive()
        pid, here = int(record.get("pid") or 0), record.get("host") == self.host
        if not here and pid and record.get("lease"):
            self.watched, self.handed_over = 0, False
            return self._lease_holds(record)
        self.lease = None
        if not (here and pid):
            self.watched, self.handed_over = 0, True  # handed over: runs on until a successor names itself
            return True
        self.watched, self.handed_over = pid, False
        return self._worker_alive()

    def _worker_alive(self) -> bool:
        if not self.watched or process_alive(self.watched):
            return True
        return self._stop(f"its worker (pid {self.watched}) died without handing it over")

    def _lease_holds(self, record: dict[str, Any] | None) -> bool:
        """Whether the follower elsewhere renewed its lease in time (``record`` None: unreadable, no renewal)."""
        if self.lease is None:
            self.lease = Freshness()
        key = None
        if record is not None:
            key = (record.get("host"), record.get("pid"), record.get("beat"))
            self.lease_seconds = max(float(record["lease"]), MIN_LEASE_SECONDS)
            self.holder = f"{record.get('host')} (pid {record.get('pid')})"
        return self.lease.age(key) <= self.lease_seconds or self._stop(
            f"its follower on {self.holder} did not renew its lease of {self.lease_seconds:g} s"
        )

    def _stop(self, why: str) -> bool:
        self.gone = why
        return False


def _end_group(work: WorkDir, why: str) -> None:
    """End the rest of this process group first (``spark-submit``'s JVM, where Spark's tasks write), and once none of
    it runs, write the exit marker ``stopped`` (the proof a worker on another host waits for); then end this process
    too. Without ``/proc`` the group ends at once and no marker is written (nothing here could prove it)."""
    if _end_others():
        try:
            work.write_ended("stopped", f"its watchdog ended the driver's process group: {why}")
        except OSError:
            pass  # the store did not answer: no proof is written, the successor's wait runs out
    os.killpg(os.getpgrp(), signal.SIGKILL)


def _end_others(rounds: int = 600) -> bool:
    """SIGKILL every other process of this process group and wait until none runs; whether that could be seen."""
    group, me = os.getpgrp(), os.getpid()
    for _ in range(rounds):
        members = _group_members(group)
        if members is None:
            return False
        others = [pid for pid in members if pid != me]
        if not others:
            return True
        for pid in others:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)
    return False


def _group_members(group: int) -> list[int] | None:
    """The running processes of process group ``group`` (from ``/proc``; None without it)."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return None
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # it ended meanwhile
        if int(fields[2]) == group and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members


def _hold_while(stopping: threading.Event) -> None:
    """The main thread's end while the watchdog ends the group (its JVM gone, the program failed): wait for it."""
    if stopping.is_set():
        time.sleep(600)


def _stop_session(spark: Any) -> None:
    try:
        spark.stop()
    except Exception:  # noqa: BLE001 - a session whose JVM is gone: nothing more to stop
        pass


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
