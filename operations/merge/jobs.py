"""
The ``merge`` and ``merge_revert`` jobs: a worker runs an approved merge request (or the revert of one) with per-table
progress, through the one job runner.

``enqueue_execution`` queues one for a request whose operation is a merge; the runner rebuilds the plan, binds it to
the approved one (``merge_run`` refuses a stale plan) and ends the request through ``finish_execution``, as the
ALTER job does. Progress: each event the execution core reports becomes a log line and, when it counts partitions,
the job's ``partitions_done`` of ``partitions_total`` (what the estimate of later merges is measured from). A cancel
is taken between copy units (each committed and journaled, invisible to Hive); once the publishing transaction starts
it is too late. A merge cancelled while copying keeps its journal (``MergeImport``, failed with its completed units)
and its request executing (:func:`_cancelled`): ``job_resume`` continues it (or ``merge_resume``), a second cancel
discards it (the request ends failed).

The engine (``operations.merge.engine``) is logged and kept as the job's ``spark_master``: ``local`` (the worker
copies) or a Spark master, on which the copy units run as the merge program (``run_spark_program``: progress, the
application, cancel stopping the driver), the passwords in the driver's environment only. A merge that failed after
reserving keeps its request executing and its execution in ``job.plan["execution"]``: ``job_resume`` continues that
journal (``merge_run_resume``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from catalog_admin.errors import ApplicationError
from operations.choices import JobKind
from operations.merge.copy_plan import plan_secrets
from operations.merge.engine import LOCAL, Elsewhere, merge_engine
from operations.merge.run import merge_revert_run, merge_run, merge_run_resume
from operations.merge.workflow import MergeChange, MergeRevertChange
from operations.models import ChangeRequest, Job, MergeImport
from operations.services.alter_jobs import end_cancelled_request, end_request, failed_execution
from operations.services.change_requests import approved_plan, change_request_plan
from operations.services.jobs import (
    JobCancelled,
    JobHandle,
    JobInterrupted,
    create_job,
    job_log,
    register_job_kind,
)
from operations.services.spark_jobs import run_spark_program

__all__ = ("MERGE", "MERGE_REVERT", "enqueue_merge", "progress_of")

MERGE = JobKind.MERGE
MERGE_REVERT = JobKind.MERGE_REVERT
ENGINES = {
    True: "the worker copies (PostgreSQL to PostgreSQL a COPY pipe, otherwise batched reads and writes) and publishes",
    False: "the data to copy and the copy units run as Spark jobs, the worker publishes",
}


def enqueue_merge(request: ChangeRequest, actor: str) -> Job:
    """A queued merge job for ``request`` (a merge or a merge's revert); a worker runs it once the transaction
    commits."""
    if request.operation.get("kind") == MERGE_REVERT:
        return create_job(kind=MERGE_REVERT, actor=actor, change_request=request)
    total = request.preview.get("partitions_touched")
    return create_job(kind=MERGE, actor=actor, change_request=request, partitions_total=total)


def progress_of(event: Any) -> tuple[str, int | None]:
    """A reported event as a log line and the partitions imported so far (None when it does not say): an object or a
    mapping with ``table``/``rows``/``done``/``total``/``partitions_done`` or a ``message`` (the data copy's), or
    anything printable."""
    get = event.get if isinstance(event, dict) else lambda name, default=None: getattr(event, name, default)
    table, done, total = get("table"), get("done", get("rows")), get("total")
    line = (
        f"{table}: {done:,} of {total:,} row(s)" if table and isinstance(done, int) and isinstance(total, int) else ""
    )
    partitions = get("partitions_done")
    if partitions is None and table == "PARTITIONS" and isinstance(done, int):
        partitions = done
    message = get("message")
    return line or (message if isinstance(message, str) else str(event)), partitions


def _run_merge(handle: JobHandle) -> None:
    request = handle.job.change_request
    assert request is not None, "a merge job belongs to a change request"
    engine = merge_engine()
    handle.log(f"Merging on the {engine} engine: {ENGINES[engine == LOCAL]}", spark_master=engine)
    elsewhere = None if engine == LOCAL else _on_spark(handle)
    report = partial(_report, handle)
    actor, reason = request.requester.get_username(), f"change request #{request.pk}"
    try:
        stopped = _stopped_merge(handle.job)
        if stopped is not None:
            handle.log(f"Resuming merge #{stopped.pk} from its journal: {len(stopped.completed)} unit(s) done")
            execution = merge_run_resume(stopped, report=report, elsewhere=elsewhere)
        else:
            handle.log(f"Previewing {request.statement}")
            change = change_request_plan(request)
            assert isinstance(change, MergeChange)
            execution = merge_run(
                change, actor=actor, source="ui", reason=reason, approved=approved_plan(request), report=report,
                elsewhere=elsewhere,
            )  # fmt: skip
    except ApplicationError as exc:
        _keep_execution(handle, exc)
        if isinstance(exc.__cause__, JobCancelled | JobInterrupted):  # stopped between two copy units
            raise exc.__cause__ from None
        if _stopped_merge(handle.job) is not None:
            raise  # the journal holds the completed units: the job fails resumable, the request stays executing
        end_request(request, failed_execution(exc), exc.message)
        raise
    total = request.preview.get("partitions_touched")
    _succeed(handle, request, execution, partitions_done=total, partitions_total=total)


def _on_spark(handle: JobHandle) -> Elsewhere:
    """The merge's programs on the Spark engine (``run_spark_program``: progress, the application, cancel): the
    data's verified copy (``relocate``), then the rows' copy units (``merge``), the plan's passwords in the driver's
    environment only; the units a driver reported are journaled when it ends."""

    def run(program: str, plan: dict[str, Any], journal: Callable[[list[str]], None]) -> dict[str, Any]:
        secrets = plan_secrets(plan) if program == "merge" else None  # the data's copy reaches files, not databases
        try:
            return run_spark_program(handle, program=program, plan=plan, secrets=secrets)
        finally:
            journal(handle.completed)

    return run


def _keep_execution(handle: JobHandle, exc: ApplicationError) -> None:
    """Remember the execution a stopped merge recorded: a resumed job continues its journal."""
    execution = exc.details.get("execution")
    if execution is not None:
        handle.update(plan={**handle.job.plan, "execution": execution})


def _stopped_merge(job: Job) -> MergeImport | None:
    """The unfinished journal of the execution this job started, if a former attempt stopped before publishing."""
    execution = job.plan.get("execution")
    if execution is None:
        return None
    return MergeImport.objects.filter(execution_id=execution, state__in=MergeImport.UNFINISHED).first()


def _run_merge_revert(handle: JobHandle) -> None:
    request = handle.job.change_request
    assert request is not None, "a merge revert job belongs to a change request"
    handle.log(f"Previewing {request.statement}")
    try:
        change = change_request_plan(request)
        assert isinstance(change, MergeRevertChange)
        handle.commit_point("the revert's metastore transaction")
        execution = merge_revert_run(
            change, actor=request.requester.get_username(), source="ui", reason=f"change request #{request.pk}",
            approved=approved_plan(request),
        )  # fmt: skip
    except ApplicationError as exc:
        end_request(request, failed_execution(exc), exc.message)
        raise
    _succeed(handle, request, execution)


def _succeed(handle: JobHandle, request: ChangeRequest, execution: Any, **fields: Any) -> None:
    """End the request by its execution, then the job succeeded."""
    end_request(request, execution)
    handle.log(f"Done in {execution.duration_ms} ms")
    handle.succeed(**fields)


def _report(handle: JobHandle, event: Any) -> None:
    """A copy unit journaled is a safe point to stop at for a cancel (a stopping worker lets the merge finish: a
    resumed merge would reserve its ids again); the publish phase is the point of no return."""
    if isinstance(event, dict) and event.get("phase") == "publish":
        handle.commit_point("the publishing transaction")
        return
    if isinstance(event, dict) and "unit_done" in event:
        if handle.cancel_requested():
            raise JobCancelled
        return
    line, partitions = progress_of(event)
    fields: dict[str, Any] = {"message": line[:500]}
    if partitions is not None:
        fields["partitions_done"] = partitions
        total = handle.job.partitions_total or 0
        fields["progress"] = min(int(100 * partitions / total), 99) if total else 0
    handle.log(line, **fields)


def _cancelled(job: Job, actor: str) -> None:
    """After a cancel: a merge stopped between copy units with its journal is kept resumable (the job cancelled, its
    request executing: ``job_resume`` continues the journal); a second cancel discards it (the request ends failed); one
    with nothing journaled ran nothing, so the request is approved again (``end_cancelled_request``)."""
    if not job.plan.get("resumable") and _stopped_merge(job) is not None:
        kept = f"Cancelled by {actor}: its journal is kept; resume the job, or cancel it again to discard it"
        job_log(job, kept, plan={**job.plan, "resumable": True}, message=kept)
        return
    discarded = bool(job.plan.get("resumable"))
    if discarded:
        job_log(job, f"Discarded by {actor}", plan={**job.plan, "resumable": False})
    end_cancelled_request(job, actor, reopen=not discarded)  # a discarded journal's copies: not run again as new


register_job_kind(MERGE, _run_merge, enqueue=enqueue_merge, discard=_cancelled)
register_job_kind(MERGE_REVERT, _run_merge_revert, enqueue=enqueue_merge, discard=end_cancelled_request)
