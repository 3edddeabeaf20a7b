"""
The Spark drivers a runner follows: one it launched, one a stopping worker handed over on this host (adopted: its
process group watched here), and one it cannot see (on another host, followed through its work location under a
lease, ``operations.spark.lease``; on the cluster), with how each is stopped and how the end of one followed only
through its work location is read. ``spark_jobs`` runs the loop that follows them; the hand-over's rules are told
there.
"""

from __future__ import annotations

import secrets as tokens
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.models import Job
from operations.services.jobs import JobCancelled, JobHandle, job_log, stopping, worker_host, worker_name
from operations.spark import engine as spark
from operations.spark.lease import FollowerLease
from operations.spark.work import WorkDir

POLL_SECONDS = 1.0  # how often a driver's work location (or process) is read

__all__ = (
    "POLL_SECONDS",
    "Driver",
    "adopt",
    "adoptable",
    "driver_ended",
    "follow_elsewhere",
    "release_driver",
    "remote_outcome",
    "stop_driver",
    "worker_pid",
)


@dataclass
class Driver:
    """The driver a runner follows: one it launched (``process``), one it adopted (its process group ``pid`` on this
    host), or one it cannot see (``remote``: on another host, or on the cluster), read through its work location
    alone. A remote driver followed under a lease (``lease``: a driver on another host handed over by a worker there)
    is followed to its end; one asked to stop, or gone silent, until its exit marker or manifest appears or
    ``deadline`` (monotonic) passes (``stop_reason`` says why it is expected to stop)."""

    files: spark.DriverFiles
    reader: spark.ProgressReader
    program: str
    pid: int
    process: subprocess.Popen[bytes] | None = None
    remote: bool = False
    deadline: float = 0.0
    host: str = field(default_factory=worker_host)
    lease: FollowerLease | None = None
    stop_reason: str = "was asked to stop"
    waited: float = 0.0
    leases: bool = True

    def running(self) -> bool:
        if self.remote:
            waiting = self.lease is not None or time.monotonic() < self.deadline
            return waiting and not driver_ended(self.files.work)
        if self.process is not None:
            return self.process.poll() is None
        return spark.driver_alive(self.pid, self.files.directory)

    @property
    def returncode(self) -> int | None:
        """The exit code of a launched driver; None for an adopted one (not this process's child)."""
        return None if self.process is None else self.process.returncode

    def adoption(self, token: str = "") -> dict[str, Any]:
        """What a successor needs to follow this driver (``Job.adoption``). ``leases``: the driver's watchdog
        honours a lease, so a successor on another host may follow it (drivers of earlier releases do not)."""
        return {
            "host": self.host, "pid": self.pid, "program": self.program,
            "launch": str(self.files.directory), "work": self.files.work.location,
            "offset": self.reader.offset, "seen": self.reader.seen, "by": worker_name(), "at": time.time(),
            "leases": self.leases, **({"token": token} if token else {}),
        }  # fmt: skip

    def stop_following(self, reason: str, wait: float) -> None:
        """Follow no longer under the lease (it is left to lapse): wait up to ``wait`` seconds for the exit marker."""
        self.lease, self.stop_reason, self.waited = None, reason, wait
        self.deadline = time.monotonic() + wait


def driver_ended(work: WorkDir) -> bool:
    """Whether the driver says it writes nothing more: its exit marker, or its manifest (written after its session
    stopped); a store that does not answer says nothing."""
    try:
        return work.ended() is not None or work.read_manifest() is not None
    except (OSError, ValueError):
        return False


def adopt(handle: JobHandle, program: str) -> Driver | None:
    """The driver a stopping worker handed over, followed from here on (None: nothing to adopt). One of another
    program is stopped (a new one is launched). One on another host is followed through its work location only
    (:func:`_adopt_elsewhere`)."""
    adoption = handle.adoption
    if adoption is None:
        return None
    job = handle.job
    if adoption.get("program") != program:
        if not release_driver(job):
            raise ApplicationError(
                ErrorCode.EXECUTION_FAILED,
                f"The handed-over Spark driver of job #{job.pk} runs another program ({adoption.get('program')}) "
                "and has not confirmed it stopped: no new driver is started beside it.",
                {"job": job.pk, "returncode": None},
            )
        handle.end_adoption()
        return None
    files = _adopted_files(adoption)
    reader = spark.ProgressReader(files.work)
    reader.offset, reader.seen = int(adoption.get("offset") or 0), str(adoption.get("seen") or "")
    if adoption.get("host") != worker_host():
        return _adopt_elsewhere(handle, program, files, reader)
    files.work.write_follower(host=worker_host(), pid=worker_pid())  # its watchdog follows this worker now
    handle.log(
        f"Adopted the Spark driver (pid {adoption['pid']}) that worker {adoption.get('by')} handed over; following "
        f"{files.work.location}"
    )
    return Driver(files, reader, program, int(adoption["pid"]), leases=bool(adoption.get("leases")))


def _adopt_elsewhere(handle: JobHandle, program: str, files: spark.DriverFiles, reader: spark.ProgressReader) -> Driver:
    """A handed-over driver on another host, whose process this worker can neither see nor signal, followed through
    its work location only. One whose watchdog honours a lease (``adoption["leases"]``) is followed to its end under
    one (``CATALOG_SPARK_LEASE_SECONDS``); an earlier release's is asked to stop there and given
    ``CATALOG_SPARK_STOP_WAIT_SECONDS`` (:func:`remote_outcome` then decides); one that already ended is read."""
    adoption = handle.adoption or {}
    host, wait = str(adoption.get("host")), float(settings.CATALOG_SPARK_STOP_WAIT_SECONDS)
    driver = Driver(files, reader, program, int(adoption.get("pid") or 0), remote=True, host=host,
                     leases=bool(adoption.get("leases")))  # fmt: skip
    if driver_ended(files.work):
        handle.log(f"The handed-over Spark driver on {host} had already ended; reading its end")
    elif adoption.get("leases"):
        seconds = float(settings.CATALOG_SPARK_LEASE_SECONDS)
        driver.lease = FollowerLease(files.work, host=worker_host(), pid=worker_pid(), seconds=seconds)
        driver.lease.renew()  # its watchdog follows this worker's lease now
        handle.log(
            f"Following the Spark driver (pid {driver.pid}) that worker {adoption.get('by')} handed over on {host} "
            f"through {files.work.location}, under a lease of {seconds:g} s: the driver stops itself if this worker "
            "stops renewing it, and this worker stops following a driver that stops beating"
        )
    else:
        files.work.request_cancel()
        driver.stop_following("was asked to stop", wait)
        handle.log(
            f"The handed-over Spark driver (pid {driver.pid}) runs on {host}, where this worker ({worker_host()}) can "
            f"neither see nor signal it, and it holds no lease: asked it to stop through {files.work.location} and "
            f"waiting up to {wait:g} s for its exit marker (two drivers never write the same staging)"
        )
    return driver


def follow_elsewhere(handle: JobHandle, driver: Driver) -> None:
    """One round of following a driver on another host under its lease: a cancel is written into its work location
    (its watchdog ends its process group and confirms it); a driver that stopped beating has its lease left to lapse;
    a stopping worker hands the driver over again; otherwise the lease is renewed when due."""
    lease, work = driver.lease, driver.files.work
    assert lease is not None
    wait = float(settings.CATALOG_SPARK_STOP_WAIT_SECONDS)
    if handle.cancel_requested():
        work.request_cancel()
        driver.stop_following("was asked to stop", wait)
        handle.log(f"Asked the Spark driver on {driver.host} to stop through {work.location}; waiting up to {wait:g} s "
                   "for its exit marker")  # fmt: skip
    elif lease.driver_silent():
        work.request_cancel()  # should it still run and read its work location, it stops at once
        driver.stop_following(f"stopped beating for {lease.seconds:g} s", lease.seconds + wait)
        handle.log(
            f"The Spark driver on {driver.host} has not beaten in {work.location} for {lease.seconds:g} s: asked it to "
            f"stop there and left its lease to lapse (a driver still running stops itself then); waiting up to "
            f"{lease.seconds + wait:g} s for its exit marker"
        )
    elif stopping():
        token = tokens.token_hex(8)
        work.write_follower(host=worker_host(), pid=0, token=token)  # the driver runs on, waiting for a successor
        handle.hand_over(driver.adoption(token))
    else:
        lease.renew()


def remote_outcome(handle: JobHandle, driver: Driver) -> dict[str, Any]:
    """The end of a driver followed through its work location only: its manifest when it finished (nothing more is
    written after it, so the kind swaps as in any run); else a failure, resumable once the driver confirmed it
    stopped (the job's adoption then forgotten), refused for resume while it has not (the adoption kept)."""
    job, work = handle.job, driver.files.work
    adoption = job.adoption or {}
    manifest = work.read_manifest()
    if manifest is not None:
        handle.end_adoption()
        handle.log(f"The Spark driver on {adoption.get('host')} had finished: its manifest adopted")
        return manifest
    ended = work.ended()
    units = len(job.completed)
    if ended is not None and handle.cancel_requested():
        handle.end_adoption()
        handle.log("The driver confirmed it stopped")
        raise JobCancelled  # its staging is discarded: nothing writes it any more
    if ended is not None:
        handle.end_adoption()
        detail = f" ({ended.get('detail')})" if ended.get("detail") else ""
        raise ApplicationError(
            ErrorCode.EXECUTION_FAILED,
            f"The Spark driver of job #{job.pk} ran on {adoption.get('host')}, where this worker ({worker_host()}) "
            f"followed it through its work location: it {driver.stop_reason} and confirmed it {ended.get('state')}"
            f"{detail}. Its staging and {units} verified unit(s) are kept: resume the job to run the rest from them, "
            "or cancel it to discard.",
            {"job": job.pk, "returncode": None},
        )
    raise ApplicationError(
        ErrorCode.EXECUTION_FAILED,
        f"The Spark driver of job #{job.pk} (pid {adoption.get('pid')} on {adoption.get('host')}) "
        f"{driver.stop_reason} but has not confirmed it stopped within {driver.waited:g} s: it may still run. Resume "
        "and cancel are refused until it writes its exit marker (its watchdog does once it ends the driver's group) "
        f"or a worker or console process on {adoption.get('host')} sees its process group gone (a worker there "
        f"checks in its housekeeping); {units} verified unit(s) are kept.",
        {"job": job.pk, "returncode": None},
    )


def _adopted_files(adoption: dict[str, Any]) -> spark.DriverFiles:
    return spark.DriverFiles(Path(adoption["launch"]), WorkDir(adoption["work"], settings.CATALOG_FILESYSTEMS))


def adoptable(job: Job) -> str:
    """Why this worker cannot adopt the handed-over ``job`` ("" when it can): it must read, in the driver's work
    location, the follower record the stopping worker wrote (the same hand-over token), or it could neither follow
    the driver nor ask it to stop."""
    adoption = job.adoption or {}
    if not adoption.get("work"):
        return ""
    work = WorkDir(adoption["work"], settings.CATALOG_FILESYSTEMS)
    try:
        record = work.follower()
    except (OSError, ValueError) as exc:
        return f"it cannot read the driver's work location {work.location}: {exc}"
    if record is None or record.get("token") != adoption.get("token"):
        return (
            f"the driver's work location {work.location} does not hold the hand-over's follower record from here "
            f"(host {worker_host()}): it is not the location the driver on {adoption.get('host')} writes"
        )
    return ""


def release_driver(job: Job, wait: float = 0.0) -> bool:
    """Stop the driver of a handed-over job that nobody follows any more (cancelled while queued, or its runner ended
    before following it): the stop request written (a driver elsewhere stops itself), its process group ended when it
    runs here. Whether it is known to have stopped: its group seen gone here, or its exit marker or manifest in the
    work location (waited for up to ``wait`` seconds)."""
    adoption = job.adoption or {}
    if not adoption.get("launch"):
        return True
    files = _adopted_files(adoption)
    try:
        files.work.request_cancel()
    except OSError as exc:
        job_log(job, f"Could not write the stop request to {files.work.location}: {exc}")
    pid = int(adoption.get("pid") or 0)
    if adoption.get("host") == worker_host() and pid and not adoption.get("cluster"):
        if spark.stop_driver_group(pid, files.directory):
            job_log(job, f"Stopped the handed-over Spark driver (pid {pid})")
        return True  # its process group is gone: seen here
    deadline = time.monotonic() + wait
    while not driver_ended(files.work):
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_SECONDS)
    return True


def stop_driver(handle: JobHandle, engine: spark.SparkEngine, driver: Driver) -> None:
    """Stop the job's driver: its application killed (a standalone master), the operations of its Spark Connect
    session interrupted on the server (which would run them on after their client is gone), then its process group."""
    app_id = handle.job.spark_app_id
    if spark.kill_application(engine, app_id):
        handle.log(f"Asked {engine.master_ui} to kill {app_id}")
    if engine.is_connect and spark.interrupt_connect_operations(driver.files):
        handle.log(f"Interrupted the operations of the driver's session on {engine.master}")
    if driver.process is not None:
        spark.stop_driver(driver.process)
    else:
        spark.stop_driver_group(driver.pid, driver.files.directory)
    handle.end_adoption()
    handle.log("The driver was stopped")


def worker_pid() -> int:
    return int(worker_name().rsplit(":", 1)[1])
