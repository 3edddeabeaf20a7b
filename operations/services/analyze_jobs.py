"""
ANALYZE on Spark: an approved ANALYZE (a change request, or ``hive_ddl --execute``) runs as a job of kind
``analyze`` through the one job runner and the Spark engine, as the other data jobs do (``relocate_jobs.py``).

``enqueue_analyze`` lists every unit's files now (``analyze_plan``) and queues the analyze program; the runner
previews again (a stale plan refuses before anything is read), runs the program (``run_spark_program``: progress as
units finish, cancel, resume from ``plan["completed"]``), passes its point of no return and swaps the statistics in
one transaction (``analyze_swap``). Nothing is written to the data's directories, so a cancel has nothing to remove:
the request ends failed with nothing swapped.
"""

from __future__ import annotations

from typing import Any

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.selectors.metastores import get_metastore
from operations import lifecycle
from operations.choices import JobKind
from operations.models import ChangeRequest, Job
from operations.preview import Preview
from operations.services.alter import alter_preview
from operations.services.alter_jobs import end_cancelled_request, end_request, failed_execution
from operations.services.analyze import PROGRAM, analyze_plan, analyze_swap
from operations.services.jobs import JobHandle, register_job_kind
from operations.services.spark_jobs import enqueue_spark_job, run_spark_program
from operations.specs import spec_from_dict
from operations.staleness import compare_plans, stale_preview_error

__all__ = ("ANALYZE", "enqueue_analyze")

ANALYZE = JobKind.ANALYZE


def enqueue_analyze(
    preview: Preview, *, actor: str, approved: dict[str, Any], change_request: ChangeRequest | None = None,
    source: str = "ui", reason: str = "",
) -> Job:  # fmt: skip
    """A queued analyze job for ``preview`` (a worker takes it once the transaction commits)."""
    plan = {**analyze_plan(preview=preview), "operation": preview.spec.as_dict(), "approved": approved,
            "actor": actor, "source": source, "reason": reason}  # fmt: skip
    return enqueue_spark_job(program=PROGRAM, plan=plan, actor=actor, change_request=change_request, kind=ANALYZE)


def _enqueue_request(request: ChangeRequest, actor: str) -> Job:
    from operations.services.change_requests import approved_plan, change_request_preview

    return enqueue_analyze(
        change_request_preview(request), actor=actor, approved=approved_plan(request), change_request=request
    )


def _run(handle: JobHandle) -> None:
    """Preview again (refusing a stale plan), analyze on Spark, verify and swap, finish the request."""
    job = handle.job
    request = job.change_request
    if request is not None and not lifecycle.can_fail(request):
        raise ApplicationError(ErrorCode.INVALID_STATE, f"Change request #{request.pk} is {request.state}, no longer "
                               "executing; nothing was run.")  # fmt: skip
    try:
        preview = _current_preview(job)
        staleness = compare_plans(job.plan["approved"], preview)
        if staleness.is_stale:
            raise stale_preview_error(f"The table changed since the approved preview ({staleness.summary}); nothing "
                                      "was read or written.", staleness)  # fmt: skip
        manifest = run_spark_program(handle)
        handle.log(f"Analyzed {len(manifest.get('units', {}))} unit(s): {manifest.get('rows', 0)} row(s) in "
                   f"{manifest.get('files', 0)} file(s)")  # fmt: skip
        handle.commit_point("the statistics swap")
        execution = analyze_swap(
            preview=preview, plan=job.plan, manifest=manifest, actor=_actor(job), source=_source(job),
            reason=f"change request #{request.pk}" if request else job.plan.get("reason", ""),
            approved=job.plan["approved"],
        )  # fmt: skip
    except ApplicationError as exc:
        if exc.details.get("job") == job.pk and "returncode" in exc.details:
            raise  # the driver failed: the job fails resumable, the request stays executing
        end_request(request, failed_execution(exc), exc.message)
        handle.fail(exc.message)
        return
    end_request(request, execution)
    handle.log(f"Swapped the statistics as execution #{execution.pk}")
    handle.succeed(result={**manifest, "units": len(manifest.get("units", {})), "execution": execution.pk})


def _current_preview(job: Job) -> Preview:
    if job.change_request is not None:
        from operations.services.change_requests import change_request_preview

        return change_request_preview(job.change_request)
    return alter_preview(metastore=get_metastore(job.plan["metastore"]), spec=spec_from_dict(job.plan["operation"]))


def _actor(job: Job) -> str:
    if job.change_request is not None:
        return job.change_request.requester.get_username()
    return str(job.plan.get("actor", "system"))


def _source(job: Job) -> str:
    return "ui" if job.change_request is not None else str(job.plan.get("source", "cli"))


register_job_kind(ANALYZE, _run, enqueue=_enqueue_request, discard=lambda job, actor: end_cancelled_request(job, actor))
