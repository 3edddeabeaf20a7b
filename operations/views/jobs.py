"""A background job's page, its progress partial (polled while it runs) and its cancel and resume actions."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from catalog_admin.errors import ApplicationError, ErrorCode
from operations import lifecycle
from operations.choices import JobState
from operations.models import Job
from operations.selectors import get_job
from operations.services.jobs import job_cancel, job_resume
from operations.services.spark_jobs import driver_log_path

__all__ = ("job_cancel_view", "job_detail", "job_progress", "job_resume_view")

POLL_DONE = 286  # htmx stops polling on this status
KEPT_FOR_RESUMING = (JobState.FAILED, JobState.ERRORED)


@require_GET
def job_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """One job: its progress (polled while it runs), Spark application, log and actions."""
    job = get_job(pk)
    return render(request, "operations/job.html", _context(request, job))


@require_GET
def job_progress(request: HttpRequest, pk: int) -> HttpResponse:
    """The job's progress partial; answers 286 once the job is finished, so htmx stops polling."""
    job = get_job(pk)
    response = render(request, "operations/htmx/job_work.html", _context(request, job))
    if job.is_done:
        response.status_code = POLL_DONE
    return response


@require_POST
def job_cancel_view(request: HttpRequest, pk: int) -> HttpResponse:
    return _act(request, pk, lambda job: job_cancel(job=job, user=request.user), "Cancel requested for job #{pk}.")


@require_POST
def job_resume_view(request: HttpRequest, pk: int) -> HttpResponse:
    return _act(request, pk, lambda job: job_resume(job=job, user=request.user), "Job #{pk} queued again.")


def _act(request: HttpRequest, pk: int, act: Any, success: str) -> HttpResponse:
    job = get_job(pk)
    try:
        act(job)
    except ApplicationError as exc:
        messages.error(request, exc.message)
        response = render(request, "operations/job.html", _context(request, get_job(pk)))
        response.status_code = exc.code.http_status
        return response
    messages.success(request, success.format(pk=pk))
    return redirect("operations:job-detail", pk=pk)


def _context(request: HttpRequest, job: Job) -> dict[str, Any]:
    """The job and its actions: each shown while it can apply to the job's state (cancel while the job is queued or
    running, either on a failed or errored job kept for resuming), disabled with the reason when the user may not."""
    can_cancel, can_resume = lifecycle.can_cancel_job(job, request.user), lifecycle.can_resume_job(job, request.user)
    refused_by_state = ErrorCode.INVALID_STATE
    return {
        "job": job,
        "can_cancel": can_cancel,
        "can_resume": can_resume,
        "show_cancel": not job.is_done or can_cancel.ok or can_cancel.code != refused_by_state,
        "show_resume": can_resume.ok or (job.state in KEPT_FOR_RESUMING and can_resume.code != refused_by_state),
        "driver_log": str(driver_log_path(job)) if job.program else "",
        "polling": not job.is_done,
    }
