"""
The console's background tasks (Django's Tasks API, through django-tasks; run by ``manage.py run_jobs`` or
django-tasks-db's ``db_worker``). Each is a thin entry point over a service: a task carries ids, never state. Imported
by ``OperationsConfig.ready``, which hands them to the job runner (``use_tasks``).
"""

from __future__ import annotations

from django_tasks import task

from operations.services.due_requests import start_due_requests
from operations.services.jobs import run_job, use_tasks

__all__ = ("run_job_task", "start_due_requests_task")


@task()
def run_job_task(job_id: int) -> str:
    """Run one queued job (a no-op when another worker claimed it first); returns its final state."""
    return str(run_job(job_id).state)


@task()
def start_due_requests_task() -> int:
    """Start the scheduled requests whose time has come (enqueued with ``run_after`` when a request is scheduled)."""
    return start_due_requests()


use_tasks(run_job=run_job_task, start_due_requests=start_due_requests_task)
