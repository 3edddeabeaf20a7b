"""
The bottom of the job runner (``jobs``): putting a job in the queue, and writing its log. Every other job module
builds on this one; it imports none of them.

A job is handed to the workers as a task of Django's Tasks API once the transaction creating it commits
(:func:`enqueue_job`; inline in ``CATALOG_JOBS_MODE = "eager"``). A log line is an INSERT and a beat
(:func:`job_log`), with the runner fields (:data:`RUNNER_FIELDS`) to set at the same time.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from operations.models import ChangeRequest, Job, JobLogEntry

__all__ = (
    "RUNNER_FIELDS",
    "check_runner_fields",
    "create_job",
    "enqueue_job",
    "enqueue_job_later",
    "job_log",
    "schedule_due_check",
    "use_tasks",
    "watching_job_logs",
    "worker_host",
    "worker_name",
)

# What a runner may set on its job besides log lines (progress, counters, the Spark application, its result).
RUNNER_FIELDS = frozenset(
    {
        "progress", "message", "result", "completed", "plan", "log_tail", "driver_pid", "spark_master",
        "spark_app_id", "spark_ui_url", "partitions_done", "partitions_total", "files_done", "files_total",
        "bytes_done", "bytes_total", "work_started_at", "work_bytes_at_start",
    }
)  # fmt: skip


def create_job(*, kind: str, actor: str, **fields: Any) -> Job:
    """A queued job of ``kind`` handed to the workers once the transaction commits."""
    job = Job.objects.create(kind=kind, message=f"Queued by {actor}", **fields)
    enqueue_job(job)
    return job


def enqueue_job(job: Job) -> None:
    """Hand a queued job to the workers once the current transaction commits (inline in ``eager`` mode)."""
    task = _TASKS["run_job"]
    if settings.CATALOG_JOBS_MODE == "eager":
        transaction.on_commit(lambda: task.call(job.pk))
    else:
        transaction.on_commit(lambda: task.enqueue(job.pk))


def schedule_due_check(request: ChangeRequest) -> None:
    """Have a worker start the scheduled ``request`` when its time comes (a task with ``run_after``)."""
    when = request.scheduled_for
    if when is None or settings.CATALOG_JOBS_MODE == "eager":
        return  # eager mode has no later: tests start due requests themselves
    task = _TASKS["start_due_requests"]
    transaction.on_commit(lambda: task.using(run_after=when).enqueue())


# The tasks of Django's Tasks API that run jobs and start due requests: operations.tasks gives them (use_tasks), so
# this module never imports the layer above it.
_TASKS: dict[str, Any] = {}


def use_tasks(*, run_job: Any, start_due_requests: Any) -> None:
    """The tasks ``enqueue_job`` and ``schedule_due_check`` enqueue (``operations.tasks`` calls this on import)."""
    _TASKS.update(run_job=run_job, start_due_requests=start_due_requests)


def worker_host() -> str:
    """The host name this worker gives itself: ``CATALOG_WORKER_HOST``, else the machine's."""
    return str(settings.CATALOG_WORKER_HOST or socket.gethostname())


def worker_name() -> str:
    """This process, as ``host:pid``."""
    return f"{worker_host()}:{os.getpid()}"


def enqueue_job_later(job_id: int, seconds: float) -> None:
    """Hand a queued job to the workers again ``seconds`` from now (nothing in ``eager`` mode, which has no later)."""
    if settings.CATALOG_JOBS_MODE != "eager":
        later = timezone.now() + timedelta(seconds=seconds)
        _TASKS["run_job"].using(run_after=later).enqueue(job_id)


def check_runner_fields(fields: dict[str, Any]) -> None:
    unknown = set(fields) - RUNNER_FIELDS
    assert not unknown, f"a runner does not set {sorted(unknown)} on its job"


def job_log(job: Job | int, line: str, **fields: Any) -> None:
    """Append a line to a job's log (an INSERT: concurrent writers lose nothing) and beat, with runner fields to set
    at the same time."""
    job_id = job if isinstance(job, int) else job.pk
    check_runner_fields(fields)
    now = timezone.now()
    JobLogEntry.objects.create(job_id=job_id, at=now, message=line)
    Job.objects.filter(pk=job_id).update(heartbeat_at=now, **fields)
    for watcher in list(_LOG_WATCHERS):
        watcher(job_id, line)


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
