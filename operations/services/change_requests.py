"""
Change-request transitions: create, edit, submit, approve, reject, schedule, execute, cancel, revert.

Each transition moves the state with a guarded UPDATE (``WHERE state IN (expected)``), so concurrent
clicks cannot double-approve or double-execute: the loser gets ``invalid_state``. Each writes an audit
record and notifies by email after commit. Approval and execution re-preview the change and refuse a
stale one (the table changed since the preview), naming what changed.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from catalog_admin.errors import ApplicationError, ErrorCode, NotFound
from catalog_admin.selectors.metastores import get_metastore
from operations.choices import TRANSITIONS, ChangeRequestState, Decision
from operations.models import Approval, ChangeRequest, Comment, Execution
from operations.notifications import notify_transition
from operations.policy import Allowed, approval_requirement, can_approve, can_request
from operations.preview import Preview
from operations.services.alter import alter_preview
from operations.services.audit import record_audit
from operations.services.jobs import enqueue_execution
from operations.services.revert import revert_preview
from operations.specs import AlterSpec, spec_from_dict
from operations.staleness import Staleness, compare_plans, stale_preview_error

__all__ = (
    "approved_plan",
    "change_request_approve",
    "change_request_cancel",
    "change_request_comment",
    "change_request_create",
    "change_request_execute",
    "change_request_preview",
    "change_request_refresh",
    "change_request_reject",
    "change_request_revert",
    "change_request_staleness",
    "change_request_submit",
    "change_request_update",
)


def change_request_preview(request: ChangeRequest) -> Preview:
    """A fresh preview of the request's operation (the revert plan for a revert request)."""
    metastore = get_metastore(request.metastore)
    if request.revert_of_id:
        return revert_preview(execution=request.revert_of.execution)
    return alter_preview(metastore=metastore, spec=spec_from_dict(request.operation))


def change_request_staleness(request: ChangeRequest, preview: Preview | None = None) -> Staleness:
    """What differs between the plan the request stores (the one approvers see) and ``preview`` (rebuilt when
    not given)."""
    return compare_plans(approved_plan(request), preview or change_request_preview(request))


def approved_plan(request: ChangeRequest) -> dict[str, Any]:
    """The plan the request binds: its stored summary, under the fingerprint approvals were given to."""
    return {**request.preview, "fingerprint": request.fingerprint}


def change_request_create(
    *, user: AbstractBaseUser, metastore: str | None, spec: AlterSpec, reason: str = ""
) -> ChangeRequest:
    """A draft request with its preview attached (blockers are shown, not raised, until submit)."""
    _require(can_request(user))
    found = get_metastore(metastore)
    preview = alter_preview(metastore=found, spec=spec)
    with transaction.atomic():
        request = ChangeRequest.objects.create(requester=user, reason=reason, **_preview_fields(preview))
        _audit(request, user, "create", "draft", preview)
    return request


def change_request_update(
    *, request: ChangeRequest, user: AbstractBaseUser, spec: AlterSpec | None, reason: str | None
) -> ChangeRequest:
    """Edit a draft: a new statement (``None``: the same) and reason (``None``: the same), and a new preview.

    A revert request's plan comes from the execution it reverts: it is previewed again, but never given another
    operation (cancel it instead).
    """
    _require_requester(request, user, "edit")
    if request.revert_of_id:
        if spec is not None and json.loads(json.dumps(spec.as_dict())) != request.operation:
            raise ApplicationError(
                ErrorCode.INVALID_STATE,
                f"Request #{request.pk} reverts request #{request.revert_of_id}: its operation cannot be changed; "
                "cancel it instead.",
                {"request": request.pk, "state": request.state, "action": "edit"},
            )
        preview = change_request_preview(request)
    else:
        preview = alter_preview(
            metastore=get_metastore(request.metastore),
            spec=spec if spec is not None else spec_from_dict(request.operation),
        )
    reason = reason if reason is not None else request.reason
    with transaction.atomic():
        _guarded(request, ("draft",), None, reason=reason, **_preview_fields(preview))
        _audit(request, user, "edit", "draft", preview)
    return _reload(request)


def change_request_submit(*, request: ChangeRequest, user: AbstractBaseUser) -> ChangeRequest:
    """Freeze the statement and its preview fingerprint, and ask for approval."""
    _require_requester(request, user, "submit")
    preview = change_request_preview(request)
    if preview.blockers:
        _raise_blocked(preview)
    with transaction.atomic():
        _transition(request, "submit", submitted_at=timezone.now(), **_preview_fields(preview))
        _audit(request, user, "submit", "submitted", preview)
        transaction.on_commit(lambda: notify_transition(_reload(request), "submitted", user))
    return _reload(request)


def change_request_refresh(*, request: ChangeRequest, user: AbstractBaseUser) -> ChangeRequest:
    """Re-preview a submitted request whose table changed; approvals given on the old preview no longer count."""
    _require_requester(request, user, "refresh the preview of")
    preview = change_request_preview(request)
    if preview.blockers:
        _raise_blocked(preview)
    with transaction.atomic():
        _guarded(request, ("submitted", "approved"), ChangeRequestState.SUBMITTED, **_preview_fields(preview))
        # Approvals were given on the old preview: they lapse (the audit log keeps them).
        request.approvals.exclude(fingerprint=preview.fingerprint).delete()
        _audit(request, user, "refresh", "submitted", preview)
    return _reload(request)


def change_request_approve(*, request: ChangeRequest, user: AbstractBaseUser, comment: str = "") -> ChangeRequest:
    """Record an approval; the request is approved once the policy's number of approvals is reached."""
    _require(can_approve(user, requester_id=request.requester_id, database=request.database_name), request=request.pk)
    preview = _fresh_preview(request)
    with transaction.atomic():
        locked = ChangeRequest.objects.select_for_update().get(pk=request.pk)
        if locked.state != ChangeRequestState.SUBMITTED:
            raise _invalid_state(locked, "approve")
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
            _transition(locked, "approve")
            outcome = "approved"
        _audit(locked, user, "approve", outcome, preview, details={"comment": comment, "approvals": given})
        transaction.on_commit(lambda: notify_transition(_reload(request), outcome, user))
    return _reload(request)


def change_request_reject(*, request: ChangeRequest, user: AbstractBaseUser, comment: str) -> ChangeRequest:
    """Reject a submitted request (a comment saying why is required)."""
    _require(can_approve(user, requester_id=request.requester_id, database=request.database_name), request=request.pk)
    if not comment.strip():
        raise ApplicationError(ErrorCode.INVALID_PARAMETER, "Say why you reject the change.", {"field": "comment"})
    with transaction.atomic():
        _transition(request, "reject")
        Approval.objects.create(
            request=request, approver=user, decision=Decision.REJECT, comment=comment, fingerprint=request.fingerprint
        )
        _audit(request, user, "reject", "rejected", None, details={"comment": comment})
        transaction.on_commit(lambda: notify_transition(_reload(request), "rejected", user))
    return _reload(request)


def change_request_execute(
    *, request: ChangeRequest, user: AbstractBaseUser, at: datetime | None = None
) -> ChangeRequest:
    """Execute an approved request now (as a background job) or schedule it for ``at``."""
    _require_executor(request, user)
    if at is not None and at > timezone.now():
        with transaction.atomic():
            _transition(request, "schedule", scheduled_for=at)
            _audit(request, user, "schedule", "scheduled", None, details={"at": at.isoformat()})
        return _reload(request)
    preview = _fresh_preview(request)
    with transaction.atomic():
        _transition(request, "execute")
        job = enqueue_execution(request, actor=user.get_username(), preview=preview)
        _audit(request, user, "execute", "executing", None, details={"job": job.pk})
    return _reload(request)


def change_request_cancel(*, request: ChangeRequest, user: AbstractBaseUser) -> ChangeRequest:
    if user.pk != request.requester_id and not user.is_superuser:
        raise ApplicationError(ErrorCode.PERMISSION_DENIED, "Only the requester can cancel a request.")
    with transaction.atomic():
        _transition(request, "cancel")
        _audit(request, user, "cancel", "cancelled", None)
        transaction.on_commit(lambda: notify_transition(_reload(request), "cancelled", user))
    return _reload(request)


def change_request_revert(*, request: ChangeRequest, user: AbstractBaseUser, reason: str = "") -> ChangeRequest:
    """A new request that restores what ``request`` changed, from its before-image; it needs approval too."""
    _require(can_request(user))
    if request.state != ChangeRequestState.SUCCEEDED or request.execution is None:
        raise _invalid_state(request, "revert")
    if request.revert_requests.exclude(state__in=("rejected", "cancelled", "failed")).exists():
        raise ApplicationError(
            ErrorCode.INVALID_STATE, f"Request #{request.pk} already has a revert request.", {"request": request.pk}
        )
    preview = revert_preview(execution=request.execution)
    with transaction.atomic():
        revert = ChangeRequest.objects.create(
            requester=user, reason=reason or f"Revert of #{request.pk}", revert_of=request, **_preview_fields(preview)
        )
        _audit(revert, user, "create_revert", "draft", preview, details={"reverts": request.pk})
    return revert


def change_request_comment(*, request: ChangeRequest, user: AbstractBaseUser, body: str) -> Comment:
    if not body.strip():
        raise ApplicationError(ErrorCode.INVALID_PARAMETER, "A comment cannot be empty.", {"field": "body"})
    comment = Comment.objects.create(request=request, author=user, body=body.strip())
    _audit(request, user, "comment", "commented", None, details={"comment": body.strip()})
    return comment


def finish_execution(request: ChangeRequest, execution: Execution | None, error: str = "") -> None:
    """Called by the job: move the request to succeeded/failed (and its original to reverted)."""
    with transaction.atomic():
        if execution is not None and execution.state == Execution.State.SUCCEEDED:
            _transition(request, "succeed", execution=execution)
            if request.revert_of_id:
                _transition(request.revert_of, "mark_reverted")
            outcome = "succeeded"
        else:
            _transition(request, "fail", execution=execution, error=error)
            outcome = "failed"
        record_audit(
            actor="job",
            action="finish",
            outcome=outcome,
            request_id=request.pk,
            execution_id=execution.pk if execution else None,
            metastore=request.metastore,
            database_name=request.database_name,
            table_name=request.table_name,
            statement=request.statement,
            counts=execution.actual_counts if execution else {},
            details={"error": error, "duration_ms": execution.duration_ms if execution else None},
        )
        transaction.on_commit(lambda: notify_transition(_reload(request), outcome, None))


# Helpers ---------------------------------------------------------------------------------------


def _preview_fields(preview: Preview) -> dict[str, Any]:
    summary = preview.as_dict()
    needed, reasons = approval_requirement(summary)
    return {
        "metastore": preview.metastore,
        "database_name": preview.spec.target.database,
        "table_name": preview.spec.target.table,
        "statement": preview.statement,
        "operation": preview.spec.as_dict(),
        "preview": summary,
        "fingerprint": preview.fingerprint,
        "risk": preview.risk,
        "required_approvals": needed,
        "policy": {"rules": reasons, "approvals": needed},
    }


def _fresh_preview(request: ChangeRequest) -> Preview:
    """The request's plan rebuilt now (one preview); refuses it when it is not the stored plan, naming what changed."""
    preview = change_request_preview(request)
    staleness = change_request_staleness(request, preview)
    if staleness.is_stale:
        raise stale_preview_error(
            f"{request.database_name}.{request.table_name} changed since request #{request.pk} was previewed; "
            "refresh the preview before it can be approved or executed.",
            staleness,
            request=request.pk,
            previewed_diff=request.preview.get("diff", []),
            current_diff=[{"field": f, "before": b, "after": a} for f, b, a in preview.diff],
        )
    if preview.blockers:
        _raise_blocked(preview)
    return preview


def _transition(request: ChangeRequest, action: str, **fields: Any) -> None:
    allowed, target = TRANSITIONS[action]
    _guarded(request, allowed, target, **fields)


def _guarded(request: ChangeRequest, allowed: tuple[str, ...], target: str | None, **fields: Any) -> None:
    if target is not None:
        fields["state"] = target
    changed = ChangeRequest.objects.filter(pk=request.pk, state__in=allowed).update(updated_at=timezone.now(), **fields)
    if changed != 1:
        raise _invalid_state(_reload(request), target or "edit")


def _invalid_state(request: ChangeRequest, action: str) -> ApplicationError:
    return ApplicationError(
        ErrorCode.INVALID_STATE,
        f"Request #{request.pk} is {request.get_state_display().lower()}: it cannot be {_past(action)} now.",
        {"request": request.pk, "state": request.state, "action": action},
    )


def _past(action: str) -> str:
    return {"submitted": "submitted", "approve": "approved", "approved": "approved", "reject": "rejected",
            "rejected": "rejected", "execute": "executed", "executing": "executed", "cancelled": "cancelled",
            "revert": "reverted", "scheduled": "scheduled"}.get(action, f"changed ({action})")  # fmt: skip


def _require(allowed: Allowed, **details: Any) -> None:
    """Refuse with the check's own code: ``permission_denied``, or ``self_approval_forbidden`` (four eyes)."""
    if not allowed:
        raise ApplicationError(allowed.code, allowed.reason, details)


def _require_requester(request: ChangeRequest, user: AbstractBaseUser, verb: str) -> None:
    if user.pk != request.requester_id:
        raise ApplicationError(ErrorCode.PERMISSION_DENIED, f"Only the requester can {verb} request #{request.pk}.")


def _require_executor(request: ChangeRequest, user: AbstractBaseUser) -> None:
    from catalog_admin.roles import Role
    from operations.policy import has_role

    if user.pk != request.requester_id and not has_role(user, Role.ADMIN):
        raise ApplicationError(
            ErrorCode.PERMISSION_DENIED, "Only the requester or an operator (admin) can execute a request."
        )


def _raise_blocked(preview: Preview) -> None:
    first = preview.blockers[0]
    raise ApplicationError(
        ErrorCode.HIVE_RULE_VIOLATION,
        first.message,
        {"rule": first.rule, "blockers": [b.__dict__ for b in preview.blockers]},
    )


def _reload(request: ChangeRequest) -> ChangeRequest:
    found = ChangeRequest.objects.filter(pk=request.pk).first()
    if found is None:
        raise NotFound("change request", str(request.pk))
    return found


def _audit(
    request: ChangeRequest,
    user: AbstractBaseUser,
    action: str,
    outcome: str,
    preview: Preview | None,
    details: dict[str, Any] | None = None,
) -> None:
    record_audit(
        actor=user.get_username(),
        action=action,
        outcome=outcome,
        request_id=request.pk,
        metastore=request.metastore,
        database_name=request.database_name,
        table_name=request.table_name,
        statement=request.statement,
        preview_summary=preview.as_dict() if preview else {},
        details=details,
    )
