"""
The ``database`` job: executes an approved database request (issue 27). The worker rebuilds the plan, binds it to the
approved one and runs it (``database_execute``); a cancel is taken until the metastore transaction starts. Runs as the
``alter`` job does (``alter_jobs.run_request_execution``).
"""

from __future__ import annotations

from operations.choices import JobKind
from operations.models import ChangeRequest, Job
from operations.planners.databases import DatabasePlan
from operations.services.alter_jobs import end_cancelled_request, run_request_execution
from operations.services.change_requests import change_request_plan
from operations.services.database import database_execute
from operations.services.jobs import JobHandle, create_job, register_job_kind

__all__ = ("register",)


def enqueue_database(request: ChangeRequest, actor: str) -> Job:
    """A queued ``database`` job executing ``request``."""
    return create_job(kind=JobKind.DATABASE, actor=actor, change_request=request)


def run_database(handle: JobHandle) -> None:
    """Execute the request's plan: rebuilt by the worker and bound to the approved one."""
    run_request_execution(handle, plan_of=_plan, execute=lambda plan, **given: database_execute(plan=plan, **given))


def _plan(request: ChangeRequest) -> DatabasePlan:
    plan = change_request_plan(request)
    assert isinstance(plan, DatabasePlan), f"request #{request.pk} is not a database statement"
    return plan


def register() -> None:
    register_job_kind(JobKind.DATABASE, run_database, enqueue=enqueue_database, discard=end_cancelled_request)


register()
