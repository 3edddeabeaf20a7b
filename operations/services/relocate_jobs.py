"""
Data jobs on Spark: an approved relocate, compact or convert (a change request, or ``hive_ddl --execute``) runs on
the engine, as a job of kind ``relocate``, ``compact`` or ``convert``.

``enqueue_relocation`` lists the files now (``relocation_copy_plan``) and queues the job through
``enqueue_spark_job``: the relocate program on that plan, with ``plan["staging"]`` = the new location (nothing points
at it until the swap, and the preview blocked a destination that exists or lies outside the governed roots), so a
cancel removes the partial copies and only those. The job's runner rebuilds the preview, refuses a stale one before
copying anything, runs the program (``run_spark_program``: progress, cancel, resume from ``plan["completed"]``), then
``relocation_swap`` checks the manifest and re-points the metastore in one staleness-checked transaction; a change
request ends through the lifecycle as ALTER jobs do. The swap is the job's point of no return: a cancel is taken
until then. A driver that fails leaves the request executing and the job resumable (``job_resume``); a cancelled job
ends the request failed with nothing swapped and its staging removed.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.selectors.metastores import get_metastore
from operations import lifecycle
from operations.choices import JobKind
from operations.models import ChangeRequest, Job
from operations.planners.relocate import resuming_into
from operations.preview import Preview
from operations.services.alter import alter_preview
from operations.services.alter_jobs import end_cancelled_request, end_request, failed_execution
from operations.services.jobs import JobHandle, register_job_kind
from operations.services.relocate import relocation_copy_plan, relocation_swap
from operations.services.spark_jobs import enqueue_spark_job, remove_staging, run_spark_program
from operations.specs import CompactFiles, ConvertFormat, Relocate, spec_from_dict
from operations.staleness import compare_plans, stale_preview_error

__all__ = ("DATA_JOB_KINDS", "PROGRAM", "RELOCATE", "data_job_kind", "enqueue_relocation", "relocation_job_plan")

RELOCATE = JobKind.RELOCATE
PROGRAM = "relocate"
DATA_JOB_KINDS = (JobKind.RELOCATE, JobKind.COMPACT, JobKind.CONVERT)


def data_job_kind(preview: Preview) -> str:
    """The job kind of a data job: what it does to the data."""
    if isinstance(preview.spec, CompactFiles):
        return JobKind.COMPACT
    if isinstance(preview.spec, ConvertFormat):
        return JobKind.CONVERT
    return JobKind.RELOCATE


def relocation_job_plan(preview: Preview, *, approved: dict[str, Any]) -> dict[str, Any]:
    """The relocate (or rewrite) program's plan (every file listed now) plus what the runner needs: the operation to
    preview again, the approved plan it must still match, and the staging a cancel removes (the new location; a
    rewrite's hidden directory holding its new directories)."""
    assert isinstance(preview.spec, Relocate | CompactFiles | ConvertFormat), "only these copy or rewrite data"
    plan = relocation_copy_plan(preview=preview)
    return {
        **plan,
        "staging": preview.spec.location if isinstance(preview.spec, Relocate) else plan["staging"],
        "operation": preview.spec.as_dict(),
        "approved": approved,
    }


def enqueue_relocation(
    preview: Preview,
    *,
    actor: str,
    approved: dict[str, Any],
    change_request: ChangeRequest | None = None,
    source: str = "ui",
    reason: str = "",
) -> Job:
    """A queued relocate job for ``preview`` (a worker takes it once the transaction commits); ``source`` and
    ``reason`` are the swap's when no change request gives them (``hive_ddl``)."""
    plan = relocation_job_plan(preview, approved=approved)
    return enqueue_spark_job(
        program=plan["program"],
        plan={**plan, "actor": actor, "source": source, "reason": reason},
        actor=actor,
        change_request=change_request,
        kind=data_job_kind(preview),
    )


def enqueue_request_relocation(request: ChangeRequest, actor: str) -> Job:
    """The job executing an approved relocate change request (its stored plan is the one the job must match)."""
    from operations.services.change_requests import approved_plan, change_request_preview

    return enqueue_relocation(
        change_request_preview(request), actor=actor, approved=approved_plan(request), change_request=request
    )


def _run_relocation(handle: JobHandle) -> None:
    """The runner of data jobs: preview again (refusing a stale plan), copy or rewrite on Spark, verify and swap,
    finish."""
    job = handle.job
    request = job.change_request
    if request is not None and not lifecycle.can_fail(request):
        raise ApplicationError(
            ErrorCode.INVALID_STATE, f"Change request #{request.pk} is {request.state}, no longer executing; nothing "
            "was run.",
        )  # fmt: skip
    copying = False
    try:
        preview = _current_preview(job)
        _refuse_stale(job.plan["approved"], preview)
        copying = True
        manifest = run_spark_program(handle)
        if job.program == "rewrite":
            handle.log(f"Rewrote {manifest.get('rows', 0)} row(s) into {manifest.get('files', 0)} file(s), verified")
        else:
            handle.log(f"Copied and verified {manifest.get('files', 0)} file(s)")
        handle.commit_point("the metastore swap")
        execution = relocation_swap(
            preview=preview, plan=job.plan, manifest=manifest, actor=_actor(job), source=_source(job),
            reason=f"change request #{request.pk}" if request else job.plan.get("reason", ""),
            approved=job.plan["approved"],
        )  # fmt: skip
    except ApplicationError as exc:
        if exc.details.get("job") == job.pk and "returncode" in exc.details:
            raise  # the driver failed: the job fails resumable, the request stays executing
        end_request(request, failed_execution(exc), exc.message)
        forget_staging = not copying and not job.continues_earlier_work
        handle.fail(exc.message, plan=_plan_after_refusal(handle.job, forget_staging=forget_staging))
        return
    end_request(request, execution)
    if caught_up := manifest.get("caught_up"):
        handle.log(f"Re-listed before the swap: copied {sum(map(len, caught_up.values()))} file(s) written into "
                   f"{len(caught_up)} source(s) during the copy")  # fmt: skip
    handle.log(f"Swapped as execution #{execution.pk}; the source is kept until {execution.relocation.keep_until}")
    handle.succeed(result={**manifest, "execution": execution.pk})


def _plan_after_refusal(job: Job, *, forget_staging: bool) -> dict[str, Any]:
    """``forget_staging``: the job never copied anything (refused on its first attempt, before the copy), so the
    destination is not its own and discarding the job later must not remove it."""
    return {key: value for key, value in job.plan.items() if key != "staging" or not forget_staging}


def _discard(job: Job, actor: str) -> None:
    """After a cancel: the copy removed, the request ended failed (nothing was swapped)."""
    remove_staging(job)
    end_cancelled_request(job, actor)


def _current_preview(job: Job) -> Preview:
    """The plan as the metastore has it now; a resumed job (not its first attempt) or an adopted one finds its own
    partial copy at the destination, which its first attempt found free."""
    staging = job.plan.get("staging")
    resuming = resuming_into(staging) if staging and job.continues_earlier_work else nullcontext()
    with resuming:
        if job.change_request is not None:
            from operations.services.change_requests import change_request_preview

            return change_request_preview(job.change_request)
        spec = spec_from_dict(job.plan["operation"])
        return alter_preview(metastore=get_metastore(job.plan["metastore"]), spec=spec)


def _refuse_stale(approved: dict[str, Any], preview: Preview) -> None:
    staleness = compare_plans(approved, preview)
    if staleness.is_stale:
        raise stale_preview_error(
            f"The table changed since the approved preview ({staleness.summary}); nothing was copied or swapped.",
            staleness,
        )


def _actor(job: Job) -> str:
    if job.change_request is not None:
        return job.change_request.requester.get_username()
    return str(job.plan.get("actor", "system"))


def _source(job: Job) -> str:
    return "ui" if job.change_request is not None else str(job.plan.get("source", "cli"))


for _kind in DATA_JOB_KINDS:
    register_job_kind(_kind, _run_relocation, enqueue=enqueue_request_relocation, discard=_discard)
