"""
Jobs that outlive their worker: a Spark driver handed over to a successor, and drivers nobody follows any more.

A worker asked to stop while it follows a Spark driver does not stop the driver: its runner raises ``JobHandedOver``
and :func:`hand_over` puts the job back in the queue with ``Job.adoption``, what a successor needs to follow the
driver; the worker that claims it next (the same attempt) adopts the driver. A worker that cannot reach the driver's
work location leaves the job queued for one that can (:func:`can_adopt`, retried
``CATALOG_JOB_ADOPTION_RETRY_SECONDS`` later). A handed-over driver that nobody follows to its end is stopped through
the hook ``spark_jobs`` gives (:func:`use_driver_release`), which also says whether it is known to have stopped:
until it is, the job keeps its adoption, and resume and cancel are refused (:func:`unconfirmed_driver`). This module
never imports the Spark layer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.choices import JobState
from operations.models import Job, JobLogEntry
from operations.services.job_queue import enqueue_job, enqueue_job_later, job_log, worker_host, worker_name

__all__ = ("can_adopt", "hand_over", "release_driver", "release_unconfirmed_drivers", "unconfirmed_driver",
           "use_driver_release")  # fmt: skip

# Stops the Spark driver of a handed-over job that nobody follows any more, and says whether it is known to have
# stopped; tells whether this worker reaches a handed-over driver's work location (``spark_jobs`` gives both): this
# module never imports the Spark layer.
_DRIVER_RELEASE: list[Callable[[Job], bool]] = []
_ADOPTION_CHECK: list[Callable[[Job], str]] = []


def use_driver_release(release: Callable[[Job], bool], adoptable: Callable[[Job], str] | None = None) -> None:
    """``release(job)`` stops the driver that ``job.adoption`` names and answers whether it is known to have stopped
    (its process group seen gone, or its exit marker read); ``adoptable(job)`` is why this worker cannot adopt the
    job ("" when it can). ``spark_jobs`` calls this on import."""
    _DRIVER_RELEASE[:] = [release]
    _ADOPTION_CHECK[:] = [adoptable] if adoptable is not None else []


def can_adopt(job_id: int) -> bool:
    """Whether this worker may claim the job: anything but a handed-over job, or one whose driver's work location it
    reaches (the adoption check ``spark_jobs`` gives). Otherwise the job stays queued and its task is enqueued again
    ``CATALOG_JOB_ADOPTION_RETRY_SECONDS`` later, for a worker that can (one on the driver's host always can)."""
    job = Job.objects.filter(pk=job_id, state=JobState.QUEUED, adoption__isnull=False).first()
    if job is None:
        return True
    reason = next((why for check in _ADOPTION_CHECK if (why := check(job))), "")
    if not reason:
        return True
    line = f"Worker {worker_name()} left the handed-over job queued: {reason}"
    last = JobLogEntry.objects.filter(job_id=job_id).order_by("-pk").values_list("message", flat=True).first()
    if last != line:
        job_log(job, line)
    enqueue_job_later(job_id, settings.CATALOG_JOB_ADOPTION_RETRY_SECONDS)
    return False


def hand_over(job_id: int, adoption: dict[str, Any]) -> None:
    """Back to the queue with its driver running on: the worker that claims it next adopts the driver."""
    job_log(
        job_id,
        f"Handed over: the worker is stopping; its Spark driver (pid {adoption.get('pid')} on {adoption.get('host')}) "
        "runs on, queued for another worker to adopt it",
    )
    changed = Job.objects.filter(pk=job_id, state=JobState.RUNNING).update(
        state=JobState.QUEUED, message="Handed over: its driver runs on; queued for a worker to adopt it", worker="",
        adoption=adoption,
    )  # fmt: skip
    if changed:
        enqueue_job(Job.objects.get(pk=job_id))


def release_driver(job: Job) -> bool:
    """Stop the driver of a handed-over job that nobody follows any more, and forget its adoption once it is known to
    have stopped; whether it is (an adoption whose driver has not confirmed its stop stays on the job)."""
    if job.adoption is None:
        return True
    if not all([release(job) for release in _DRIVER_RELEASE]):
        return False
    Job.objects.filter(pk=job.pk).update(adoption=None)
    return True


def release_unconfirmed_drivers() -> list[str]:
    """Ended jobs that keep a Spark driver not confirmed stopped (``Job.adoption``) whose driver ran on this worker's
    host: its process group checked here through the release hook (ended if it still runs), then the adoption
    forgotten, so resume and cancel are allowed again; what was done (the stuck-jobs housekeeping of every worker)."""
    lines = []
    ended = (JobState.FAILED, JobState.ERRORED, JobState.CANCELLED)
    for job in Job.objects.filter(state__in=ended, adoption__isnull=False):
        adoption = job.adoption or {}
        if adoption.get("host") != worker_host() or not adoption.get("pid") or adoption.get("cluster"):
            continue
        if release_driver(job):
            job_log(
                job, f"A worker on {worker_host()} saw the driver's process group (pid {adoption['pid']}) gone: "
                "resume and cancel are allowed again",
            )  # fmt: skip
            lines.append(f"Job #{job.pk}: its driver (pid {adoption['pid']}) is known stopped now")
    return lines


def unconfirmed_driver(job: Job) -> ApplicationError:
    adoption = job.adoption or {}
    return ApplicationError(
        ErrorCode.INVALID_STATE,
        f"The Spark driver of job #{job.pk} (pid {adoption.get('pid') or '?'} on {adoption.get('host')}) was asked "
        f"to stop and has not confirmed it: its exit marker is not in {adoption.get('work')}. Nothing was changed, "
        "so that two drivers never write the same staging. It confirms within seconds once its watchdog sees the "
        f"stop request; a worker on {adoption.get('host')} checks its process group in its housekeeping (ending it "
        "if it still runs), and so does a resume from a console process there.",
        {"job": job.pk, "host": adoption.get("host"), "pid": adoption.get("pid"), "work": adoption.get("work")},
    )
