"""
Spark jobs: a program of ``operations.spark.programs`` run by a worker as a separate Spark driver, followed live.

``enqueue_spark_job`` stores the program and its JSON plan in a queued ``Job``; the worker that claims it calls
:func:`run_spark_program`, which launches the driver on the configured engine (``operations.spark.engine``), reads
its progress file every ``POLL_SECONDS`` into the job (partitions, files and bytes done of total, the verified
units, the Spark application and UI, the driver log's tail; each read is a heartbeat), and returns the program's
manifest. A cancel request stops the driver's process group and removes ``plan["staging"]``; the job ends
``cancelled`` and nothing is swapped. A driver that dies (kill -9 included) fails the job with its verified units
kept: ``job_resume`` queues it again and the program skips them (``plan["completed"]``); ``job_cancel`` of such a
failed job discards it (removes the staging). A job whose worker died is settled by ``stuck_jobs`` the same way.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.locations import filesystem_for
from catalog_admin.object_stores import credentials_environment
from catalog_admin.selectors.metastores import get_metastore
from operations import lifecycle
from operations.choices import JobState
from operations.containment import governed_roots
from operations.models import ChangeRequest, Job
from operations.policy import Allowed
from operations.services.audit import record_audit
from operations.services.jobs import enqueue_job, job_log, register_job_runner, worker_name
from operations.services.relocation_cleanup import in_use
from operations.spark import engine as spark
from operations.spark.programs import PROGRESS_KEYS

__all__ = (
    "SPARK",
    "enqueue_spark_job",
    "job_cancel",
    "job_resume",
    "remove_staging",
    "run_spark_program",
    "spark_engine",
)

SPARK = "spark_program"
POLL_SECONDS = 1.0
COUNTERS = tuple(key for key in PROGRESS_KEYS if key != "message")


def spark_engine() -> spark.SparkEngine:
    """The engine the settings configure (``CATALOG_SPARK_MASTER``, ``CATALOG_SPARK_CONF``)."""
    return spark.SparkEngine(
        master=settings.CATALOG_SPARK_MASTER,
        conf=spark.parse_conf(settings.CATALOG_SPARK_CONF),
        master_ui=settings.CATALOG_SPARK_MASTER_UI,
    )


def enqueue_spark_job(
    *, program: str, plan: dict[str, Any], actor: str, change_request: ChangeRequest | None = None, kind: str = SPARK
) -> Job:
    """A queued job running ``program`` on ``plan`` (a worker takes it once the transaction commits).

    ``kind``: another job kind whose runner calls :func:`run_spark_program` and then acts on the manifest."""
    if not spark.program_exists(program):
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER, f"There is no Spark program {program!r}.", {"field": "program"}
        )
    job = Job.objects.create(
        kind=kind,
        change_request=change_request,
        program=program,
        plan=plan,
        spark_master=spark_engine().master,
        message=f"Queued by {actor}",
    )
    enqueue_job(job)
    return job


def run_spark_program(job: Job) -> dict[str, Any] | None:
    """Run the job's program as a Spark driver and follow it; its manifest, or None when the job was cancelled
    (then the job is ended here). A driver that fails raises ``ApplicationError`` (execution_failed)."""
    engine = spark_engine()
    plan = {**job.plan, "completed": list(job.completed)}
    directory = Path(settings.CATALOG_SPARK_WORK_DIR) / f"job-{job.pk}" / f"attempt-{job.attempts}"
    files = spark.write_driver_files(
        directory, engine=engine, program=job.program, plan=plan, app_name=f"catalog-admin job {job.pk}",
        worker_pid=_pid(),
    )  # fmt: skip
    secrets = credentials_environment(plan.get("filesystems", {}).get("s3", {}))  # the driver's environment only
    process = spark.launch_driver(engine, files, secrets)
    job_log(
        job, f"Driver started on {engine.master} ({engine.kind})", driver_pid=process.pid, spark_master=engine.master
    )
    reader = spark.ProgressReader(files.progress)
    while process.poll() is None:
        time.sleep(POLL_SECONDS)
        _record_progress(job, reader, files)
        if _cancel_requested(job):
            job.refresh_from_db(fields=["spark_app_id"])
            if spark.kill_application(engine, job.spark_app_id):
                job_log(job, f"Asked {engine.master_ui} to kill {job.spark_app_id}")
            spark.stop_driver(process)
            _record_progress(job, reader, files)
            _end_cancelled(job)
            return None
    _record_progress(job, reader, files)
    manifest = spark.read_manifest(files)
    if process.returncode != 0 or manifest is None:
        last = spark.log_tail(files.log, lines=1)
        raise ApplicationError(
            ErrorCode.EXECUTION_FAILED,
            f"The Spark driver exited with {process.returncode}: {last}",
            {"job": job.pk, "returncode": process.returncode},
        )
    return manifest


def job_cancel(*, job: Job, user: AbstractBaseUser | None, actor: str = "") -> Job:
    """Cancel a job: a queued one at once; a running one's worker stops its driver and removes its staging within a
    second; a failed Spark job kept for resuming is discarded (its staging removed). Audited."""
    job = Job.objects.get(pk=job.pk)
    _require(lifecycle.can_cancel_job(job, user))
    who = actor or (user.get_username() if user is not None else "system")
    now = timezone.now()
    with transaction.atomic():
        if job.state == JobState.RUNNING:
            changed = Job.objects.filter(pk=job.pk, state=JobState.RUNNING, cancel_requested_at=None).update(
                cancel_requested_at=now, cancel_requested_by=who, message=f"Cancel requested by {who}"
            )
        else:
            changed = Job.objects.filter(pk=job.pk, state=job.state).update(
                state=JobState.CANCELLED, cancel_requested_at=now, cancel_requested_by=who, finished_at=now,
                message=f"Cancelled by {who}",
            )  # fmt: skip
        if not changed:
            raise ApplicationError(
                ErrorCode.INVALID_STATE, f"Job #{job.pk} changed meanwhile; look again.", {"job": job.pk}
            )
        _audit(job, who, "cancel_job", "cancel requested" if job.state == JobState.RUNNING else "cancelled")
    if job.state == JobState.FAILED:
        remove_staging(Job.objects.get(pk=job.pk))
    if job.state != JobState.RUNNING:
        _end_request_of_cancelled(job, who)
    return Job.objects.get(pk=job.pk)


def _end_request_of_cancelled(job: Job, who: str) -> None:
    """A request still executing whose (queued or failed) job was cancelled ends failed: nothing was swapped. A running
    job's runner ends its request itself once the driver stopped."""
    from operations.services.change_requests import finish_execution

    if job.change_request_id is None:
        return
    request = ChangeRequest.objects.get(pk=job.change_request_id)
    if lifecycle.can_fail(request):
        finish_execution(request, None, f"Job #{job.pk} was cancelled by {who}; nothing was swapped.")


def job_resume(*, job: Job, user: AbstractBaseUser | None) -> Job:
    """Queue a failed Spark job again; its program skips the units it already verified. Audited."""
    job = Job.objects.get(pk=job.pk)
    _require(lifecycle.can_resume_job(job, user))
    who = user.get_username() if user is not None else "system"
    with transaction.atomic():
        changed = Job.objects.filter(pk=job.pk, state=JobState.FAILED).update(
            state=JobState.QUEUED, message=f"Resumed by {who}: {len(job.completed)} unit(s) already verified",
            driver_pid=None, cancel_requested_at=None, cancel_requested_by="",
        )  # fmt: skip
        if not changed:
            raise ApplicationError(
                ErrorCode.INVALID_STATE, f"Job #{job.pk} changed meanwhile; look again.", {"job": job.pk}
            )
        _audit(job, who, "resume_job", "queued", completed=len(job.completed))
        enqueue_job(job)
    return Job.objects.get(pk=job.pk)


def remove_staging(job: Job) -> bool:
    """Remove the job's staging (``plan["staging"]``) through its filesystem, only strictly inside a governed root of
    ``plan["metastore"]`` and while no table or partition uses it (checked now, in the metastore); whether something
    was removed (logged on the job either way)."""
    staging = job.plan.get("staging")
    if not staging:
        return False
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


def _run_spark_job(job: Job) -> None:
    """The runner of plain Spark jobs: the manifest is the result."""
    manifest = run_spark_program(job)
    if manifest is None:
        return
    job_log(job, "Done")
    Job.objects.filter(pk=job.pk).update(
        state=JobState.SUCCEEDED, result=manifest, progress=100, finished_at=timezone.now(), message="Done"
    )


def _record_progress(job: Job, reader: spark.ProgressReader, files: spark.DriverFiles) -> None:
    """Fold the driver's new progress lines into the job (and beat)."""
    fields: dict[str, Any] = {}
    units: list[str] = []
    messages: list[str] = []
    for event in reader.read():
        fields.update({key: int(event[key]) for key in COUNTERS if event.get(key) is not None})
        fields.update({key: str(event[key]) for key in ("spark_app_id", "spark_ui_url") if event.get(key)})
        if event.get("unit_done") is not None:
            units.append(str(event["unit_done"]))
        if event.get("message"):
            messages.append(str(event["message"]))
    job.refresh_from_db()
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
    fields["log_tail"] = spark.log_tail(files.log)
    fields["heartbeat_at"] = timezone.now()
    Job.objects.filter(pk=job.pk).update(**fields)
    for message in messages:
        job_log(job, message)


def _cancel_requested(job: Job) -> bool:
    return Job.objects.filter(pk=job.pk).exclude(cancel_requested_at=None).exists()


def _end_cancelled(job: Job) -> None:
    job.refresh_from_db()
    remove_staging(job)
    job_log(job, f"Cancelled by {job.cancel_requested_by}: the driver was stopped; nothing was swapped")
    Job.objects.filter(pk=job.pk).update(
        state=JobState.CANCELLED, finished_at=timezone.now(), message=f"Cancelled by {job.cancel_requested_by}"
    )


def _audit(job: Job, actor: str, action: str, outcome: str, **details: Any) -> None:
    request = job.change_request
    record_audit(
        actor=actor,
        action=action,
        outcome=outcome,
        request_id=request.pk if request else None,
        metastore=request.metastore if request else str(job.plan.get("metastore", "")),
        database_name=request.database_name if request else "",
        table_name=request.table_name if request else "",
        statement=request.statement if request else "",
        details={"job": job.pk, "kind": job.kind, "program": job.program, **details},
    )


def _require(allowed: Allowed) -> None:
    if not allowed:
        raise ApplicationError(allowed.code, allowed.reason, dict(allowed.details))


def _pid() -> int:
    return int(worker_name().rsplit(":", 1)[1])


register_job_runner(SPARK, _run_spark_job)
