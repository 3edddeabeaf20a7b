"""
Change-request transitions: create, edit, submit, refresh, approve, reject, revise, schedule, execute, cancel,
revert, comment; the scheduler's start, the job's finish, and settling a request whose job died.

Each service first asks :mod:`operations.lifecycle` (the same ``can_<action>`` the pages and the API explain
with) and refuses with its code and words. Each transition moves the state with a guarded UPDATE
(``WHERE state IN (expected)``, from :data:`operations.choices.TRANSITIONS`), so concurrent clicks cannot
double-approve or double-execute: the loser gets ``invalid_state``. Each writes an audit record and notifies by
email after commit. Approval and execution re-preview the change and refuse a stale one (the table changed
since the preview), naming what changed.

Every plan comes from the request's change kind (:mod:`operations.changes`: an ALTER, a data job, a merge, a
revert); nothing here names a kind.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from catalog_admin.errors import ApplicationError, ErrorCode, NotFound
from operations import lifecycle
from operations.changes import ChangeKind, Plan, change_kind
from operations.choices import ACTION_STATES, TRANSITIONS, ChangeRequestState, Decision, JobState
from operations.models import Approval, ChangeRequest, Comment, Execution, Job
from operations.notifications import notify_transition
from operations.policy import Allowed, approval_requirement, can_request, rule_matches
from operations.preview import Preview
from operations.rules import blocked_error
from operations.services.audit import record_audit
from operations.services.jobs import enqueue_execution, schedule_due_check, settle_job
from operations.services.reconcile import ACTOR as RECONCILE_ACTOR
from operations.services.refusals import refusals_audited
from operations.specs import AlterSpec
from operations.staleness import Staleness, stale_preview_error

__all__ = (
    "approved_plan",
    "change_request_approve",
    "change_request_cancel",
    "change_request_comment",
    "change_request_create",
    "change_request_execute",
    "change_request_plan",
    "change_request_plan_holds",
    "change_request_preview",
    "change_request_refresh",
    "change_request_reject",
    "change_request_revert",
    "change_request_revise",
    "change_request_staleness",
    "change_request_start",
    "change_request_submit",
    "change_request_update",
    "finish_execution",
    "settle_stuck_request",
)


def change_request_plan(request: ChangeRequest) -> Plan:
    """The request's plan rebuilt now, by its change kind (a revert request's from the execution it reverts)."""
    return change_kind(request.operation).plan(request)


def change_request_preview(request: ChangeRequest) -> Preview:
    """The plan of a request on one table (an ALTER, a data job, their revert) rebuilt now, as the ALTER and data
    job runners read it."""
    plan = change_request_plan(request)
    assert isinstance(plan, Preview), f"request #{request.pk} does not change one table"
    return plan


def change_request_staleness(request: ChangeRequest, preview: Plan | None = None) -> Staleness:
    """What differs between the plan the request stores (the one approvers see) and ``preview`` (rebuilt when
    not given), compared by the request's change kind."""
    return change_kind(request.operation).staleness(approved_plan(request), preview or change_request_plan(request))


def change_request_plan_holds(request: ChangeRequest) -> bool:
    """Whether the stored plan was built on the table as it is now, without rebuilding it: the table's state
    fingerprint (a few queries) equals the one the plan recorded, and the plan had no blockers. ``False`` when the
    kind has no cheap fingerprint: the caller rebuilds the plan. Execution always rebuilds and compares the plan."""
    stored = (request.preview or {}).get("state_fingerprint")
    if not stored or (request.preview or {}).get("blockers"):
        return False
    return change_kind(request.operation).state_fingerprint(request) == stored


def approved_plan(request: ChangeRequest) -> dict[str, Any]:
    """The plan the request binds: its stored summary, under the fingerprint approvals were given to."""
    return {**request.preview, "fingerprint": request.fingerprint}


@refusals_audited("create")
def change_request_create(
    *,
    user: User,
    metastore: str | None = None,
    spec: AlterSpec | None = None,
    operation: dict[str, Any] | None = None,
    reason: str = "",
) -> ChangeRequest:
    """A draft request with its preview attached (blockers are shown, not raised, until submit): of an ALTER
    ``spec``, or of any kind's ``operation`` (a merge's, on its target)."""
    operation = spec.requested_by(user.get_username()).as_dict() if spec is not None else operation
    if operation is None:
        _require(can_request(user))
        raise ApplicationError(ErrorCode.INVALID_PARAMETER, "Name the change to request.", {"parameter": "operation"})
    kind = change_kind(operation)
    allowed = kind.request_rule(user, operation)
    _require(allowed if allowed is not None else can_request(user))
    preview = kind.preview(metastore, operation)
    with transaction.atomic():
        request = ChangeRequest.objects.create(requester=user, reason=reason, **_preview_fields(kind, preview))
        _audit(request, user, "create", "draft", preview)
    return request


@refusals_audited("edit")
def change_request_update(
    *,
    request: ChangeRequest,
    user: User,
    spec: AlterSpec | None,
    reason: str | None,
    metastore: str | None = None,
) -> ChangeRequest:
    """Edit a draft: a new statement (``None``: the same) and reason (``None``: the same), and a new preview.

    ``metastore``, when given, must be the request's own: a request stays on its metastore. A revert request's
    plan comes from the execution it reverts: it is previewed again, but never given another operation (cancel it
    instead).
    """
    request = _reload(request)  # the checks read the request as it is now
    operation = spec.requested_by(request.requester.get_username()).as_dict() if spec is not None else None
    replans = operation is not None and json.loads(json.dumps(operation)) != request.operation
    _require(lifecycle.can_edit(request, user, replans=replans))
    _require_same_metastore(request, metastore)
    kind = change_kind(request.operation)
    preview = kind.replan(request, operation if replans else None)
    reason = reason if reason is not None else request.reason
    with transaction.atomic():
        _guarded(request, "edit", reason=reason, **_preview_fields(kind, preview))
        _audit(request, user, "edit", "draft", preview)
    return _reload(request)


@refusals_audited("submit")
def change_request_submit(*, request: ChangeRequest, user: User) -> ChangeRequest:
    """Freeze the statement and its preview fingerprint, and ask for approval."""
    request = _reload(request)  # the checks read the request as it is now
    _require(lifecycle.can_submit(request, user))
    kind = change_kind(request.operation)
    if change_request_plan_holds(request):  # the draft's plan, built on the table as it still is
        preview: Plan | Mapping[str, Any] = request.preview
        fields: dict[str, Any] = {}
    else:
        preview = kind.plan(request)
        if preview.blockers:
            raise blocked_error(preview.blockers)
        fields = _preview_fields(kind, preview)
    with transaction.atomic():
        _guarded(request, "submit", submitted_at=timezone.now(), **fields)
        _audit(request, user, "submit", "submitted", preview)
        notify_transition(_reload(request), "submitted", user)
    return _reload(request)


@refusals_audited("refresh")
def change_request_refresh(*, request: ChangeRequest, user: User) -> ChangeRequest:
    """Preview an open request again (a draft, submitted or approved).

    A draft simply takes the new preview. When the preview of a submitted or approved request did not change, it
    keeps its state and approvals; when it changed, it goes back to ``submitted`` and every approval lapses (the
    audit log keeps them): the approvers decide again on the new preview.
    """
    request = _reload(request)  # the checks read the request as it is now
    _require(lifecycle.can_refresh(request, user))
    kind = change_kind(request.operation)
    preview = kind.plan(request)
    if request.state != ChangeRequestState.DRAFT and preview.blockers:
        raise blocked_error(preview.blockers)
    changed = preview.fingerprint != request.fingerprint
    with transaction.atomic():
        if request.state == ChangeRequestState.DRAFT or not changed:
            _guarded(request, "refresh", **_preview_fields(kind, preview))
            outcome = _reload(request).state if changed else "unchanged"
        else:
            _guarded(request, "reopen", **_preview_fields(kind, preview))
            lapsed = request.approvals.filter(decision=Decision.APPROVE).delete()[0]
            outcome = "submitted"
        details = {"changed": changed, "lapsed_approvals": lapsed} if outcome == "submitted" else {"changed": changed}
        _audit(request, user, "refresh", outcome, preview, details=details)
    return _reload(request)


@refusals_audited("approve")
def change_request_approve(*, request: ChangeRequest, user: User, comment: str = "") -> ChangeRequest:
    """Record an approval; the request is approved once the policy's number of approvals is reached."""
    request = _reload(request)  # the checks read the request as it is now
    _require(lifecycle.can_approve(request, user))
    # The approval binds the stored plan (its fingerprint); it is rebuilt only when the table changed since it was
    # built (to say what changed). Execution rebuilds it in any case and refuses it when it differs.
    preview = request.preview if change_request_plan_holds(request) else _fresh_preview(request)
    with transaction.atomic():
        locked = ChangeRequest.objects.select_for_update().get(pk=request.pk)
        _require(lifecycle.can_approve(locked, user))
        try:
            with transaction.atomic():
                Approval.objects.create(
                    request=locked, approver=user, decision=Decision.APPROVE, comment=comment,
                    fingerprint=locked.fingerprint,
                )  # fmt: skip
        except IntegrityError:
            raise ApplicationError(
                ErrorCode.INVALID_STATE, f"You already decided on request #{request.pk}.", {"request": request.pk}
            ) from None
        given = locked.approvals.filter(decision=Decision.APPROVE, fingerprint=locked.fingerprint).count()
        outcome = "approval recorded"
        if given >= locked.required_approvals:
            _guarded(locked, "approve")
            outcome = "approved"
        _audit(locked, user, "approve", outcome, preview, details={"comment": comment, "approvals": given})
        notify_transition(_reload(request), outcome, user)
    return _reload(request)


@refusals_audited("reject")
def change_request_reject(*, request: ChangeRequest, user: User, comment: str) -> ChangeRequest:
    """Reject a submitted request (a comment saying why is required)."""
    request = _reload(request)  # the checks read the request as it is now
    _require(lifecycle.can_reject(request, user))
    if not comment.strip():
        raise ApplicationError(ErrorCode.INVALID_PARAMETER, "Say why you reject the change.", {"field": "comment"})
    with transaction.atomic():
        _guarded(request, "reject")
        Approval.objects.create(
            request=request, approver=user, decision=Decision.REJECT, comment=comment, fingerprint=request.fingerprint
        )
        _audit(request, user, "reject", "rejected", None, details={"comment": comment})
        notify_transition(_reload(request), "rejected", user)
    return _reload(request)


@refusals_audited("execute")
def change_request_execute(*, request: ChangeRequest, user: User, at: datetime | None = None) -> ChangeRequest:
    """Execute an approved request now (as a background job) or schedule it for ``at``, which must be in the
    future."""
    request = _reload(request)  # the checks read the request as it is now
    if at is not None:
        _require(lifecycle.can_schedule(request, user))
        _require_future(at)
        with transaction.atomic():
            _guarded(request, "schedule", scheduled_for=at)
            _audit(request, user, "schedule", "scheduled", None, details={"at": at.isoformat()})
            schedule_due_check(_reload(request))
        return _reload(request)
    _require(lifecycle.can_execute(request, user))
    _fresh_preview(request)  # refuses a stale plan; the worker rebuilds it and binds it to the approved one again
    with transaction.atomic():
        _guarded(request, "execute", error="")  # a cancelled run's note goes with the new run
        job = enqueue_execution(request, actor=user.get_username())
        _audit(request, user, "execute", "executing", None, details={"job": job.pk})
    return _reload(request)


@refusals_audited("revise")
def change_request_revise(*, request: ChangeRequest, user: User) -> ChangeRequest:
    """The requester takes a rejected request back as a draft, to give it a new statement, reason and preview and
    submit it again. The rejections become comments on the request (the audit log keeps the decisions too), so the
    next round of approvers reads why it was rejected; approvers decide again."""
    request = _reload(request)  # the checks read the request as it is now
    _require(lifecycle.can_revise(request, user))
    with transaction.atomic():
        _guarded(request, "revise", submitted_at=None)  # a new submission, a new time
        decisions = list(request.approvals.select_related("approver"))
        Comment.objects.bulk_create(
            Comment(request=request, author=d.approver, body=f"{d.get_decision_display()} before revision: {d.comment}")
            for d in decisions
        )
        request.approvals.all().delete()
        _audit(request, user, "revise", "draft", None, details={"decisions": len(decisions)})
    return _reload(request)


@refusals_audited("cancel")
def change_request_cancel(*, request: ChangeRequest, user: User) -> ChangeRequest:
    """The requester withdraws an open request."""
    request = _reload(request)  # the checks read the request as it is now
    _require(lifecycle.can_cancel(request, user))
    with transaction.atomic():
        _guarded(request, "cancel")
        _audit(request, user, "cancel", "cancelled", None)
        notify_transition(_reload(request), "cancelled", user)
    return _reload(request)


@refusals_audited("revert")
def change_request_revert(*, request: ChangeRequest, user: User, reason: str = "") -> ChangeRequest:
    """A new request that restores what ``request`` changed, from its before-image; it needs approval too."""
    request = _reload(request)  # the checks read the request as it is now
    _require(lifecycle.can_revert(request, user))
    assert request.execution is not None, "can_revert allows only an executed request"
    kind = change_kind(request.execution.operation)
    preview = kind.revert_plan(request.execution)
    with transaction.atomic():
        revert = ChangeRequest.objects.create(
            requester=user,
            reason=reason.strip() or f"Revert of request #{request.pk}",
            revert_of=request,
            **_preview_fields(kind, preview),
        )
        _audit(revert, user, "create_revert", "draft", preview, details={"reverts": request.pk})
    return revert


@refusals_audited("comment")
def change_request_comment(*, request: ChangeRequest, user: User, body: str) -> Comment:
    """A remark on a request, in any state."""
    request = _reload(request)  # the checks read the request as it is now
    _require(lifecycle.can_comment(request, user))
    if not body.strip():
        raise ApplicationError(ErrorCode.INVALID_PARAMETER, "A comment cannot be empty.", {"field": "body"})
    comment = Comment.objects.create(request=request, author=user, body=body.strip())
    _audit(request, user, "comment", "commented", None, details={"comment": body.strip()})
    return comment


@refusals_audited("start")
def change_request_start(request: ChangeRequest) -> Job:
    """The scheduler's move of a scheduled request whose time has come to executing, with its queued job."""
    request = _reload(request)  # the checks read the request as it is now
    _require(lifecycle.can_start(request))
    with transaction.atomic():
        _guarded(request, "start")
        job = enqueue_execution(request, actor="its schedule")
        _audit(request, None, "start", "executing", None, details={"job": job.pk, "scheduled_for": _iso(request)})
    return job


def reopen_cancelled_request(request: ChangeRequest, job: Job, actor: str) -> ChangeRequest:
    """Called by a job kind's discard: ``job`` was cancelled by ``actor`` before its point of no return, so nothing
    ran; the request is approved again (its approvals kept, a schedule dropped) and says so. Executing it again
    previews it again and refuses a stale plan, as the first time. Audited."""
    request = _reload(request)
    _require(lifecycle.can_reopen_cancelled(request, job))
    note = (
        f"Job #{job.pk} was cancelled by {actor} before it changed anything: the request is approved again and can be "
        "executed once more (its plan is checked against the table again)."
    )
    with transaction.atomic():
        _guarded(request, "reopen_cancelled", scheduled_for=None, error=note)
        record_audit(
            actor=actor, action="reopen_cancelled", outcome="approved", request_id=request.pk,
            metastore=request.metastore, database_name=request.database_name, table_name=request.table_name,
            statement=request.statement, details={"job": job.pk},
        )  # fmt: skip
    return _reload(request)


def finish_execution(request: ChangeRequest, execution: Execution | None, error: str = "") -> None:
    """Called by the job: move the request to succeeded/failed (and its original to reverted)."""
    succeeded = execution is not None and execution.state == Execution.State.SUCCEEDED
    _end_execution(request, execution, "succeed" if succeeded else "fail", error, actor="job", action="finish")


@refusals_audited("settle")
def settle_stuck_request(
    request: ChangeRequest,
    user: User | None,
    outcome: str,
    reason: str,
    *,
    execution: Execution | None = None,
    silent_for: timedelta | None = None,
) -> ChangeRequest:
    """End a request stuck executing whose job is no longer alive (its worker stopped beating) as ``outcome``
    (``succeeded`` or ``failed``), with its job; audited as ``settle`` with the reason.

    ``user``: the admin who settles it, or ``None`` for ``reconcile_executions`` (which decides the outcome from the
    metastore and may pass the crashed ``execution``). Nothing is executed or moved here.
    """
    request = _reload(request)  # the checks read the request as it is now
    _require(lifecycle.can_settle(request, user, outcome=outcome, silent_for=silent_for))
    if not reason.strip():
        raise ApplicationError(ErrorCode.INVALID_PARAMETER, "Say why the request is settled.", {"field": "reason"})
    job = lifecycle.latest_job(request)
    action = "succeed" if outcome == "succeeded" else "fail"
    with transaction.atomic():
        error = "" if action == "succeed" else f"Settled as failed: {reason.strip()}"
        _end_execution(
            request,
            execution,
            f"settle_{outcome}",
            error,
            actor=user.get_username() if user is not None else RECONCILE_ACTOR,
            action="settle",
            details={"reason": reason.strip(), "job": job.pk if job else None},
        )
        if job is not None:
            state = JobState.SUCCEEDED if action == "succeed" else JobState.FAILED
            settle_job(job, state, f"Settled as {outcome}: {reason.strip()}", error=error)
    return _reload(request)


def _end_execution(
    request: ChangeRequest,
    execution: Execution | None,
    transition: str,
    error: str,
    *,
    actor: str,
    action: str,
    details: dict[str, Any] | None = None,
) -> None:
    """Move an executing request to its end state (a revert's original to reverted), audited."""
    succeeded = TRANSITIONS[transition][1] == ChangeRequestState.SUCCEEDED
    _require(lifecycle.can_succeed(request) if succeeded else lifecycle.can_fail(request))
    with transaction.atomic():
        if succeeded:
            _guarded(request, transition, execution=execution)
            if request.revert_of is not None:
                _guarded(request.revert_of, "mark_reverted")
            outcome = "succeeded"
        else:
            _guarded(request, transition, execution=execution, error=error)
            outcome = "failed"
        record_audit(
            actor=actor,
            action=action,
            outcome=outcome,
            request_id=request.pk,
            execution_id=execution.pk if execution else None,
            metastore=request.metastore,
            database_name=request.database_name,
            table_name=request.table_name,
            statement=request.statement,
            counts=execution.actual_counts if execution else {},
            details={
                "error": error,
                "duration_ms": execution.duration_ms if execution else None,
                **(details or {}),
            },
        )
        notify_transition(_reload(request), outcome, None)


# Helpers ---------------------------------------------------------------------------------------


def _preview_fields(kind: ChangeKind, preview: Plan) -> dict[str, Any]:
    """The fields a request stores of its plan (``kind``: the change kind that built it)."""
    summary = preview.as_dict()
    subject = kind.subject(preview)
    needed, reasons = approval_requirement(summary)
    matched = [match.as_dict() for match in rule_matches(summary)]
    return {
        "metastore": preview.metastore,
        "database_name": subject.database_name,
        "table_name": subject.table_name,
        "statement": preview.statement,
        "operation": subject.operation,
        "preview": summary,
        "fingerprint": preview.fingerprint,
        "risk": preview.risk,
        "required_approvals": needed,
        "policy": {
            "rules": reasons,
            "approvals": needed,
            "matched": matched,
            "databases": list(subject.databases),
        },
        "planned_at": timezone.now(),
    }


def _fresh_preview(request: ChangeRequest) -> Plan:
    """The request's plan rebuilt now (one preview); refuses it when it is not the stored plan, naming what changed."""
    preview = change_request_plan(request)
    staleness = change_request_staleness(request, preview)
    if staleness.is_stale:
        raise stale_preview_error(
            lifecycle.stale_reason(request),
            staleness,
            request=request.pk,
            previewed_diff=request.preview.get("diff", []),
            current_diff=[{"field": f, "before": b, "after": a} for f, b, a in preview.diff],
        )
    if preview.blockers:
        raise blocked_error(preview.blockers)
    return preview


def _guarded(request: ChangeRequest, action: str, **fields: Any) -> None:
    """Move ``request`` by ``action`` (a transition, or an action that keeps the state) only from the states the
    table allows; a request that moved meanwhile is refused with the lifecycle's ``invalid_state``."""
    if action in TRANSITIONS:
        sources, fields["state"] = TRANSITIONS[action]
    else:
        sources = ACTION_STATES[action]
    changed = ChangeRequest.objects.filter(pk=request.pk, state__in=sources).update(updated_at=timezone.now(), **fields)
    if changed != 1:
        _require(lifecycle.state_refusal(_reload(request), action))


def _require(allowed: Allowed) -> None:
    """Refuse with the lifecycle check's own code, words and details."""
    if not allowed:
        raise ApplicationError(allowed.code, allowed.reason, dict(allowed.details))


def _require_same_metastore(request: ChangeRequest, metastore: str | None) -> None:
    if metastore not in (None, request.metastore):
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            "A request stays on its metastore; cancel it and start a new one instead.",
            {"parameter": "metastore"},
        )


def _require_future(at: datetime) -> None:
    if at <= timezone.now():
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER, "Pick a time in the future, or execute now instead.", {"parameter": "at"}
        )


def _iso(request: ChangeRequest) -> str | None:
    return request.scheduled_for.isoformat() if request.scheduled_for else None


def _reload(request: ChangeRequest) -> ChangeRequest:
    found = ChangeRequest.objects.filter(pk=request.pk).first()
    if found is None:
        raise NotFound("change request", str(request.pk))
    return found


def _audit(
    request: ChangeRequest,
    user: User | None,
    action: str,
    outcome: str,
    preview: Plan | Mapping[str, Any] | None,
    details: dict[str, Any] | None = None,
) -> None:
    record_audit(
        actor=user.get_username() if user is not None else "scheduler",
        action=action,
        outcome=outcome,
        request_id=request.pk,
        metastore=request.metastore,
        database_name=request.database_name,
        table_name=request.table_name,
        statement=request.statement,
        preview_summary=dict(preview) if isinstance(preview, Mapping) else preview.as_dict() if preview else {},
        details=details,
    )
