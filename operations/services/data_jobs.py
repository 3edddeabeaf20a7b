"""
The one runner of data jobs: an approved ALTER that reads or rewrites the data on Spark before its metastore swap —
relocate, compact, convert (``relocate_jobs.py``) and analyze (``analyze_jobs.py``), from a change request or
``hive_ddl --execute``.

A kind provides only what differs (:class:`DataJob`): the program's plan, the swap that checks the program's
manifest and runs the metastore transaction, and what the log says. The runner does the rest for every kind: it
previews again (a plan changed since approval is refused before the program starts), runs the program
(``run_spark_program``: progress, cancel, resume from ``plan["completed"]``), passes its point of no return (the
swap: a cancel is taken until then) and swaps; a change request ends through the lifecycle as ALTER jobs do. A driver
that fails leaves the request executing and the job resumable (``job_resume``); any other refusal fails the job and
the request (a job refused before its first run forgets its staging: the destination was never its own). A cancelled
job ends its request failed with nothing swapped and its staging (``plan["staging"]``, when it writes one) removed.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from functools import partial
from typing import Any

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.selectors.metastores import get_metastore
from operations import lifecycle
from operations.models import ChangeRequest, Execution, Job
from operations.planners.relocate import resuming_into
from operations.preview import Preview
from operations.services.alter import alter_preview
from operations.services.alter_jobs import end_cancelled_request, end_request, failed_execution
from operations.services.change_requests import approved_plan, change_request_preview
from operations.services.jobs import JobHandle, register_job_kind
from operations.services.spark_jobs import enqueue_spark_job, remove_staging, run_spark_program
from operations.specs import spec_from_dict
from operations.staleness import compare_plans, stale_message, stale_preview_error

__all__ = (
    "DATA_JOBS",
    "DataJob",
    "data_job_kind",
    "discard_data_job",
    "enqueue_data_job",
    "register_data_job",
    "run_data_job",
    "swap_result",
)

Manifest = dict[str, Any]


def swap_result(manifest: Manifest, execution: Execution) -> dict[str, Any]:
    """A data job's result: the program's manifest and the swap's execution."""
    return {**manifest, "execution": execution.pk}


@dataclass(frozen=True)
class DataJob:
    """What one kind of data job provides to the runner.

    ``operation_kinds``: the operations it runs (``spec.kind``); ``plan(preview)``: the program's JSON plan, naming
    its ``program`` and, when it writes any, the ``staging`` a cancel removes; ``swap(preview=, plan=, manifest=,
    actor=, source=, reason=, approved=)``: checks the manifest and runs the metastore transaction; ``swap_name``: the
    point of no return as the log names it; ``untouched``: what a plan refused as stale did not do; ``ran(job,
    manifest)``: the log line once the program ended; ``swapped(execution, manifest)``: the log lines after the swap;
    ``result(manifest, execution)``: the job's result."""

    operation_kinds: tuple[str, ...]
    plan: Callable[[Preview], dict[str, Any]]
    swap: Callable[..., Execution]
    swap_name: str
    untouched: str
    ran: Callable[[Job, Manifest], str]
    swapped: Callable[[Execution, Manifest], list[str]]
    result: Callable[[Manifest, Execution], dict[str, Any]] = swap_result


DATA_JOBS: dict[str, DataJob] = {}


def register_data_job(kind: str, data_job: DataJob) -> None:
    """Make ``kind`` a data job run by :func:`run_data_job` (called from the kind's module)."""
    DATA_JOBS[kind] = data_job
    register_job_kind(kind, run_data_job, enqueue=partial(_enqueue_request, kind), discard=discard_data_job)


def data_job_kind(preview: Preview) -> str:
    """The job kind running ``preview``'s operation: what it does to the data."""
    for kind, data_job in DATA_JOBS.items():
        if preview.spec.kind in data_job.operation_kinds:
            return kind
    raise ApplicationError(
        ErrorCode.INVALID_PARAMETER,
        f"{preview.statement} reads or writes no data on Spark: it is not a data job.",
        {"operation": preview.spec.kind},
    )


def enqueue_data_job(
    preview: Preview,
    *,
    actor: str,
    approved: dict[str, Any],
    change_request: ChangeRequest | None = None,
    source: str = "ui",
    reason: str = "",
    kind: str | None = None,
) -> Job:
    """A queued data job for ``preview`` (a worker takes it once the transaction commits): the program's plan listed
    now, the operation to preview again, the approved plan it must still match; ``source`` and ``reason`` are the
    swap's when no change request gives them (``hive_ddl``). ``kind``: the job kind (else the operation's)."""
    kind = kind or data_job_kind(preview)
    plan = {**DATA_JOBS[kind].plan(preview), "operation": preview.spec.as_dict(), "approved": approved}
    return enqueue_spark_job(
        program=plan["program"],
        plan={**plan, "actor": actor, "source": source, "reason": reason},
        actor=actor,
        change_request=change_request,
        kind=kind,
    )


def _enqueue_request(kind: str, request: ChangeRequest, actor: str) -> Job:
    """The job executing an approved data-job change request (its stored plan is the one the job must match)."""
    preview = change_request_preview(request)
    return enqueue_data_job(preview, actor=actor, approved=approved_plan(request), change_request=request, kind=kind)


def run_data_job(handle: JobHandle) -> None:
    """Preview again (refusing a stale plan), run the program on Spark, pass the point of no return, swap, finish."""
    job = handle.job
    data_job = DATA_JOBS[job.kind]
    request = job.change_request
    if request is not None and not lifecycle.can_fail(request):
        raise ApplicationError(
            ErrorCode.INVALID_STATE, f"Change request #{request.pk} is {request.state}, no longer executing; nothing "
            "was run.",
        )  # fmt: skip
    running = False
    try:
        preview = _current_preview(job)
        staleness = compare_plans(job.plan["approved"], preview)
        if staleness.is_stale:
            raise stale_preview_error(stale_message("The table", data_job.untouched, staleness=staleness), staleness)
        running = True
        manifest = run_spark_program(handle)
        handle.log(data_job.ran(job, manifest))
        handle.commit_point(data_job.swap_name)
        execution = data_job.swap(
            preview=preview, plan=job.plan, manifest=manifest, actor=_actor(job), source=_source(job),
            reason=f"change request #{request.pk}" if request else job.plan.get("reason", ""),
            approved=job.plan["approved"],
        )  # fmt: skip
    except ApplicationError as exc:
        if exc.details.get("job") == job.pk and "returncode" in exc.details:
            raise  # the driver failed: the job fails resumable, the request stays executing
        end_request(request, failed_execution(exc), exc.message)
        forget_staging = not running and not job.continues_earlier_work
        handle.fail(exc.message, plan=_plan_after_refusal(handle.job, forget_staging=forget_staging))
        return
    end_request(request, execution)
    for line in data_job.swapped(execution, manifest):
        handle.log(line)
    handle.succeed(result=data_job.result(manifest, execution))


def discard_data_job(job: Job, actor: str) -> None:
    """After a cancel: the staging removed (a job that writes none has nothing to remove), the request ended failed
    (nothing was swapped)."""
    remove_staging(job)
    end_cancelled_request(job, actor)


def _plan_after_refusal(job: Job, *, forget_staging: bool) -> dict[str, Any]:
    """``forget_staging``: no attempt ran the program (refused first), so the destination is not its own and
    discarding the job later must not remove it."""
    return {key: value for key, value in job.plan.items() if key != "staging" or not forget_staging}


def _current_preview(job: Job) -> Preview:
    """The plan as the metastore has it now; a resumed job (not its first attempt) or an adopted one finds its own
    partial output at its staging, which its first attempt found free."""
    staging = job.plan.get("staging")
    with resuming_into(staging) if staging and job.continues_earlier_work else nullcontext():
        if job.change_request is not None:
            return change_request_preview(job.change_request)
        spec = spec_from_dict(job.plan["operation"])
        return alter_preview(metastore=get_metastore(job.plan["metastore"]), spec=spec)


def _actor(job: Job) -> str:
    if job.change_request is not None:
        return job.change_request.requester.get_username()
    return str(job.plan.get("actor", "system"))


def _source(job: Job) -> str:
    return "ui" if job.change_request is not None else str(job.plan.get("source", "cli"))
