"""
The ``alter`` job, and what every job executing a change request shares.

The ``alter`` runner rebuilds the request's plan, binds it to the approved one and runs it in one metastore
transaction (``alter_execute``); a cancel is taken until that transaction starts (the job's point of no return), later
it is refused as too late. A refusal or a failed transaction ends the job failed and the request failed; an
unexpected error leaves the request executing and the job errored, so a resume runs it again, bound to the approved
plan. A job cancelled before its point of no return ran nothing: its request is approved again, executable within the
same approvals (execute previews again and refuses a stale plan); past it, the request ends failed
(:func:`end_cancelled_request`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from catalog_admin.errors import ApplicationError
from operations import lifecycle
from operations.choices import JobKind
from operations.models import ChangeRequest, Execution, Job
from operations.services.alter import alter_execute
from operations.services.change_requests import (
    approved_plan,
    change_request_preview,
    finish_execution,
    reopen_cancelled_request,
)
from operations.services.jobs import JobHandle, create_job, register_job_kind

__all__ = ("end_cancelled_request", "end_request", "failed_execution", "register", "run_request_execution")


def enqueue_alter(request: ChangeRequest, actor: str) -> Job:
    """A queued ``alter`` job executing ``request``."""
    return create_job(kind=JobKind.ALTER, actor=actor, change_request=request)


def run_alter(handle: JobHandle) -> None:
    """Execute the request's plan: rebuilt by the worker and bound to the approved one."""
    run_request_execution(
        handle,
        plan_of=change_request_preview,
        execute=lambda preview, **given: alter_execute(
            preview=preview, progress=lambda done, total, what: handle.progress(done, total, what), **given
        ),
    )


def run_request_execution(
    handle: JobHandle, *, plan_of: Callable[[ChangeRequest], Any], execute: Callable[..., Execution]
) -> None:
    """The runner of a job executing a change request in one metastore transaction (``alter``, ``database``,
    ``privilege``): ``plan_of(request)`` rebuilds the plan in the worker; past the point of no return,
    ``execute(plan, approved=, actor=, source=, reason=)`` runs it bound to the approved one. A refusal or a failed
    transaction ends the request failed (and the job, as the runner ends a raised ``ApplicationError``)."""
    request = handle.job.change_request
    assert request is not None, f"a {handle.job.kind} job belongs to a change request"
    handle.log(f"Previewing {request.statement}")
    plan = plan_of(request)
    handle.commit_point("the metastore transaction")
    try:
        execution = execute(
            plan,
            approved=approved_plan(request),
            actor=request.requester.get_username(),
            source="ui",
            reason=f"change request #{request.pk}",
        )
    except ApplicationError as exc:
        end_request(request, failed_execution(exc), exc.message)
        raise
    finish_execution(request, execution)
    handle.log(f"Done in {execution.duration_ms} ms")
    handle.succeed()


def failed_execution(exc: ApplicationError) -> Execution | None:
    """The execution an error names (``details["execution"]``), if one was recorded."""
    execution_id = exc.details.get("execution")
    return Execution.objects.filter(pk=execution_id).first() if execution_id is not None else None


def end_request(request: ChangeRequest | None, execution: Execution | None, error: str = "") -> None:
    """End ``request`` (still executing) succeeded or failed by ``execution``."""
    if request is not None:
        finish_execution(request, execution, error)


def end_cancelled_request(job: Job, actor: str, *, reopen: bool = True) -> None:
    """A request still executing whose job was cancelled: approved again when the job never reached its point of no
    return (``reopen``; nothing ran, so the same approvals execute it again), otherwise ended failed."""
    if job.change_request_id is None:
        return
    request = ChangeRequest.objects.get(pk=job.change_request_id)
    if reopen and lifecycle.can_reopen_cancelled(request, job):
        reopen_cancelled_request(request, job, actor)
    elif lifecycle.can_fail(request):
        finish_execution(request, None, f"Job #{job.pk} was cancelled by {actor}: nothing was swapped or run.")


def register() -> None:
    register_job_kind(JobKind.ALTER, run_alter, enqueue=enqueue_alter, discard=end_cancelled_request)


register()
