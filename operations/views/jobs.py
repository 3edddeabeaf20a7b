"""A background job's page, its progress partial (polled while it runs) and its cancel and resume actions."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from catalog_admin.errors import ApplicationError
from operations import lifecycle
from operations.models import Job
from operations.selectors import get_job
from operations.services.jobs import job_cancel, job_resume

__all__ = ("job_cancel_view", "job_detail", "job_progress", "job_resume_view")

POLL_DONE = 286  # htmx stops polling on this status


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
    return {
        "job": job,
        "can_cancel": lifecycle.can_cancel_job(job, request.user),
        "can_resume": lifecycle.can_resume_job(job, request.user),
        "polling": not job.is_done,
    }
