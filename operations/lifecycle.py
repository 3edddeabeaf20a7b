"""
The change-request lifecycle: who may take which action on a request in which state, in one place.

Every action has a ``can_<action>(change, user, …) -> Allowed`` built from the transition table
(:data:`operations.choices.TRANSITIONS` and :data:`operations.choices.ACTION_STATES`) and the policy
(:mod:`operations.policy`). The services enforce exactly these checks (raising the :class:`Allowed`'s code and
reason), and the pages and the API explain exactly them: one wording everywhere. Checks that need a fresh
preview (``stale``) take what the caller knows; the services find out by previewing again.

A job is *alive* while its worker beats: a running job whose heartbeat (or start) is newer than
``CATALOG_JOB_HEARTBEAT_TIMEOUT_SECONDS`` (default 300), or a queued job younger than that. Only a request whose
job is not alive can be settled by an admin (or by ``reconcile_executions``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from catalog_admin.errors import ErrorCode
from catalog_admin.roles import Role
from operations.choices import ACTION_STATES, ChangeRequestState, Decision, JobState
from operations.models import ChangeRequest, Job
from operations.policy import Allowed, can_request, has_role
from operations.policy import can_approve as policy_can_approve
from operations.rules import blocked_error
from operations.staleness import stale_message

__all__ = (
    "ACTIONS",
    "SETTLE_OUTCOMES",
    "can_approve",
    "can_cancel",
    "can_cancel_job",
    "can_comment",
    "can_edit",
    "can_execute",
    "can_fail",
    "can_refresh",
    "can_reject",
    "can_reopen_cancelled",
    "can_resume_job",
    "can_revert",
    "can_revise",
    "can_schedule",
    "can_settle",
    "can_start",
    "can_submit",
    "can_succeed",
    "check",
    "databases_touched",
    "heartbeat_timeout",
    "job_is_alive",
    "latest_job",
    "stale_reason",
    "state_refusal",
)

ACTIONS = (
    "edit",
    "revise",
    "submit",
    "refresh",
    "approve",
    "reject",
    "execute",
    "schedule",
    "cancel",
    "revert",
    "comment",
    "settle",
)
SETTLE_OUTCOMES = ("succeeded", "failed")
_PAST = {"edit": "edited", "submit": "submitted", "refresh": "refreshed", "approve": "approved",
         "reject": "rejected", "execute": "executed", "schedule": "scheduled", "cancel": "cancelled",
         "revert": "reverted", "comment": "commented", "start": "started", "succeed": "marked succeeded",
         "fail": "marked failed", "settle": "settled", "mark_reverted": "marked reverted",
         "reopen_cancelled": "approved again",
         "revise": "revised"}  # fmt: skip
_OK = Allowed(True)
User = AbstractBaseUser | None


# Building blocks ---------------------------------------------------------------------------------------------------


def check(*checks: Allowed | Callable[[], Allowed]) -> Allowed:
    """The first refusal among ``checks`` (callables are asked only when the checks before them passed)."""
    for item in checks:
        allowed = item() if callable(item) else item
        if not allowed:
            return allowed
    return _OK


def state_refusal(change: ChangeRequest, action: str) -> Allowed:
    """``invalid_state``: the request's state does not allow ``action`` (details: request, state, action)."""
    return Allowed(
        False,
        f"Request #{change.pk} is {change.get_state_display().lower()}: it cannot be {_PAST.get(action, action)} now.",
        ErrorCode.INVALID_STATE,
        {"request": change.pk, "state": change.state, "action": action},
    )


def stale_reason(change: ChangeRequest) -> str:
    """The ``stale_preview`` wording: the table changed since the request's preview."""
    return stale_message(
        f"{change.database_name}.{change.table_name}",
        "refresh the preview before it can be approved or executed",
        since=f"request #{change.pk} was previewed",
    )


def databases_touched(change: ChangeRequest) -> tuple[str, ...]:
    """Every database the request's plan touches: its table's, a rename's destination, those the plan names (an
    abort's transactions' other writes, kept in its policy), and (for a revert) those of the request it reverts;
    sorted, without repeats."""
    names = {change.database_name, *_operation_databases(change.operation), *_plan_databases(change)}
    if change.revert_of_id:
        original = change.revert_of
        assert original is not None, "a revert request names the request it reverts"
        names |= {original.database_name, *_operation_databases(original.operation), *_plan_databases(original)}
    return tuple(sorted(name for name in names if name))


def _plan_databases(change: ChangeRequest) -> list[str]:
    """The databases the stored plan names (``policy``: small, read by lists that leave the preview out)."""
    return list((change.policy or {}).get("databases") or ())


def _operation_databases(operation: dict[str, Any] | None) -> set[str]:
    names = set((operation or {}).get("arriving") or ())  # a merge: every database as it arrives in the target
    for key in ("target", "new", "source", "like"):  # an exchange's source, a CREATE TABLE … LIKE's
        ref = (operation or {}).get(key)
        if isinstance(ref, dict) and ref.get("database"):
            names.add(str(ref["database"]))
    return names


def _in_state(change: ChangeRequest, action: str) -> Allowed:
    return _OK if change.state in ACTION_STATES[action] else state_refusal(change, action)


def _requester(change: ChangeRequest, user: User, verb: str) -> Allowed:
    if user is not None and user.is_authenticated and user.pk == change.requester_id:
        return _OK
    return Allowed(False, f"Only the requester can {verb} request #{change.pk}.", details={"request": change.pk})


def _approver(change: ChangeRequest, user: User) -> Allowed:
    if user is None:
        return Allowed(False, "Only approvers can approve or reject changes.")
    allowed = policy_can_approve(user, requester_id=change.requester_id, databases=databases_touched(change))
    return allowed if allowed else Allowed(False, allowed.reason, allowed.code, {"request": change.pk})


def _executor(change: ChangeRequest, user: User) -> Allowed:
    if user is not None and user.is_authenticated and (user.pk == change.requester_id or has_role(user, Role.ADMIN)):
        return _OK
    return Allowed(False, "Only the requester or an operator (admin) can execute a request.")


def _undecided(change: ChangeRequest, user: User) -> Allowed:
    if user is not None and any(a.approver_id == user.pk for a in change.approvals.all()):
        return Allowed(False, f"You already decided on request #{change.pk}.", ErrorCode.INVALID_STATE,
                       {"request": change.pk})  # fmt: skip
    return _OK


def _fresh(change: ChangeRequest, stale: bool) -> Allowed:
    if stale:
        return Allowed(False, stale_reason(change), ErrorCode.STALE_PREVIEW, {"request": change.pk})
    return _OK


def _unblocked(change: ChangeRequest) -> Allowed:
    blockers = (change.preview or {}).get("blockers") or []
    if not blockers:
        return _OK
    refused = blocked_error(blockers, change.preview.get("blocker_counts"))
    return Allowed(False, refused.message, refused.code, refused.details)


def _approved_to_run(change: ChangeRequest, action: str) -> Allowed:
    if change.state in ACTION_STATES[action]:
        return _OK
    if change.state == ChangeRequestState.SUBMITTED:
        given = sum(1 for a in change.approvals.all() if a.decision == Decision.APPROVE)
        needed = change.required_approvals
        return Allowed(
            False,
            f"Request #{change.pk} is waiting for approval: {given} of {needed} approval{'s' if needed != 1 else ''} "
            "given.",
            ErrorCode.INVALID_STATE,
            {"request": change.pk, "state": change.state, "action": action},
        )
    return state_refusal(change, action)


# The requester's actions -------------------------------------------------------------------------------------------


def can_edit(change: ChangeRequest, user: User, *, replans: bool = True) -> Allowed:
    """The requester edits a draft. ``replans``: the edit gives the request another operation (the page's form
    always may); a revert request's plan comes from the execution it reverts, so only its reason can change."""
    return check(_requester(change, user, "edit"), lambda: _in_state(change, "edit"), lambda: _planned(change, replans))


def _planned(change: ChangeRequest, replans: bool) -> Allowed:
    if not change.revert_of_id or not replans:
        return _OK
    return Allowed(
        False,
        f"Request #{change.pk} reverts request #{change.revert_of_id} (its execution "
        f"#{getattr(change.revert_of, 'execution_id', '?')}): its plan comes from that execution; cancel it and "
        "request the revert again instead.",
        ErrorCode.INVALID_STATE,
        {"request": change.pk, "state": change.state, "action": "edit"},
    )


def can_submit(change: ChangeRequest, user: User) -> Allowed:
    """The requester submits a draft that no Hive rule blocks (as far as its stored preview knows)."""
    return check(_requester(change, user, "submit"), lambda: _in_state(change, "submit"), lambda: _unblocked(change))


def can_refresh(change: ChangeRequest, user: User) -> Allowed:
    """The requester previews an open, not yet scheduled request again (a draft, submitted or approved)."""
    return check(_requester(change, user, "refresh the preview of"), lambda: _in_state(change, "refresh"))


def can_revise(change: ChangeRequest, user: User) -> Allowed:
    """The requester takes a rejected request back as a draft (then edits and submits it again)."""
    return check(_requester(change, user, "revise"), lambda: _in_state(change, "revise"))


def can_cancel(change: ChangeRequest, user: User) -> Allowed:
    """The requester (or a superuser) cancels an open request."""
    if user is None or not (user.pk == change.requester_id or getattr(user, "is_superuser", False)):
        return Allowed(False, "Only the requester can cancel a request.", details={"request": change.pk})
    return _in_state(change, "cancel")


def can_revert(change: ChangeRequest, user: User) -> Allowed:
    """A steward asks to revert a succeeded request (once)."""
    if user is None:
        return Allowed(False, "Only stewards can request changes.")
    return check(can_request(user), lambda: _revertible(change))


def _revertible(change: ChangeRequest) -> Allowed:
    if change.state not in ACTION_STATES["revert"] or change.execution_id is None:
        return state_refusal(change, "revert")
    if change.revert_requests.exclude(state__in=("rejected", "cancelled", "failed")).exists():
        return Allowed(False, f"Request #{change.pk} already has a revert request.", ErrorCode.INVALID_STATE,
                       {"request": change.pk})  # fmt: skip
    return _OK


def can_comment(change: ChangeRequest, user: User) -> Allowed:
    """Anyone signed in comments, in any state."""
    if user is not None and user.is_authenticated:
        return _OK
    return Allowed(False, "Sign in to comment.", ErrorCode.NOT_AUTHENTICATED)


# Approvers ---------------------------------------------------------------------------------------------------------


def can_approve(change: ChangeRequest, user: User, *, stale: bool = False) -> Allowed:
    """Another person with approval rights over every database the plan touches, once, on a fresh preview."""
    return check(
        _approver(change, user),
        lambda: _in_state(change, "approve"),
        lambda: _undecided(change, user),
        lambda: _fresh(change, stale),
    )


def can_reject(change: ChangeRequest, user: User) -> Allowed:
    """Like approving, whatever the table looks like now."""
    return check(_approver(change, user), lambda: _in_state(change, "reject"), lambda: _undecided(change, user))


# Execution ---------------------------------------------------------------------------------------------------------


def can_execute(change: ChangeRequest, user: User, *, stale: bool = False) -> Allowed:
    """The requester or an admin executes an approved (or scheduled) request whose preview is fresh."""
    return check(_executor(change, user), lambda: _approved_to_run(change, "execute"), lambda: _fresh(change, stale))


def can_schedule(change: ChangeRequest, user: User, *, stale: bool = False) -> Allowed:
    """Like executing, for an approved request, at a later time."""
    return check(_executor(change, user), lambda: _approved_to_run(change, "schedule"), lambda: _fresh(change, stale))


def can_start(change: ChangeRequest) -> Allowed:
    """The scheduler starts a scheduled request whose time has come."""
    if change.state not in ACTION_STATES["start"]:
        return state_refusal(change, "start")
    if change.scheduled_for is not None and change.scheduled_for > timezone.now():
        return Allowed(False, f"Request #{change.pk} is scheduled for later.", ErrorCode.INVALID_STATE,
                       {"request": change.pk, "state": change.state, "action": "start"})  # fmt: skip
    return _OK


def can_succeed(change: ChangeRequest) -> Allowed:
    """The job ends an executing request as succeeded."""
    return _in_state(change, "succeed")


def can_fail(change: ChangeRequest) -> Allowed:
    """The job ends an executing request as failed."""
    return _in_state(change, "fail")


def can_reopen_cancelled(change: ChangeRequest, job: Job) -> Allowed:
    """The job ends an executing request whose ``job`` was cancelled before its point of no return (it ran nothing:
    never ``committing_at``, no execution recorded) as approved again, executable within the same approvals."""
    if change.state not in ACTION_STATES["reopen_cancelled"]:
        return state_refusal(change, "reopen_cancelled")
    if job.committing_at is not None or change.execution_id is not None:
        return Allowed(
            False,
            f"Job #{job.pk} passed its point of no return: request #{change.pk} cannot be executed again.",
            ErrorCode.INVALID_STATE,
            {"request": change.pk, "job": job.pk},
        )
    return _OK


def can_settle(
    change: ChangeRequest, user: User, *, outcome: str = "failed", silent_for: timedelta | None = None
) -> Allowed:
    """An admin (``user``) or the system (``None``: ``reconcile_executions``) settles a request stuck executing:
    only when its job is no longer alive (the worker stopped beating for ``silent_for``, by default the heartbeat
    timeout; ``reconcile_executions --older-than`` shortens it when the operator knows the workers are gone)."""
    timeout = heartbeat_timeout() if silent_for is None else silent_for
    if user is not None and not has_role(user, Role.ADMIN):
        return Allowed(False, "Only an admin can settle a request stuck executing.", details={"request": change.pk})
    if outcome not in SETTLE_OUTCOMES:
        return Allowed(False, f"outcome must be one of {', '.join(SETTLE_OUTCOMES)}, not '{outcome}'.",
                       ErrorCode.INVALID_PARAMETER, {"parameter": "outcome"})  # fmt: skip
    if change.state not in ACTION_STATES["settle"]:
        return state_refusal(change, "settle")
    job = latest_job(change)
    if job is not None and job_is_alive(job, timeout=timeout):
        return Allowed(
            False,
            f"Request #{change.pk} is still executing: job #{job.pk} reported progress within the last "
            f"{timeout.total_seconds():.0f} s; it can be settled once it has been silent that long.",
            ErrorCode.INVALID_STATE,
            {"request": change.pk, "state": change.state, "action": "settle", "job": job.pk},
        )
    return _OK


# Jobs --------------------------------------------------------------------------------------------------------------


def heartbeat_timeout() -> timedelta:
    """How long a job may stay silent before it counts as dead (``CATALOG_JOB_HEARTBEAT_TIMEOUT_SECONDS``)."""
    return timedelta(seconds=float(getattr(settings, "CATALOG_JOB_HEARTBEAT_TIMEOUT_SECONDS", 300)))


def latest_job(change: ChangeRequest) -> Job | None:
    """The request's newest job (jobs are ordered newest first)."""
    return change.jobs.order_by("-created_at", "-pk").first()


def job_is_alive(job: Job, *, now: datetime | None = None, timeout: timedelta | None = None) -> bool:
    """A running job that beat within the timeout (the heartbeat timeout by default), or a queued one a worker may
    still pick up."""
    if job.state not in (JobState.QUEUED, JobState.RUNNING):
        return False
    return (now or timezone.now()) - _beat(job) < (heartbeat_timeout() if timeout is None else timeout)


def _beat(job: Job) -> datetime:
    return job.heartbeat_at or job.started_at or job.created_at


def can_cancel_job(job: Job, user: User) -> Allowed:
    """Cancel a queued or running job of any kind (a running one stops at its next safe point; too late once it
    started its metastore transaction or a merge's publish), or discard a failed or errored one kept for resuming:
    an admin, or the requester of the job's change request (``None``: the system)."""
    return check(
        lambda: _job_operator(job, user, "cancel"),
        lambda: (
            _OK
            if job.state in (JobState.QUEUED, JobState.RUNNING) or _resumable(job)
            else _job_refusal(job, "cancelled")
        ),
        lambda: _OK if job.cancel_requested_at is None or _resumable(job) else _job_refusal(job, "cancelled again"),
        lambda: _OK if job.committing_at is None or job.state != JobState.RUNNING else _too_late(job),
    )


def can_resume_job(job: Job, user: User) -> Allowed:
    """Queue a failed or errored job again (a Spark program skips the units it verified; an ALTER runs bound to the
    approved plan again), while its change request is still executing: an admin or the requester."""
    return check(
        lambda: _job_operator(job, user, "resume"),
        lambda: _OK if _resumable(job) else _job_refusal(job, "resumed"),
    )


def _resumable(job: Job) -> bool:
    """Failed or errored, not discarded, and its request (if any) still executing: nothing settled it. Or cancelled
    while running and kept resumable by its kind (``plan["resumable"]``: a merge stopped between copy units, whose
    journal holds them; its request still executing until it is resumed or discarded by a second cancel)."""
    if job.state == JobState.CANCELLED and job.plan.get("resumable"):
        return job.change_request is not None and job.change_request.state == ChangeRequestState.EXECUTING
    if job.state not in (JobState.FAILED, JobState.ERRORED) or job.cancel_requested_at is not None:
        return False
    return job.change_request is None or job.change_request.state == ChangeRequestState.EXECUTING


def _too_late(job: Job) -> Allowed:
    return Allowed(
        False,
        f"Job #{job.pk} passed its point of no return (its metastore transaction or publish started): it is too "
        "late to cancel it.",
        ErrorCode.INVALID_STATE,
        {"job": job.pk, "state": job.state},
    )


def _job_operator(job: Job, user: User, verb: str) -> Allowed:
    if user is None or has_role(user, Role.ADMIN):
        return _OK
    request = job.change_request
    if request is not None and user.is_authenticated and user.pk == request.requester_id:
        return _OK
    return Allowed(False, f"Only an admin or the job's requester can {verb} job #{job.pk}.", details={"job": job.pk})


# A job's state as a sentence says it: "Job #1 succeeded", "Job #2 is queued".
_JOB_STATE_PHRASES: dict[str, str] = {
    JobState.QUEUED: "is queued",
    JobState.RUNNING: "is running",
    JobState.SUCCEEDED: "succeeded",
    JobState.FAILED: "failed",
    JobState.ERRORED: "ended in an unexpected error",
    JobState.CANCELLED: "was cancelled",
}


def _job_refusal(job: Job, past: str) -> Allowed:
    phrase = _JOB_STATE_PHRASES.get(job.state, f"is {job.get_state_display().lower()}")
    if job.cancel_requested_at is not None and job.state in (JobState.FAILED, JobState.ERRORED):
        phrase += " and was discarded"
    return Allowed(
        False,
        f"Job #{job.pk} {phrase}: it cannot be {past} now.",
        ErrorCode.INVALID_STATE,
        {"job": job.pk, "state": job.state},
    )
