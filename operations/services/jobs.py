"""
Background jobs that execute approved change requests, with progress and a log.

``enqueue_execution`` creates a queued job; after the transaction commits it runs on a worker thread of
this process (``CATALOG_JOBS_MODE = "thread"``, the default for the console's own server), inline
(``"eager"``, for tests), or is left to ``manage.py run_jobs`` workers (``"worker"``). Scheduled requests
are picked up by ``run_jobs`` when their time comes (through the lifecycle, audited).

A running job beats: its claim, every progress report and every log line set ``heartbeat_at``. A job silent for
longer than ``CATALOG_JOB_HEARTBEAT_TIMEOUT_SECONDS`` counts as dead (:func:`operations.lifecycle.job_is_alive`).
"""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import close_old_connections, transaction
from django.utils import timezone

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.choices import ChangeRequestState, JobState
from operations.models import ChangeRequest, Job
from operations.preview import Preview

__all__ = ("EXECUTE", "enqueue_execution", "run_job", "run_pending_jobs", "start_due_requests")

logger = logging.getLogger(__name__)
EXECUTE = "execute_change_request"


def enqueue_execution(request: ChangeRequest, *, actor: str, preview: Preview | None = None) -> Job:
    """``preview``: the request's plan, just rebuilt and found identical to the approved one (a job run in this
    process executes it without previewing again; a worker rebuilds it)."""
    job = Job.objects.create(kind=EXECUTE, change_request=request, message=f"Queued by {actor}")
    mode = getattr(settings, "CATALOG_JOBS_MODE", "thread")
    if mode == "eager":
        transaction.on_commit(lambda: run_job(job.pk, preview))
    elif mode == "thread":
        transaction.on_commit(
            lambda: threading.Thread(target=_run_in_thread, args=(job.pk, preview), daemon=True).start()
        )
    return job


def run_job(job_id: int, preview: Preview | None = None) -> Job:
    """Run one queued job (claimed with a guarded update, so two workers never run it twice)."""
    now = timezone.now()
    claimed = Job.objects.filter(pk=job_id, state=JobState.QUEUED).update(
        state=JobState.RUNNING, started_at=now, heartbeat_at=now, message="Starting"
    )
    job = Job.objects.get(pk=job_id)
    if not claimed:
        return job
    try:
        _execute_request(job, preview)
    except Exception as exc:  # the job records every failure; nothing escapes a worker
        logger.exception("Job %s failed", job_id)
        _log(job, f"Failed: {exc}")
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


def run_pending_jobs() -> int:
    """Start scheduled requests whose time has come, then run every queued job; returns how many ran."""
    start_due_requests()
    ran = 0
    for job_id in Job.objects.filter(state=JobState.QUEUED).order_by("created_at").values_list("pk", flat=True):
        run_job(job_id)
        ran += 1
    return ran


def _execute_request(job: Job, preview: Preview | None = None) -> None:
    """Execute the request's plan: rebuilt (unless just rebuilt by the caller) and bound to the approved one."""
    from operations.models import Execution
    from operations.services.alter import alter_execute
    from operations.services.change_requests import approved_plan, change_request_preview, finish_execution

    request = job.change_request
    assert request is not None, "an execute job belongs to a change request"
    if preview is None:
        _log(job, f"Previewing {request.statement}")
        preview = change_request_preview(request)
    else:
        _log(job, f"Previewed {request.statement} when its execution was confirmed")
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
    _log(job, f"Done in {execution.duration_ms} ms")
    Job.objects.filter(pk=job.pk).update(
        state=JobState.SUCCEEDED, progress=100, finished_at=timezone.now(), message="Done"
    )


def _fail(job: Job, request: ChangeRequest, execution, error: str) -> None:  # noqa: ANN001
    from operations.services.change_requests import finish_execution

    finish_execution(request, execution, error)
    _log(job, error)
    Job.objects.filter(pk=job.pk).update(state=JobState.FAILED, error=error, finished_at=timezone.now(), message=error)


def _progress(job: Job, done: int, total: int, what: str) -> None:
    percent = int(100 * done / total) if total else 0
    Job.objects.filter(pk=job.pk).update(progress=min(percent, 99), message=what[:500], heartbeat_at=timezone.now())
    _log(job, what)


def _log(job: Job, line: str) -> None:
    job.refresh_from_db(fields=["log"])
    now = timezone.now()
    job.log = [*job.log, {"at": now.isoformat(), "message": line}]
    Job.objects.filter(pk=job.pk).update(log=job.log, heartbeat_at=now)


def _run_in_thread(job_id: int, preview: Preview | None = None) -> None:
    try:
        run_job(job_id, preview)
    finally:
        close_old_connections()
