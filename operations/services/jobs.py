"""
The one job runner: queued work of every kind run by worker processes, with progress, a log, cancel and resume.

A job is a ``Job`` row plus a task of Django's Tasks API (``operations.tasks.run_job_task``) enqueued after the
transaction that created the job commits; a worker process (``manage.py run_jobs``, or django-tasks-db's
``db_worker``) takes the task from the database and runs :func:`run_job`. ``CATALOG_JOBS_MODE = "eager"`` (tests
only) runs the same task function inline when the transaction commits.

This module owns every write to a job row. It claims the job with a guarded update (``QUEUED`` → ``RUNNING``, so two
workers never run it twice), beats while it runs, and ends it in one of four states: ``succeeded``; ``failed`` (the
work refused or failed for a reason it names: an ``ApplicationError``); ``errored`` (an unexpected exception: a bug or
the infrastructure; the traceback's last line is the error); ``cancelled``. A kind (``register_job_kind``, from the
kind's own module) is a function that receives a :class:`JobHandle` and never touches job rows itself: it logs,
reports progress, calls ``check_cancel()`` at its safe points and ``commit_point()`` before its point of no return.

Cancel (:func:`job_cancel`): a queued job ends cancelled at once; a running one is asked to stop, and its runner stops
at its next safe point (``JobCancelled``), unless it passed its point of no return (then a cancel is too late); a
failed or errored job kept for resuming is discarded. The kind's ``discard`` hook cleans up (ends its change
request, removes a Spark job's staging) in the transaction that marks the job cancelled: nobody reads a cancelled
job beside its request still executing. Resume (:func:`job_resume`) queues a failed or errored job again; its kind
resumes (a Spark program skips its verified units, an ALTER runs bound to the approved plan again).

A worker asked to stop (SIGTERM: :func:`request_stop`) takes no more jobs; its running job stops at its next safe
point (``JobInterrupted``) and goes back to the queue for another worker, its verified units kept. A runner following
a Spark driver does not stop it: it hands the job over (:meth:`JobHandle.hand_over`, ``JobHandedOver``) for a
successor to adopt (``job_adoption``). A running job beats: every progress report and log line set ``heartbeat_at``
(``job_queue.job_log``), and so does a thread of its worker every tenth of ``CATALOG_JOB_HEARTBEAT_TIMEOUT_SECONDS``.
A job silent for longer counts as dead (``lifecycle.job_is_alive``): ``operations.services.stuck_jobs`` settles it
(:func:`settle_job`).

Queueing and the log live in ``job_queue``, hand-over and adoption in ``job_adoption``; their public names are
re-exported here, the runner's one front door.
"""

from __future__ import annotations

import logging
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NoReturn

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import Case, F, PositiveIntegerField, When
from django.utils import timezone

from catalog_admin.errors import ApplicationError, ErrorCode
from operations import lifecycle
from operations.changes import change_kind
from operations.choices import JobKind, JobState
from operations.models import ChangeRequest, Job
from operations.policy import Allowed
from operations.services.audit import record_audit
from operations.services.job_adoption import (
    can_adopt,
    hand_over,
    release_driver,
    release_unconfirmed_drivers,
    unconfirmed_driver,
    use_driver_release,
)
from operations.services.job_queue import (
    check_runner_fields,
    create_job,
    enqueue_job,
    job_log,
    schedule_due_check,
    use_tasks,
    watching_job_logs,
    worker_host,
    worker_name,
)

__all__ = (
    "JOB_KINDS",
    "JobCancelled",
    "JobHandedOver",
    "JobHandle",
    "JobInterrupted",
    "JobKind",
    "JobKindRunner",
    "create_job",
    "enqueue_execution",
    "enqueue_job",
    "job_cancel",
    "job_kind_of",
    "job_log",
    "job_resume",
    "register_job_kind",
    "release_unconfirmed_drivers",
    "request_stop",
    "run_job",
    "schedule_due_check",
    "settle_job",
    "stopping",
    "use_driver_release",
    "use_tasks",
    "watching_job_logs",
    "worker_host",
    "worker_name",
)

logger = logging.getLogger(__name__)


class JobCancelled(Exception):  # noqa: N818  (a signal, not an error)
    """Raised at a safe point of a running job whose cancel was requested: the job ends cancelled."""


class JobInterrupted(Exception):  # noqa: N818
    """Raised at a safe point of a running job whose worker is stopping: the job is queued again for another."""


class JobHandedOver(JobInterrupted):
    """Raised by :meth:`JobHandle.hand_over`: the worker is stopping and leaves its running Spark driver to a successor,
    which adopts it from ``adoption`` (what it needs to follow the driver)."""

    def __init__(self, adoption: dict[str, Any]) -> None:
        super().__init__(adoption)
        self.adoption = adoption


@dataclass(frozen=True)
class JobKindRunner:
    """A job kind: ``run(handle)`` runs a claimed job; ``enqueue(request, actor)`` queues one executing a change
    request; ``discard(job, actor)`` cleans up after a queued, failed or errored job was cancelled, or after the
    runner stopped for a cancel (end its request, remove its staging)."""

    run: Callable[[JobHandle], None]
    enqueue: Callable[[ChangeRequest, str], Job] | None = None
    discard: Callable[[Job, str], None] | None = None


JOB_KINDS: dict[str, JobKindRunner] = {}


def register_job_kind(
    kind: str,
    run: Callable[[JobHandle], None],
    *,
    enqueue: Callable[[ChangeRequest, str], Job] | None = None,
    discard: Callable[[Job, str], None] | None = None,
) -> None:
    """Make ``run_job`` run jobs of ``kind`` with ``run`` (called from the kind's module, imported by
    ``OperationsConfig.ready``)."""
    JOB_KINDS[kind] = JobKindRunner(run, enqueue, discard)


# Queueing ----------------------------------------------------------------------------------------------------------


def job_kind_of(request: ChangeRequest) -> str:
    """The job kind executing ``request``'s approved plan: its change kind says (``operations.changes``)."""
    return change_kind(request.operation).job_kind(request)


def enqueue_execution(request: ChangeRequest, *, actor: str) -> Job:
    """A queued job executing ``request``'s approved plan, of the kind that does it; a worker runs it once the
    transaction commits."""
    kind = job_kind_of(request)
    registered = JOB_KINDS.get(kind)
    if registered is None or registered.enqueue is None:
        raise ApplicationError(ErrorCode.INVALID_PARAMETER, f"No job kind {kind!r} executes change requests.")
    return registered.enqueue(request, actor)


# Running -----------------------------------------------------------------------------------------------------------

_STOPPING = threading.Event()


def request_stop() -> None:
    """This worker is stopping (SIGTERM): its running job stops at its next safe point and is queued again, or, when
    it follows a Spark driver, is handed over with the driver running on."""
    _STOPPING.set()


def stopping() -> bool:
    return _STOPPING.is_set()


def run_job(job_id: int) -> Job:
    """Run one queued job (claimed with a guarded update, so two workers never run it twice) to its end. A handed-over
    job whose driver's work location this worker cannot reach is left queued for another worker."""
    if not can_adopt(job_id) or not _claim(job_id):
        return Job.objects.get(pk=job_id)
    handle = JobHandle(job_id)
    kind = JOB_KINDS.get(handle.job.kind)
    try:
        with _beating(job_id):
            if kind is None:
                raise ApplicationError(ErrorCode.INVALID_PARAMETER, f"No worker runs jobs of kind {handle.job.kind!r}.")
            kind.run(handle)
    except JobCancelled:
        with transaction.atomic():  # cancelled and discarded at once: see _discard
            job = handle.end(JobState.CANCELLED, message=f"Cancelled by {handle.job.cancel_requested_by}")
            _discard(job, kind, job.cancel_requested_by)
    except JobHandedOver as handed:
        hand_over(handle.job_id, handed.adoption)
    except JobInterrupted:
        _requeue(handle)
    except ApplicationError as exc:  # the work refused or failed for a reason it names
        handle.fail(exc.message)
    except Exception as exc:  # a bug or the infrastructure: nothing escapes a worker
        logger.exception("Job %s errored", job_id)
        handle.errored(exc)
    else:
        handle.succeed()  # a runner that returned without ending its job succeeded
    job = Job.objects.get(pk=job_id)
    if job.state != JobState.QUEUED:
        release_driver(job)  # an adopted driver its runner never followed (it refused first) is stopped
    return Job.objects.get(pk=job_id)


def _claim(job_id: int) -> bool:
    """``QUEUED`` → ``RUNNING`` for this worker; a handed-over job (``adoption``) stays in its attempt."""
    now = timezone.now()
    return bool(
        Job.objects.filter(pk=job_id, state=JobState.QUEUED).update(
            state=JobState.RUNNING,
            started_at=now,
            heartbeat_at=now,
            message="Starting",
            attempts=Case(
                When(adoption__isnull=True, then=F("attempts") + 1),
                default=F("attempts"),
                output_field=PositiveIntegerField(),
            ),
            worker=worker_name(),
            finished_at=None,
            error="",
            committing_at=None,
            work_started_at=None,
            work_bytes_at_start=None,
        )  # fmt: skip
    )


def _requeue(handle: JobHandle) -> None:
    """Back to the queue for another worker (this one is stopping), its verified units kept."""
    handle.log("Interrupted: the worker is stopping; queued again for another worker")
    changed = Job.objects.filter(pk=handle.job_id, state=JobState.RUNNING).update(
        state=JobState.QUEUED, message="Queued again: its worker stopped", driver_pid=None, worker=""
    )
    if changed:
        enqueue_job(handle.job)


def _discard(job: Job, kind: JobKindRunner | None, actor: str) -> None:
    """After a cancel: a handed-over driver nobody follows is stopped, then the kind's discard cleans up (removes its
    staging, ends or reopens its request); a driver that has not confirmed its stop keeps its staging. Called in the
    transaction that marks the job cancelled, so nobody reads the job cancelled beside a request still executing or a
    staging still there."""
    if not release_driver(job):  # a handed-over driver its runner had not followed yet stops before the staging goes
        job_log(job, str(unconfirmed_driver(job).message) + " Its staging is kept.")
        return
    if kind is not None and kind.discard is not None:
        kind.discard(Job.objects.get(pk=job.pk), actor)


class JobHandle:
    """What a kind's runner may do to its running job: log, report progress, check for a cancel at a safe point,
    pass its point of no return, and end it."""

    def __init__(self, job_id: int) -> None:
        self.job_id = job_id

    @property
    def job(self) -> Job:
        """The job as it is now."""
        return Job.objects.select_related("change_request").get(pk=self.job_id)

    @property
    def completed(self) -> list[str]:
        """The units verified so far (a resumed run skips them)."""
        return list(Job.objects.values_list("completed", flat=True).get(pk=self.job_id))

    def log(self, line: str, **fields: Any) -> None:
        """Append a line to the log (an INSERT), a beat too, with runner fields to set at the same time."""
        job_log(self.job_id, line, **fields)

    def update(self, **fields: Any) -> None:
        """Set runner fields (progress, counters, the Spark application, …) while the job runs; a beat too."""
        check_runner_fields(fields)
        Job.objects.filter(pk=self.job_id, state=JobState.RUNNING).update(heartbeat_at=timezone.now(), **fields)

    def progress(self, done: int, total: int, message: str = "", **counters: int | None) -> None:
        """``done`` of ``total`` (the percentage shown, at most 99 until the job ends), a message logged, and
        counters such as ``files_done=``/``bytes_total=``."""
        fields: dict[str, Any] = {key: value for key, value in counters.items() if value is not None}
        fields["progress"] = min(int(100 * done / total), 99) if total else 0
        if message:
            fields["message"] = message[:500]
            self.log(message, **fields)
        else:
            self.update(**fields)

    def add_completed(self, units: list[str]) -> None:
        """Record verified units (kept across attempts)."""
        if units:
            self.update(completed=list(dict.fromkeys([*self.completed, *units])))

    def cancel_requested(self) -> bool:
        return Job.objects.filter(pk=self.job_id).exclude(cancel_requested_at=None).exists()

    def check_cancel(self) -> None:
        """A safe point: raise ``JobCancelled`` when a cancel was requested, ``JobInterrupted`` when the worker is
        stopping."""
        if self.cancel_requested():
            raise JobCancelled
        if stopping():
            raise JobInterrupted

    @property
    def adoption(self) -> dict[str, Any] | None:
        """What a stopping worker left for following its running Spark driver (None: nothing to adopt)."""
        return Job.objects.values_list("adoption", flat=True).get(pk=self.job_id)

    def hand_over(self, adoption: dict[str, Any]) -> NoReturn:
        """The worker is stopping and leaves its running driver to a successor: ``adoption`` is what the successor
        needs to follow it (JSON). Raises ``JobHandedOver``: the job is queued again for a worker to adopt."""
        raise JobHandedOver(adoption)

    def keep_adoption(self, adoption: dict[str, Any]) -> None:
        """Record the running driver this worker leaves behind unconfirmed (``adoption``): resume and cancel check it
        stopped first."""
        Job.objects.filter(pk=self.job_id).update(adoption=adoption)

    def end_adoption(self) -> None:
        """The adopted driver ended, or was stopped: nothing is left to adopt."""
        Job.objects.filter(pk=self.job_id).update(adoption=None)

    def commit_point(self, what: str) -> None:
        """The last safe point before ``what`` (a metastore transaction, a merge's publish): a cancel requested until
        now stops the job (``JobCancelled``); one requested later is refused as too late."""
        changed = Job.objects.filter(pk=self.job_id, cancel_requested_at=None, committing_at=None).update(
            committing_at=timezone.now(), heartbeat_at=timezone.now()
        )
        if not changed and self.cancel_requested():
            raise JobCancelled
        self.log(f"Starting {what}: from now on the job cannot be cancelled")

    def succeed(self, result: Any = None, message: str = "Done", **fields: Any) -> Job:
        if result is not None:
            fields["result"] = result
        return self.end(JobState.SUCCEEDED, message=message, progress=100, **fields)

    def fail(self, error: str, **fields: Any) -> Job:
        """End failed for a reason the work names (shown as the job's error)."""
        self.log(error)
        return self.end(JobState.FAILED, message=error[:500], error=error, **fields)

    def errored(self, exc: BaseException) -> Job:
        """End errored: an unexpected exception (the traceback's last line is the error)."""
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        self.log(f"Errored: {last}")
        return self.end(JobState.ERRORED, message=last[:500], error=last)

    def end(self, state: str, **fields: Any) -> Job:
        """End the running job in ``state`` (a guarded update: a job already ended stays as it is)."""
        check_runner_fields({key: value for key, value in fields.items() if key != "error"})
        Job.objects.filter(pk=self.job_id, state=JobState.RUNNING).update(
            state=state, finished_at=timezone.now(), **fields
        )
        return self.job


@contextmanager
def _beating(job_id: int) -> Iterator[None]:
    """While the block runs, a thread of this worker sets the running job's ``heartbeat_at`` every tenth of the
    heartbeat timeout (on its own connection, closed when it stops)."""
    interval = max(lifecycle.heartbeat_timeout().total_seconds() / 10, 0.1)
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(interval):
                Job.objects.filter(pk=job_id, state=JobState.RUNNING).update(heartbeat_at=timezone.now())
        finally:
            connection.close()

    beater = threading.Thread(target=beat, name=f"job-{job_id}-heartbeat", daemon=True)
    beater.start()
    try:
        yield
    finally:
        stop.set()
        beater.join(timeout=5)  # a beat waiting for a row lock finds the job finished and changes nothing


# Cancel, resume, settle --------------------------------------------------------------------------------------------


def job_cancel(*, job: Job, user: AbstractBaseUser | None, actor: str = "") -> Job:
    """Cancel a job: a queued one at once; a running one stops at its next safe point (refused once it passed its
    point of no return); a failed or errored one kept for resuming is discarded. Audited."""
    job = Job.objects.get(pk=job.pk)
    _require(lifecycle.can_cancel_job(job, user))
    if job.state in (JobState.FAILED, JobState.ERRORED) and not release_driver(job):
        raise unconfirmed_driver(job)  # its discard would remove the staging under a driver still writing it
    who = actor or (user.get_username() if user is not None else "system")
    now = timezone.now()
    with transaction.atomic():
        if job.state == JobState.RUNNING:
            changed = Job.objects.filter(
                pk=job.pk, state=JobState.RUNNING, cancel_requested_at=None, committing_at=None
            ).update(cancel_requested_at=now, cancel_requested_by=who, message=f"Cancel requested by {who}")
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
        if job.state != JobState.RUNNING:
            _discard(job, JOB_KINDS.get(job.kind), who)
    return Job.objects.get(pk=job.pk)


def job_resume(*, job: Job, user: AbstractBaseUser | None) -> Job:
    """Queue a failed or errored job again, or a cancelled one its kind kept resumable (a merge stopped between copy
    units); its kind resumes it (a Spark program skips the units it verified, a merge continues its journal).
    Audited."""
    job = Job.objects.get(pk=job.pk)
    _require(lifecycle.can_resume_job(job, user))
    who = user.get_username() if user is not None else "system"
    if not release_driver(job):  # a new attempt never runs beside a driver left from the last one
        raise unconfirmed_driver(job)
    with transaction.atomic():
        changed = Job.objects.filter(pk=job.pk, state=job.state).update(
            state=JobState.QUEUED, message=f"Resumed by {who}: {len(job.completed)} unit(s) already verified",
            driver_pid=None, cancel_requested_at=None, cancel_requested_by="", error="", adoption=None,
            plan={k: v for k, v in job.plan.items() if k != "resumable"},  # a cancel while it runs keeps it again
        )  # fmt: skip
        if not changed:
            raise ApplicationError(
                ErrorCode.INVALID_STATE, f"Job #{job.pk} changed meanwhile; look again.", {"job": job.pk}
            )
        job_log(job, f"Resumed by {who}")
        _audit(job, who, "resume_job", "queued", completed=len(job.completed))
        enqueue_job(job)
    return Job.objects.get(pk=job.pk)


def settle_job(job: Job, state: str, message: str, *, error: str = "") -> bool:
    """End a job whose worker died (or whose request was settled) in ``state``; whether it was still queued or
    running (a guarded update)."""
    changed = Job.objects.filter(pk=job.pk, state__in=(JobState.QUEUED, JobState.RUNNING)).update(
        state=state,
        progress=100 if state == JobState.SUCCEEDED else F("progress"),
        error=error,
        message=message[:500],
        finished_at=timezone.now(),
    )
    if changed:
        job_log(job, message)
    return bool(changed)


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
