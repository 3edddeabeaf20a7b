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
see nor signal the driver's process: it follows it through the work location under a lease, or reads how it ended
(``spark_drivers``: :func:`adoptable`, :func:`adopt`, :func:`follow_elsewhere`, :func:`remote_outcome`; resume and
cancel refused while a driver is not known stopped, :func:`release_driver`). In cluster deploy mode the driver cannot
be handed over at all: a stopping worker stops it through its work location (:func:`_refuse_hand_over`). A
handed-over driver nobody follows (the job cancelled while queued) is stopped first (:func:`release_driver`). A
driver that dies (kill -9 included) fails the job with its verified units kept: ``job_resume`` queues it again, and
the next driver skips them (``plan["completed"]``); ``job_cancel`` of such a failed job discards it. A job whose
worker died is settled by ``stuck_jobs`` (the staging kept, the job resumable).
"""

from __future__ import annotations

import secrets as tokens
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils import timezone

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.locations import filesystem_for
from catalog_admin.object_stores import plan_credentials_environment
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
)
from operations.services.relocation_cleanup import in_use
from operations.services.spark_drivers import (
    POLL_SECONDS,
    Driver,
    adopt,
    adoptable,
    follow_elsewhere,
    release_driver,
    remote_outcome,
    stop_driver,
    worker_pid,
)
from operations.spark import engine as spark
from operations.spark.programs import PROGRESS_KEYS
from operations.spark.work import WorkDir

__all__ = (
    "SPARK",
    "driver_log_path",
    "enqueue_spark_job",
    "remove_staging",
    "run_spark_program",
    "spark_engine",
)

SPARK = JobKind.SPARK_PROGRAM
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
    driver = adopt(handle, program) or _launch(handle, engine, program, plan, secrets)
    while driver.running():
        time.sleep(POLL_SECONDS)
        _record_progress(handle, driver.reader, driver.files, remote=driver.remote)
        if driver.lease is not None:
            follow_elsewhere(handle, driver)
            continue
        if handle.cancel_requested() and not driver.remote:
            driver.files.work.request_cancel()  # a driver this worker cannot signal (cluster deploy mode) stops itself
            stop_driver(handle, engine, driver)
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
        return remote_outcome(handle, driver)
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
) -> Driver:  # fmt: skip
    """A new driver for the job's attempt."""
    job = handle.job
    plan = job.plan if plan is None else plan
    files = _driver_files(job, engine, program, plan)
    secrets = {  # the driver's environment only
        **plan_credentials_environment(plan),
        **(secrets or {}),
    }
    try:
        process = spark.launch_driver(engine, files, secrets)
    except ValueError as exc:  # a credential that cannot reach a driver on the cluster
        raise ApplicationError(
            ErrorCode.EXECUTION_FAILED, f"The Spark driver was not started: {exc}", {"job": handle.job_id}
        ) from None
    passed = sorted(spark.driver_secret_settings(engine, secrets))  # names only
    handle.log(
        f"Driver started on {engine.master} ({engine.kind}, {engine.deploy_description})"
        + (f"; its credentials in {', '.join(passed)}" if passed else ""),
        driver_pid=process.pid, spark_master=engine.master,
    )  # fmt: skip
    return Driver(files, spark.ProgressReader(files.work), program, process.pid, process)


def _refuse_hand_over(handle: JobHandle, driver: Driver) -> dict[str, Any]:
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
    return remote_outcome(handle, driver)


def _driver_files(job: Job, engine: spark.SparkEngine, program: str, plan: dict[str, Any]) -> spark.DriverFiles:
    """The attempt's local launch directory and its work location (``CATALOG_SPARK_WORK_DIR``: a local directory,
    or an object-store/HDFS URI read through the filesystem layer)."""
    attempt = _attempt(job)
    work = WorkDir(f"{str(settings.CATALOG_SPARK_WORK_DIR).rstrip('/')}/{attempt}", settings.CATALOG_FILESYSTEMS)
    return spark.write_driver_files(
        Path(settings.CATALOG_SPARK_LOCAL_DIR) / attempt, engine=engine, program=program,
        plan={**plan, "completed": _completed(plan, job)}, app_name=f"catalog-admin job {job.pk}",
        worker_pid=0 if engine.deploy_mode == "cluster" else worker_pid(), work=work, host=worker_host(),
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


register_job_kind(SPARK, _run_spark_job, discard=discard_spark_job)
use_driver_release(release_driver, adoptable)
