"""
The ``merge`` job: a worker runs an approved merge request (or the revert of one) with per-table progress.

``enqueue_execution`` queues one for a request whose operation is a merge; the runner rebuilds the plan, binds it to
the approved one (``merge_run`` refuses a stale plan) and ends the request through ``finish_execution``, as the
ALTER job does. Progress: each event the execution core reports becomes a log line and, when it counts partitions,
the job's ``partitions_done`` of ``partitions_total`` (what the estimate of later merges is measured from).
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from catalog_admin.errors import ApplicationError
from operations.choices import JobState
from operations.merge.workflow import MERGE as MERGE_KIND
from operations.merge.workflow import MERGE_REVERT, MergeChange, MergeRevertChange
from operations.models import ChangeRequest, Execution, Job
from operations.services.jobs import enqueue_job, job_log, register_job_runner

__all__ = ("MERGE", "enqueue_merge", "progress_of")

MERGE = "merge"


def enqueue_merge(request: ChangeRequest, *, actor: str) -> Job:
    """A queued merge job for ``request`` (a merge or a merge's revert); a worker runs it once the transaction
    commits."""
    total = request.preview.get("partitions_touched") if request.operation.get("kind") == MERGE_KIND else None
    job = Job.objects.create(kind=MERGE, change_request=request, message=f"Queued by {actor}", partitions_total=total)
    enqueue_job(job)
    return job


def progress_of(event: Any) -> tuple[str, int | None]:
    """A reported event as a log line and the partitions imported so far (None when it does not say): an object or a
    mapping with ``table``/``rows``/``done``/``total``/``partitions_done``, or anything printable."""
    get = event.get if isinstance(event, dict) else lambda name, default=None: getattr(event, name, default)
    table, done, total = get("table"), get("done", get("rows")), get("total")
    line = (
        f"{table}: {done:,} of {total:,} row(s)" if table and isinstance(done, int) and isinstance(total, int) else ""
    )
    partitions = get("partitions_done")
    if partitions is None and table == "PARTITIONS" and isinstance(done, int):
        partitions = done
    return line or str(event), partitions


def _run_merge(job: Job) -> None:
    from operations.merge.run import merge_revert_run, merge_run
    from operations.services.change_requests import approved_plan, change_request_plan, finish_execution

    request = job.change_request
    assert request is not None, "a merge job belongs to a change request"
    job_log(job, f"Previewing {request.statement}")
    actor, reason = request.requester.get_username(), f"change request #{request.pk}"
    try:
        change = change_request_plan(request)
        if request.operation.get("kind") == MERGE_REVERT:
            assert isinstance(change, MergeRevertChange)
            execution = merge_revert_run(
                change, actor=actor, source="ui", reason=reason, approved=approved_plan(request)
            )
        else:
            assert isinstance(change, MergeChange)
            execution = merge_run(
                change, actor=actor, source="ui", reason=reason, approved=approved_plan(request),
                report=lambda event: _report(job, event),
            )  # fmt: skip
    except ApplicationError as exc:
        execution_id = exc.details.get("execution")
        failed = Execution.objects.filter(pk=execution_id).first() if execution_id is not None else None
        finish_execution(request, failed, exc.message)
        job_log(job, exc.message)
        Job.objects.filter(pk=job.pk).update(
            state=JobState.FAILED, error=exc.message, finished_at=timezone.now(), message=exc.message[:500]
        )
        return
    finish_execution(request, execution)
    job_log(job, f"Done in {execution.duration_ms} ms")
    done = request.preview.get("partitions_touched") if request.operation.get("kind") == MERGE_KIND else None
    Job.objects.filter(pk=job.pk).update(
        state=JobState.SUCCEEDED, progress=100, finished_at=timezone.now(), message="Done", partitions_done=done
    )


def _report(job: Job, event: Any) -> None:
    line, partitions = progress_of(event)
    fields: dict[str, Any] = {"message": line[:500]}
    if partitions is not None:
        fields["partitions_done"] = partitions
        total = job.partitions_total or 0
        fields["progress"] = min(int(100 * partitions / total), 99) if total else 0
    job_log(job, line, **fields)


register_job_runner(MERGE, _run_merge)
