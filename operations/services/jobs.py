"""
Background jobs, run by worker processes: executing approved change requests, and Spark programs.

A job is a ``Job`` row plus a task of Django's Tasks API (``operations.tasks.run_job_task``) enqueued after the
transaction that created the job commits; a worker process (``manage.py run_jobs``, or django-tasks-db's
``db_worker``) takes the task from the database and runs :func:`run_job`. The job is claimed with a guarded update
(``QUEUED`` → ``RUNNING``), so two workers never run it twice, and more workers run more jobs at once. A web
restart loses nothing: the job and its task are rows. ``CATALOG_JOBS_MODE = "eager"`` (tests only) runs the same
task function inline when the transaction commits.

Scheduled requests are started by ``start_due_requests_task``, enqueued with ``run_after`` = the request's time
when it is scheduled; the worker's housekeeping (``run_jobs``) also looks for due requests every interval, so none
stays late because its task was lost.

A running job beats: its claim, every progress report and every log line set ``heartbeat_at``, and so does a thread
of its worker every tenth of ``CATALOG_JOB_HEARTBEAT_TIMEOUT_SECONDS`` while the job runs (a long metastore
transaction reports nothing for minutes, yet its worker is alive). A job silent for longer than the timeout counts as
dead (:func:`operations.lifecycle.job_is_alive`): its worker is gone, and ``operations.services.stuck_jobs`` settles it.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.changes import change_kind
from operations.choices import ChangeRequestState, JobState
from operations.models import ChangeRequest, Execution, Job

__all__ = (
    "EXECUTE",
    "JOB_RUNNERS",
    "enqueue_execution",
    "enqueue_job",
    "job_log",
    "register_job_runner",
    "register_request_enqueuer",
    "run_job",
    "schedule_due_check",
    "start_due_requests",
    "watching_job_logs",
    "worker_name",
)

logger = logging.getLogger(__name__)
EXECUTE = "execute_change_request"
JobRunner = Callable[[Job], None]
# kind -> what runs a claimed job of that kind; it ends the job itself (state, finished_at) or raises.
JOB_RUNNERS: dict[str, JobRunner] = {}


def register_job_runner(kind: str, runner: JobRunner) -> None:
    """Make ``run_job`` run jobs of ``kind`` with ``runner``."""
    JOB_RUNNERS[kind] = runner


def enqueue_execution(request: ChangeRequest, *, actor: str) -> Job:
    """A queued job executing ``request``'s approved plan; a worker runs it once the transaction commits. The
    request's change kind names the job kind (``operations.changes``); a job kind queued with a plan of its own (a
    data job lists its files first) registered how it is queued (:func:`register_request_enqueuer`)."""
    job_kind = change_kind(request.operation).job_kind(request)
    enqueue = _REQUEST_ENQUEUERS.get(job_kind)
    if enqueue is not None:
        return enqueue(request, actor=actor)
    job = Job.objects.create(
        kind=_RUNS_AS.get(job_kind, job_kind), change_request=request, message=f"Queued by {actor}"
    )
    enqueue_job(job)
    return job


class RequestEnqueuer(Protocol):
    def __call__(self, request: ChangeRequest, *, actor: str) -> Job: ...


# job kind -> how a request's job of that kind is queued, when not as a plain job of that kind.
_REQUEST_ENQUEUERS: dict[str, RequestEnqueuer] = {}
# SEAM: design.md's job-kind names -> the runner that runs them on this branch, until RUNNER's rename lands: ``alter``
# runs as EXECUTE; ``compact``/``convert`` are queued as the relocate runner's ``relocate`` jobs
# (``operations.services.alter_kind``), ``merge_revert`` as a ``merge`` job (``operations.merge.changes``).
_RUNS_AS = {"alter": EXECUTE}


def register_request_enqueuer(job_kind: str, enqueue: RequestEnqueuer) -> None:
    """Make ``enqueue_execution`` queue a request's job of ``job_kind`` with ``enqueue``."""
    _REQUEST_ENQUEUERS[job_kind] = enqueue


def enqueue_job(job: Job) -> None:
    """Hand a queued job to the workers once the current transaction commits (inline in ``eager`` mode)."""
    from operations.tasks import run_job_task

    if settings.CATALOG_JOBS_MODE == "eager":
        transaction.on_commit(lambda: run_job_task.call(job.pk))
    else:
        transaction.on_commit(lambda: run_job_task.enqueue(job.pk))


def schedule_due_check(request: ChangeRequest) -> None:
    """Have a worker start the scheduled ``request`` when its time comes (a task with ``run_after``)."""
    from operations.tasks import start_due_requests_task

    when = request.scheduled_for
    if when is None or settings.CATALOG_JOBS_MODE == "eager":
        return  # eager mode has no later: tests start due requests themselves
    transaction.on_commit(lambda: start_due_requests_task.using(run_after=when).enqueue())


def worker_name() -> str:
    """This process, as ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def run_job(job_id: int) -> Job:
    """Run one queued job (claimed with a guarded update, so two workers never run it twice)."""
    now = timezone.now()
    claimed = Job.objects.filter(pk=job_id, state=JobState.QUEUED).update(
        state=JobState.RUNNING,
        started_at=now,
        heartbeat_at=now,
        message="Starting",
        attempts=F("attempts") + 1,
        worker=worker_name(),
        finished_at=None,
        error="",
    )
    job = Job.objects.get(pk=job_id)
    if not claimed:
        return job
    try:
        with _beating(job.pk):
            JOB_RUNNERS.get(job.kind, _unknown_kind)(job)
    except Exception as exc:  # the job records every failure; nothing escapes a worker
        logger.exception("Job %s failed", job_id)
        job_log(job, f"Failed: {exc}")
        Job.objects.filter(pk=job.pk).update(state=JobState.FAILED, error=str(exc), finished_at=timezone.now())
    return Job.objects.get(pk=job_id)


def start_due_requests() -> int:
    """Move scheduled requests whose time has come to executing, each with a queued job (through the lifecycle,
    audited as ``start``); a request another worker started meanwhile is skipped. Returns how many started."""
    from operations.services.change_requests import change_request_start

    started = 0
    for request in ChangeRequest.objects.filter(state=ChangeRequestState.SCHEDULED, scheduled_for__lte=timezone.now()):
        try:
            change_request_start(request)
        except ApplicationError as exc:
            if exc.code != ErrorCode.INVALID_STATE:
                raise
        else:
            started += 1
    return started


def job_log(job: Job, line: str, **fields: Any) -> None:
    """Append a line to the job's log (a beat too), with other fields of the job to set at the same time."""
    job.refresh_from_db(fields=["log"])
    now = timezone.now()
    job.log = [*job.log, {"at": now.isoformat(), "message": line}]
    Job.objects.filter(pk=job.pk).update(log=job.log, heartbeat_at=now, **fields)
    for watcher in list(_LOG_WATCHERS):
        watcher(job.pk, line)


JobLogWatcher = Callable[[int, str], None]
_LOG_WATCHERS: list[JobLogWatcher] = []


@contextmanager
def watching_job_logs(watcher: JobLogWatcher) -> Iterator[None]:
    """While the block runs, ``watcher(job_id, line)`` sees every line this process logs on a job (``hive_ddl``
    prints the progress of the job it runs)."""
    _LOG_WATCHERS.append(watcher)
    try:
        yield
    finally:
        _LOG_WATCHERS.remove(watcher)


@contextmanager
def _beating(job_id: int) -> Iterator[None]:
    """While the block runs, a thread of this worker sets the running job's ``heartbeat_at`` every tenth of the
    heartbeat timeout (on its own connection, closed when it stops)."""
    from operations.lifecycle import heartbeat_timeout

    interval = max(heartbeat_timeout().total_seconds() / 10, 0.1)
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


def _unknown_kind(job: Job) -> None:
    raise ApplicationError(ErrorCode.INVALID_PARAMETER, f"No worker runs jobs of kind {job.kind!r}.")


# Executing a change request ----------------------------------------------------------------------------------------


def _execute_request(job: Job) -> None:
    """Execute the request's plan: rebuilt by the worker and bound to the approved one."""
    from operations.services.alter import alter_execute
    from operations.services.change_requests import approved_plan, change_request_preview, finish_execution

    request = job.change_request
    assert request is not None, "an execute job belongs to a change request"
    job_log(job, f"Previewing {request.statement}")
    preview = change_request_preview(request)
    try:
        execution = alter_execute(
            approved=approved_plan(request),
            preview=preview,
            actor=request.requester.get_username(),
            source="ui",
            reason=f"change request #{request.pk}",
            progress=lambda done, total, what: _progress(job, done, total, what),
        )
    except ApplicationError as exc:
        execution_id = exc.details.get("execution")
        failed = Execution.objects.filter(pk=execution_id).first() if execution_id is not None else None
        _fail(job, request, failed, exc.message)
        return
    finish_execution(request, execution)
    job_log(job, f"Done in {execution.duration_ms} ms")
    Job.objects.filter(pk=job.pk).update(
        state=JobState.SUCCEEDED, progress=100, finished_at=timezone.now(), message="Done"
    )


def _fail(job: Job, request: ChangeRequest, execution: Execution | None, error: str) -> None:
    from operations.services.change_requests import finish_execution

    finish_execution(request, execution, error)
    job_log(job, error)
    Job.objects.filter(pk=job.pk).update(state=JobState.FAILED, error=error, finished_at=timezone.now(), message=error)


def _progress(job: Job, done: int, total: int, what: str) -> None:
    percent = int(100 * done / total) if total else 0
    Job.objects.filter(pk=job.pk).update(progress=min(percent, 99), message=what[:500], heartbeat_at=timezone.now())
    job_log(job, what)


register_job_runner(EXECUTE, _execute_request)
