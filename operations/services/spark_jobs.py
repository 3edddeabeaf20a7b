"""
Spark jobs: a program of ``operations.spark.programs`` run by a worker as a separate Spark driver, followed live.

``enqueue_spark_job`` stores the program and its JSON plan in a queued ``Job``; the runner of its kind calls
:func:`run_spark_program`, which launches the driver on the configured engine (``operations.spark.engine``), reads
its progress file every ``POLL_SECONDS`` into the job (partitions, files and bytes done of total, the verified
units, the Spark application and UI, the driver log's tail; each read is a heartbeat), and returns the program's
manifest. A cancel request stops the driver's process group (``JobCancelled``); the kind's discard hook
(:func:`remove_staging`) removes ``plan["staging"]`` and nothing is swapped.

A worker stopping (SIGTERM) does not stop the driver: it writes in the work location that the driver is handed over
(its watchdog then outlives the worker) and hands the job over (``JobHandle.hand_over``) with what a successor needs:
the driver's host and process group, the program, the launch directory, the work location and how far its progress
was read. The job is queued again, and the worker that claims it adopts the driver (:func:`run_spark_program` finds
``job.adoption``): it names itself in the work location, follows the same progress and manifest, beats, honours a
cancel (the driver's process group ended, the cancel request written), and returns the manifest as if it had launched
the driver, so the kind's swap runs as in any run. A successor on another host (``CATALOG_WORKER_HOST``) can neither
see nor signal the driver's process, so it never runs the job beside it: it claims the job only when it reads the
hand-over's record in the work location (:func:`adoptable`); a manifest already there is the result; otherwise it
follows the driver there under a lease (``operations.spark.lease``, ``CATALOG_SPARK_LEASE_SECONDS``: the driver stops
itself if the lease is not renewed, the follower lets it lapse if the driver stops beating). A stop asked there
(cancel), or a lease let lapse, waits (``CATALOG_SPARK_STOP_WAIT_SECONDS``) for the driver's exit marker, then fails
the job resumable (or cancels it), or, unconfirmed, keeps ``Job.adoption`` so resume and cancel are refused until the
driver is known stopped
(:func:`release_driver`). In cluster deploy mode the driver cannot be handed over at all: a stopping worker stops it
the same way (:func:`_refuse_hand_over`). A handed-over driver nobody follows (the
job cancelled while queued) is stopped first (:func:`release_driver`). A driver that dies (kill -9 included) fails the
job with its verified units kept: ``job_resume`` queues it again, and the next driver skips them
(``plan["completed"]``); ``job_cancel`` of such a failed job discards it. A job whose worker died is settled by
``stuck_jobs`` (the staging kept, the job resumable).
"""

from __future__ import annotations

import secrets as tokens
import subprocess
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils import timezone

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.locations import filesystem_for
from catalog_admin.object_stores import credentials_environment
from catalog_admin.selectors.metastores import get_metastore
from operations.choices import JobKind
from operations.containment import governed_roots
from operations.models import ChangeRequest, Job
from operations.services.jobs import (
    JobCancelled,
    JobHandle,
    JobInterrupted,
    create_job,
    job_log,
    register_job_kind,
    stopping,
    use_driver_release,
    worker_host,
    worker_name,
)
from operations.services.relocation_cleanup import in_use
from operations.spark import engine as spark
from operations.spark.lease import FollowerLease
from operations.spark.programs import PROGRESS_KEYS
from operations.spark.work import WorkDir

__all__ = (
    "SPARK",
    "adoptable",
    "driver_log_path",
    "enqueue_spark_job",
    "release_driver",
    "remove_staging",
    "run_spark_program",
    "spark_engine",
)

SPARK = JobKind.SPARK_PROGRAM
POLL_SECONDS = 1.0
COUNTERS = tuple(key for key in PROGRESS_KEYS if key != "message")


def spark_engine() -> spark.SparkEngine:
    """The engine the settings configure (``CATALOG_SPARK_MASTER``, ``CATALOG_SPARK_CONF``,
    ``CATALOG_SPARK_DEPLOY_MODE``); cluster deploy mode with a local ``CATALOG_SPARK_WORK_DIR`` is refused."""
    engine = spark.SparkEngine(
        master=settings.CATALOG_SPARK_MASTER,
        conf=spark.parse_conf(settings.CATALOG_SPARK_CONF),
        master_ui=settings.CATALOG_SPARK_MASTER_UI,
        requested_deploy_mode=settings.CATALOG_SPARK_DEPLOY_MODE,
    )
    if engine.deploy_mode == "cluster" and WorkDir(str(settings.CATALOG_SPARK_WORK_DIR)).is_local:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"CATALOG_SPARK_DEPLOY_MODE=cluster runs the driver on the cluster, which cannot reach the local "
            f"CATALOG_SPARK_WORK_DIR {settings.CATALOG_SPARK_WORK_DIR}: set it to an object-store or HDFS URI "
            f"(s3a://bucket/prefix).",
            {"field": "CATALOG_SPARK_WORK_DIR"},
        )
    return engine


def enqueue_spark_job(
    *, program: str, plan: dict[str, Any], actor: str, change_request: ChangeRequest | None = None, kind: str = SPARK
) -> Job:
    """A queued job running ``program`` on ``plan`` (a worker takes it once the transaction commits).

    ``kind``: another job kind whose runner calls :func:`run_spark_program` and then acts on the manifest."""
    if not spark.program_exists(program):
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER, f"There is no Spark program {program!r}.", {"field": "program"}
        )
    return create_job(
        kind=kind, actor=actor, change_request=change_request, program=program, plan=plan,
        spark_master=spark_engine().master,
    )  # fmt: skip


@dataclass
class _Driver:
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
            return waiting and not _ended(self.files.work)
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


def _ended(work: WorkDir) -> bool:
    """Whether the driver says it writes nothing more: its exit marker, or its manifest (written after its session
    stopped); a store that does not answer says nothing."""
    try:
        return work.ended() is not None or work.read_manifest() is not None
    except (OSError, ValueError):
        return False


def run_spark_program(
    handle: JobHandle,
    *,
    program: str = "",
    plan: dict[str, Any] | None = None,
    secrets: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run the job's program (or ``program`` on ``plan``: a runner whose job row holds no plan, the merge) as a Spark
    driver, or adopt the one a stopping worker handed over, and follow it; its manifest. ``secrets``: more of the
    driver's environment (never written anywhere). A cancel request stops the driver and raises ``JobCancelled``; a
    stopping worker hands the running driver over (``JobHandedOver``: the job queued for a successor to adopt, the
    staging kept); a driver that fails raises ``ApplicationError`` (execution_failed)."""
    engine = spark_engine()
    program = program or handle.job.program
    if stopping() and handle.adoption is None:
        raise JobInterrupted  # stopping before a driver started: queued again, nothing to hand over
    driver = _adopt(handle, program) or _launch(handle, engine, program, plan, secrets)
    while driver.running():
        time.sleep(POLL_SECONDS)
        _record_progress(handle, driver.reader, driver.files, remote=driver.remote)
        if driver.lease is not None:
            _follow_elsewhere(handle, driver)
            continue
        if handle.cancel_requested() and not driver.remote:
            driver.files.work.request_cancel()  # a driver this worker cannot signal (cluster deploy mode) stops itself
            _stop_driver(handle, engine, driver)
            _record_progress(handle, driver.reader, driver.files)
            raise JobCancelled
        if stopping() and not driver.remote:
            if engine.deploy_mode == "cluster" and driver.process is not None:
                return _refuse_hand_over(handle, driver)
            token = tokens.token_hex(8)
            driver.files.work.write_follower(host=worker_host(), pid=0, token=token)  # its watchdog outlives us
            handle.hand_over(driver.adoption(token))
    _record_progress(handle, driver.reader, driver.files, remote=driver.remote)
    if driver.remote:
        return _remote_outcome(handle, driver)
    handle.end_adoption()
    manifest = spark.read_manifest(driver.files)
    if driver.returncode not in (0, None) or manifest is None:
        last = spark.log_tail(driver.files.log, lines=1)
        ended = "ended without a manifest" if driver.returncode is None else f"exited with {driver.returncode}"
        raise ApplicationError(
            ErrorCode.EXECUTION_FAILED,
            f"The Spark driver {ended}: {last}",
            {"job": handle.job_id, "returncode": driver.returncode},
        )
    return manifest


def _launch(
    handle: JobHandle, engine: spark.SparkEngine, program: str, plan: dict[str, Any] | None,
    secrets: dict[str, str] | None,
) -> _Driver:  # fmt: skip
    """A new driver for the job's attempt."""
    job = handle.job
    plan = job.plan if plan is None else plan
    files = _driver_files(job, engine, program, plan)
    secrets = {  # the driver's environment only
        **credentials_environment(plan.get("filesystems", {}).get("s3", {})),
        **(secrets or {}),
    }
    process = spark.launch_driver(engine, files, secrets)
    handle.log(
        f"Driver started on {engine.master} ({engine.kind}, {engine.deploy_description})", driver_pid=process.pid,
        spark_master=engine.master,
    )  # fmt: skip
    return _Driver(files, spark.ProgressReader(files.work), program, process.pid, process)


def _adopt(handle: JobHandle, program: str) -> _Driver | None:
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
    files.work.write_follower(host=worker_host(), pid=_pid())  # its watchdog follows this worker now
    handle.log(
        f"Adopted the Spark driver (pid {adoption['pid']}) that worker {adoption.get('by')} handed over; following "
        f"{files.work.location}"
    )
    return _Driver(files, reader, program, int(adoption["pid"]), leases=bool(adoption.get("leases")))


def _adopt_elsewhere(
    handle: JobHandle, program: str, files: spark.DriverFiles, reader: spark.ProgressReader
) -> _Driver:
    """A handed-over driver on another host, whose process this worker can neither see nor signal, followed through
    its work location only. One whose watchdog honours a lease (``adoption["leases"]``) is followed to its end under
    one (``CATALOG_SPARK_LEASE_SECONDS``); an earlier release's is asked to stop there and given
    ``CATALOG_SPARK_STOP_WAIT_SECONDS`` (:func:`_remote_outcome` then decides); one that already ended is read."""
    adoption = handle.adoption or {}
    host, wait = str(adoption.get("host")), float(settings.CATALOG_SPARK_STOP_WAIT_SECONDS)
    driver = _Driver(files, reader, program, int(adoption.get("pid") or 0), remote=True, host=host,
                     leases=bool(adoption.get("leases")))  # fmt: skip
    driver.stop_following("was asked to stop", wait)
    if _ended(files.work):
        handle.log(f"The handed-over Spark driver on {host} had already ended; reading its end")
    elif adoption.get("leases"):
        seconds = float(settings.CATALOG_SPARK_LEASE_SECONDS)
        driver.lease = FollowerLease(files.work, host=worker_host(), pid=_pid(), seconds=seconds)
        driver.lease.renew()  # its watchdog follows this worker's lease now
        handle.log(
            f"Following the Spark driver (pid {driver.pid}) that worker {adoption.get('by')} handed over on {host} "
            f"through {files.work.location}, under a lease of {seconds:g} s: the driver stops itself if this worker "
            "stops renewing it, and this worker stops following a driver that stops beating"
        )
    else:
        files.work.request_cancel()
        handle.log(
            f"The handed-over Spark driver (pid {driver.pid}) runs on {host}, where this worker ({worker_host()}) can "
            f"neither see nor signal it, and it holds no lease: asked it to stop through {files.work.location} and "
            f"waiting up to {wait:g} s for its exit marker (two drivers never write the same staging)"
        )
    return driver


def _follow_elsewhere(handle: JobHandle, driver: _Driver) -> None:
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


def _remote_outcome(handle: JobHandle, driver: _Driver) -> dict[str, Any]:
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


def _refuse_hand_over(handle: JobHandle, driver: _Driver) -> dict[str, Any]:
    """A stopping worker in cluster deploy mode: the driver runs on the cluster, not as a child of this worker, so
    its process group cannot be handed over. It is asked to stop through its work location, waited for (bounded), and
    the job fails resumable; unconfirmed, the job keeps what a resume must check first (``Job.adoption``)."""
    work = driver.files.work
    wait = float(settings.CATALOG_SPARK_STOP_WAIT_SECONDS)
    work.request_cancel()
    handle.log(
        "Cluster deploy mode: the driver runs on the cluster, not as a child of this worker, so it cannot be handed "
        f"over; asked it to stop through {work.location} and waiting up to {wait:g} s for its exit marker"
    )
    handle.keep_adoption({**driver.adoption(), "pid": 0, "cluster": True})
    driver.remote = True
    driver.stop_following("was asked to stop", wait)
    while driver.running():
        time.sleep(POLL_SECONDS)
        _record_progress(handle, driver.reader, driver.files)
    if driver.process is not None and driver.process.poll() is None:
        spark.stop_driver(driver.process)  # spark-submit, waiting for the application
    _record_progress(handle, driver.reader, driver.files)
    return _remote_outcome(handle, driver)


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
    while not _ended(files.work):
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_SECONDS)
    return True


def _stop_driver(handle: JobHandle, engine: spark.SparkEngine, driver: _Driver) -> None:
    app_id = handle.job.spark_app_id
    if spark.kill_application(engine, app_id):
        handle.log(f"Asked {engine.master_ui} to kill {app_id}")
    if driver.process is not None:
        spark.stop_driver(driver.process)
    else:
        spark.stop_driver_group(driver.pid, driver.files.directory)
    handle.end_adoption()
    handle.log("The driver was stopped")


def _driver_files(job: Job, engine: spark.SparkEngine, program: str, plan: dict[str, Any]) -> spark.DriverFiles:
    """The attempt's local launch directory and its work location (``CATALOG_SPARK_WORK_DIR``: a local directory,
    or an object-store/HDFS URI read through the filesystem layer)."""
    attempt = _attempt(job)
    work = WorkDir(f"{str(settings.CATALOG_SPARK_WORK_DIR).rstrip('/')}/{attempt}", settings.CATALOG_FILESYSTEMS)
    return spark.write_driver_files(
        Path(settings.CATALOG_SPARK_LOCAL_DIR) / attempt, engine=engine, program=program,
        plan={**plan, "completed": _completed(plan, job)}, app_name=f"catalog-admin job {job.pk}",
        worker_pid=0 if engine.deploy_mode == "cluster" else _pid(), work=work, host=worker_host(),
    )  # fmt: skip


def _completed(plan: dict[str, Any], job: Job) -> list[str]:
    """The units a new driver skips: the plan's (a merge's journal) and the job's verified ones."""
    return list(dict.fromkeys([*plan.get("completed", ()), *job.completed]))


def _attempt(job: Job) -> str:
    return f"job-{job.pk}/attempt-{job.attempts}"


def driver_log_path(job: Job) -> Path:
    """Where the driver's log of the job's last attempt is, on the host of the worker that ran it (``job.worker``)."""
    return Path(settings.CATALOG_SPARK_LOCAL_DIR) / _attempt(job) / spark.LOG_FILE


def remove_staging(job: Job) -> bool:
    """Remove the job's staging (``plan["staging"]``: one location, or a rewrite's list of them) through its
    filesystem, each only strictly inside a governed root of ``plan["metastore"]`` and while no table or partition
    uses it (checked now, in the metastore); whether something was removed (logged on the job either way)."""
    staging = job.plan.get("staging")
    stagings = [staging] if isinstance(staging, str) else list(staging or ())
    return any([_remove_one_staging(job, location) for location in stagings if location])


def _remove_one_staging(job: Job, staging: str) -> bool:
    metastore = job.plan.get("metastore")
    if not metastore or not governed_roots(get_metastore(metastore)).governs(staging):
        job_log(job, f"Staging {staging} left in place: it is not inside a governed root of {metastore!r}")
        return False
    using = in_use(metastore, staging)
    if using:
        job_log(job, f"Staging {staging} left in place: {using}")
        return False
    filesystem = filesystem_for(staging, metastore)
    removed = bool(filesystem.exists(staging))
    filesystem.delete_tree(staging)
    job_log(job, f"Staging {staging} {'removed' if removed else 'was not there'}")
    return removed


def discard_spark_job(job: Job, actor: str) -> None:
    """After a cancel: remove the staging (nothing of it was swapped)."""
    remove_staging(job)


def _run_spark_job(handle: JobHandle) -> None:
    """The runner of plain Spark jobs: the manifest is the result."""
    manifest = run_spark_program(handle)
    handle.log("Done")
    handle.succeed(result=manifest)


def _record_progress(
    handle: JobHandle, reader: spark.ProgressReader, files: spark.DriverFiles, *, remote: bool = False
) -> None:
    """Fold the driver's new progress lines into the job (and beat). The program's first event marks the end of
    Spark's start-up (``work_started_at``, its own time), its first counters what a resumed run had already done.
    ``remote``: the driver's log is on another host (the job keeps the tail it had)."""
    fields: dict[str, Any] = {}
    units: list[str] = []
    messages: list[str] = []
    job = handle.job
    for event in reader.read():
        if job.work_started_at is None and "work_started_at" not in fields:
            fields["work_started_at"] = _event_time(event, job)
        if job.work_bytes_at_start is None and "work_bytes_at_start" not in fields and "bytes_done" in event:
            fields["work_bytes_at_start"] = int(event["bytes_done"] or 0)
        fields.update({key: int(event[key]) for key in COUNTERS if event.get(key) is not None})
        fields.update({key: str(event[key]) for key in ("spark_app_id", "spark_ui_url") if event.get(key)})
        if event.get("unit_done") is not None:
            units.append(str(event["unit_done"]))
        if event.get("message"):
            messages.append(str(event["message"]))
    if units:
        fields["completed"] = list(dict.fromkeys([*job.completed, *units]))
    done, total = (
        fields.get("partitions_done", job.partitions_done),
        fields.get("partitions_total", job.partitions_total),
    )
    if total:
        fields["progress"] = min(int(100 * (done or 0) / total), 99)
    if messages:
        fields["message"] = messages[-1][:500]
    if not remote:
        fields["log_tail"] = spark.log_tail(files.log)
    handle.update(**fields)
    for message in messages:
        handle.log(message)


def _event_time(event: dict[str, Any], job: Job) -> datetime:
    """When the driver wrote ``event`` (its ``at``), never before the attempt started nor after now."""
    now = timezone.now()
    try:
        at = datetime.fromtimestamp(float(event["at"]), tz=UTC)
    except (KeyError, TypeError, ValueError):
        return now
    return min(max(at, job.started_at or at), now)


def _pid() -> int:
    return int(worker_name().rsplit(":", 1)[1])


register_job_kind(SPARK, _run_spark_job, discard=discard_spark_job)
use_driver_release(release_driver, adoptable)
