"""
Stuck jobs: a job left RUNNING by a worker that is gone, and the request it left EXECUTING.

A job is stuck when it has shown no sign of life for ``silence_limit()``. Its execution (if it got that
far) is first settled by ``reconcile_execution`` (from the commit marker, exactly); then the request ends
succeeded when the metastore transaction committed and failed otherwise, and the job likewise. A job that stopped
before it executed anything ends ``errored`` and its request stays executing: ``job_resume`` runs it again (a Spark
job skips its verified units; its copy or staging is kept) and ``job_cancel`` discards it (the request ends failed).
Each settled job is audited. A job whose execution cannot be decided yet (metastore unreachable) is left and
reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models.functions import Coalesce
from django.utils import timezone

from operations.choices import ChangeRequestState, JobState
from operations.models import Execution, Job
from operations.notifications import notify_transition
from operations.services.audit import record_audit
from operations.services.change_requests import settle_stuck_request
from operations.services.jobs import settle_job
from operations.services.reconcile import ACTOR, reconcile_execution, silence_limit

__all__ = ("JobSettlement", "settle_stuck_jobs")

COMMITTED_STATES = (Execution.State.SUCCEEDED, Execution.State.RECONCILED)


@dataclass(frozen=True)
class JobSettlement:
    """One stuck job: how it (and its request) ended, or why it was left."""

    job_id: int
    request_id: int | None
    execution_id: int | None
    outcome: str | None  # succeeded | failed | errored (resumable) | None (undecided: left for a later run)
    reason: str
    dry_run: bool = False


def settle_stuck_jobs(
    *, dry_run: bool = False, older_than: float | None = None, metastore: str | None = None
) -> list[JobSettlement]:
    """Settle every RUNNING job without a sign of life for ``older_than`` seconds (the heartbeat timeout by default)."""
    silent_for = silence_limit(older_than)
    cutoff = timezone.now() - silent_for
    jobs = (
        Job.objects.annotate(last_sign_of_life=Coalesce("heartbeat_at", "started_at"))
        .filter(state=JobState.RUNNING, last_sign_of_life__lte=cutoff)
        .select_related("change_request")
    )
    if metastore:
        jobs = jobs.filter(change_request__metastore=metastore)
    return [_settle_job(job, dry_run, silent_for) for job in jobs.order_by("pk")]


def _settle_job(job: Job, dry_run: bool, silent_for: timedelta) -> JobSettlement:
    request = job.change_request
    execution = _execution_of(job)
    committed, reason = _verdict(execution, dry_run)
    outcome = None if committed is None else ("succeeded" if committed else "failed")
    if execution is None:
        outcome = JobState.ERRORED  # nothing executed: resumable, its request still executing
    settlement = JobSettlement(
        job_id=job.pk,
        request_id=request.pk if request else None,
        execution_id=execution.pk if execution else None,
        outcome=outcome,
        reason=reason,
        dry_run=dry_run,
    )
    if settlement.outcome is not None and not dry_run:
        with transaction.atomic():
            error = "" if outcome == JobState.SUCCEEDED else reason
            settle_job(job, settlement.outcome, f"Settled by reconcile_executions: {reason}", error=error)
            if outcome != JobState.ERRORED and request is not None and request.state == ChangeRequestState.EXECUTING:
                settle_stuck_request(
                    request, None, settlement.outcome, reason, execution=execution, silent_for=silent_for
                )
            elif request is not None:
                notify_transition(request, JobState.ERRORED, None)  # resumable: the requester and operators act
            record_audit(
                actor=ACTOR,
                action="settle_job",
                outcome=settlement.outcome,
                request_id=settlement.request_id,
                execution_id=settlement.execution_id,
                metastore=request.metastore if request else "",
                database_name=request.database_name if request else "",
                table_name=request.table_name if request else "",
                statement=request.statement if request else "",
                details={"job": job.pk, "reason": reason},
            )
    return settlement


def _verdict(execution: Execution | None, dry_run: bool) -> tuple[bool | None, str]:
    """Whether the job's work committed (None: not decidable now), and why."""
    if execution is None:
        return False, "the worker stopped before it executed anything; resume it or cancel it"
    if execution.state == Execution.State.RUNNING:
        result = reconcile_execution(execution, dry_run=dry_run)
        if dry_run or result.committed is None:
            return result.committed, f"execution #{execution.pk}: {result.reason}"
        execution.refresh_from_db()
    if execution.state == Execution.State.RUNNING:
        return None, f"execution #{execution.pk} needs a manual check of its directories first"
    committed = execution.state in COMMITTED_STATES
    return committed, f"the worker stopped; execution #{execution.pk} {'committed' if committed else 'failed'}"


def _execution_of(job: Job) -> Execution | None:
    """The execution the job started: the request's, or the latest one the job's worker recorded for it
    (``alter_jobs.run_alter`` gives it the reason ``change request #<id>``)."""
    request = job.change_request
    if request is None:
        return None
    if request.execution_id is not None:
        return request.execution
    return (
        Execution.objects.filter(
            metastore=request.metastore,
            database_name=request.database_name,
            table_name=request.table_name,
            reason=f"change request #{request.pk}",
            started_at__gte=job.started_at,
        )
        .order_by("-pk")
        .first()
    )
