"""
The ``database`` job: executes an approved database request (issue 27). The worker rebuilds the plan, binds it to the
approved one and runs it (``database_execute``); a cancel is taken until the metastore transaction starts. Ends as the
``alter`` job does (``alter_jobs.end_request``).
"""

from __future__ import annotations

from catalog_admin.errors import ApplicationError
from operations.choices import JobKind
from operations.models import ChangeRequest, Job
from operations.planners.databases import DatabasePlan
from operations.services.alter_jobs import end_cancelled_request, end_request, failed_execution
from operations.services.change_requests import approved_plan, change_request_plan, finish_execution
from operations.services.database import database_execute
from operations.services.jobs import JobHandle, create_job, register_job_kind

__all__ = ("register",)


def enqueue_database(request: ChangeRequest, actor: str) -> Job:
    """A queued ``database`` job executing ``request``."""
    return create_job(kind=JobKind.DATABASE, actor=actor, change_request=request)


def run_database(handle: JobHandle) -> None:
    """Execute the request's plan: rebuilt by the worker and bound to the approved one."""
    request = handle.job.change_request
    assert request is not None, "a database job belongs to a change request"
    handle.log(f"Previewing {request.statement}")
    plan = change_request_plan(request)
    assert isinstance(plan, DatabasePlan), f"request #{request.pk} is not a database statement"
    handle.commit_point("the metastore transaction")
    try:
        execution = database_execute(
            plan=plan,
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


def register() -> None:
    register_job_kind(JobKind.DATABASE, run_database, enqueue=enqueue_database, discard=end_cancelled_request)


register()
