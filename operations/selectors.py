"""
Read-only queries of the change-request pages.

Lists of requests and of audit records (validated filters, keyset pages newest first), the approver's inbox,
the audit trail of one request or of one table, and which actions a user may take on a request: each action
maps to an :class:`~operations.policy.Allowed`, so the page can show a disabled button *with its reason*, in
the same words the services (and therefore the API) refuse with.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Prefetch, Q, QuerySet

from catalog_admin.errors import ApplicationError, ErrorCode, NotFound
from catalog_admin.roles import Role
from catalog_admin.selectors.pagination import Page, keyset_page
from operations.choices import TRANSITIONS, ChangeRequestState, Decision
from operations.models import Approval, AuditRecord, ChangeRequest, Execution
from operations.policy import Allowed, can_approve, can_request, has_role

__all__ = (
    "ACTIONS",
    "RISKS",
    "AuditFilter",
    "ChangeRequestFilter",
    "audit_records",
    "change_request_actions",
    "get_change_request",
    "inbox",
    "inbox_count",
    "list_audit",
    "list_change_requests",
    "request_history",
    "table_history",
)

RISKS = ("low", "medium", "high")
ACTIONS = ("edit", "submit", "approve", "reject", "execute", "schedule", "cancel", "refresh", "revert", "comment")
STATES = tuple(ChangeRequestState.values)
_INBOX_LIMIT = 200
_PAST = {"submit": "submitted", "approve": "approved", "reject": "rejected", "execute": "executed",
         "schedule": "scheduled", "cancel": "cancelled", "refresh": "re-previewed", "edit": "edited",
         "revert": "reverted"}  # fmt: skip


# Change requests ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChangeRequestFilter:
    """What the request list was asked for; validated on construction (400 with the parameter named)."""

    state: str = ""
    metastore: str = ""
    database: str = ""
    table: str = ""
    requester: str = ""
    risk: str = ""

    def __post_init__(self) -> None:
        if self.state and self.state not in STATES:
            raise _invalid("state", f"state must be one of {', '.join(STATES)}, not '{self.state}'.")
        if self.risk and self.risk not in RISKS:
            raise _invalid("risk", f"risk must be one of {', '.join(RISKS)}, not '{self.risk}'.")

    @classmethod
    def from_params(cls, params: Any, **fixed: str) -> ChangeRequestFilter:
        """Build from query parameters (a QueryDict or dict); ``fixed`` values override them."""
        values = {name: params.get(name, "").strip() for name in cls.__dataclass_fields__}
        return cls(**{**values, **fixed})

    @property
    def is_empty(self) -> bool:
        return not any(getattr(self, name) for name in self.__dataclass_fields__)


def _requests() -> QuerySet[ChangeRequest]:
    return ChangeRequest.objects.select_related("requester").prefetch_related(
        Prefetch("approvals", queryset=Approval.objects.select_related("approver"))
    )


def get_change_request(pk: int) -> ChangeRequest:
    """One request with its requester, approvals, comments, execution and revert link; NotFound otherwise."""
    found = (
        _requests()
        .select_related("execution", "revert_of")
        .prefetch_related("comments__author", "revert_requests")
        .filter(pk=pk)
        .first()
    )
    if found is None:
        raise NotFound("change request", f"#{pk}")
    return found


def list_change_requests(filters: ChangeRequestFilter, *, cursor: str = "", size: int = 50) -> Page[ChangeRequest]:
    """One keyset page of requests, newest first."""
    qs = _requests()
    if filters.state:
        qs = qs.filter(state=filters.state)
    if filters.metastore:
        qs = qs.filter(metastore=filters.metastore)
    if filters.database:
        qs = qs.filter(database_name=filters.database)
    if filters.table:
        qs = qs.filter(table_name__icontains=filters.table)
    if filters.requester:
        qs = qs.filter(requester__username=filters.requester)
    if filters.risk:
        qs = qs.filter(risk=filters.risk)
    return _keyset_page(qs, cursor, size)


def inbox(user: AbstractBaseUser) -> list[ChangeRequest]:
    """Submitted requests waiting for ``user``'s decision: not their own, within their scope, not yet decided."""
    if not has_role(user, Role.APPROVER, Role.ADMIN):
        return []
    waiting = list(_waiting_for(user, _requests()).order_by("submitted_at", "id")[:_INBOX_LIMIT])
    scope = _scope_check(user)
    return [r for r in waiting if scope(r.database_name, r.requester_id)]


def inbox_count(user: AbstractBaseUser) -> int:
    """How many requests :func:`inbox` would list (for the navigation bar)."""
    if not has_role(user, Role.APPROVER, Role.ADMIN):
        return 0
    rows = _waiting_for(user, ChangeRequest.objects.all()).values_list("database_name", "requester_id")[:_INBOX_LIMIT]
    scope = _scope_check(user)
    return sum(1 for database, requester in rows if scope(database, requester))


def _waiting_for(user: AbstractBaseUser, qs: QuerySet[ChangeRequest]) -> QuerySet[ChangeRequest]:
    return qs.filter(state=ChangeRequestState.SUBMITTED).exclude(requester=user).exclude(approvals__approver=user)


def _scope_check(user: AbstractBaseUser) -> Callable[[str, int], bool]:
    """``(database, requester_id) -> bool``: the policy's approval check, asked once per database."""
    decided: dict[str, bool] = {}

    def allowed(database: str, requester_id: int) -> bool:
        if database not in decided:
            decided[database] = bool(can_approve(user, requester_id=requester_id, database=database))
        return decided[database]

    return allowed


def change_request_actions(
    request: ChangeRequest, user: AbstractBaseUser, *, stale: bool = False
) -> dict[str, Allowed]:
    """Each action of :data:`ACTIONS` -> whether ``user`` may take it on ``request`` now, and why not.

    ``stale``: the table changed since the preview (approval and execution then wait for a refresh).
    """
    pk, state = request.pk, request.state
    is_requester = user.is_authenticated and user.pk == request.requester_id
    decided = any(a.approver_id == user.pk for a in request.approvals.all()) if user.is_authenticated else False

    def requester_only(verb: str) -> Allowed:
        return Allowed(True) if is_requester else Allowed(False, f"Only the requester can {verb} request #{pk}.")

    def in_state(action: str, *states: str) -> Allowed:
        allowed = states or TRANSITIONS[action][0]
        return Allowed(True) if state in allowed else Allowed(False, _state_reason(request, action))

    def first_refusal(*checks: Allowed) -> Allowed:
        return next((check for check in checks if not check), Allowed(True))

    approver = can_approve(user, requester_id=request.requester_id, database=request.database_name)
    executor = (
        Allowed(True)
        if is_requester or has_role(user, Role.ADMIN)
        else Allowed(False, "Only the requester or an operator (admin) can execute a request.")
    )
    not_stale = Allowed(False, _stale_reason(request)) if stale else Allowed(True)
    blocked = request.preview.get("blockers") or []
    unblocked = Allowed(False, _blocked_reason(blocked[0])) if blocked else Allowed(True)
    undecided = Allowed(False, f"You already decided on request #{pk}.") if decided else Allowed(True)
    canceller = (
        Allowed(True)
        if is_requester or user.is_superuser
        else Allowed(False, "Only the requester can cancel a request.")
    )
    planned = Allowed(True)
    if request.revert_of_id and state == ChangeRequestState.DRAFT:
        planned = Allowed(
            False,
            f"Request #{pk} reverts execution #{_execution_of(request)}: its plan comes from that execution; "
            "cancel it and request the revert again instead.",
        )
    return {
        "edit": first_refusal(requester_only("edit"), in_state("edit", ChangeRequestState.DRAFT), planned),
        "submit": first_refusal(requester_only("submit"), in_state("submit"), unblocked),
        "approve": first_refusal(approver, in_state("approve"), undecided, not_stale),
        "reject": first_refusal(approver, in_state("reject"), undecided),
        "execute": first_refusal(executor, _execute_state(request), not_stale),
        "schedule": first_refusal(executor, _execute_state(request, schedule=True), not_stale),
        "cancel": first_refusal(canceller, in_state("cancel")),
        "refresh": first_refusal(
            requester_only("refresh the preview of"),
            in_state("refresh", ChangeRequestState.DRAFT, ChangeRequestState.SUBMITTED, ChangeRequestState.APPROVED),
            Allowed(True) if stale else Allowed(False, "The preview is up to date."),
            planned,
        ),
        "revert": first_refusal(can_request(user), _revert_state(request)),
        "comment": Allowed(True) if user.is_authenticated else Allowed(False, "Sign in to comment."),
    }


def _stale_reason(request: ChangeRequest) -> str:
    """The services' ``stale_preview`` wording."""
    return (
        f"{request.database_name}.{request.table_name} changed since request #{request.pk} was previewed; "
        "refresh the preview before it can be approved or executed."
    )


def _state_reason(request: ChangeRequest, action: str) -> str:
    """The services' ``invalid_state`` wording."""
    return (
        f"Request #{request.pk} is {request.get_state_display().lower()}: it cannot be {_PAST.get(action, action)} now."
    )


def _execute_state(request: ChangeRequest, *, schedule: bool = False) -> Allowed:
    action = "schedule" if schedule else "execute"
    if request.state in TRANSITIONS[action][0]:
        return Allowed(True)
    if request.state == ChangeRequestState.SUBMITTED:
        given = sum(1 for a in request.approvals.all() if a.decision == Decision.APPROVE)
        return Allowed(
            False,
            f"Request #{request.pk} is waiting for approval: {given} of {request.required_approvals} "
            f"approval{'s' if request.required_approvals != 1 else ''} given.",
        )
    return Allowed(False, _state_reason(request, action))


def _revert_state(request: ChangeRequest) -> Allowed:
    if request.state != ChangeRequestState.SUCCEEDED or request.execution_id is None:
        return Allowed(False, _state_reason(request, "revert"))
    if request.revert_requests.exclude(state__in=("rejected", "cancelled", "failed")).exists():
        return Allowed(False, f"Request #{request.pk} already has a revert request.")
    return Allowed(True)


def _execution_of(request: ChangeRequest) -> str:
    return str(request.revert_of.execution_id) if request.revert_of_id else "?"


def _blocked_reason(blocker: dict[str, Any]) -> str:
    return f"Blocked by Hive rule {blocker.get('rule', '?')}: {blocker.get('message', '')}"


# Audit -------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditFilter:
    """What the audit log was asked for; validated on construction."""

    actor: str = ""
    action: str = ""
    outcome: str = ""
    metastore: str = ""
    database: str = ""
    table: str = ""
    request: int | None = None

    @classmethod
    def from_params(cls, params: Any) -> AuditFilter:
        raw = params.get("request", "").strip().lstrip("#")
        if raw and not raw.isdigit():
            raise _invalid("request", f"request must be a change request number, not '{raw}'.")
        text = {name: params.get(name, "").strip() for name in cls.__dataclass_fields__ if name != "request"}
        return cls(**text, request=int(raw) if raw else None)


def audit_records(filters: AuditFilter) -> QuerySet[AuditRecord]:
    """Every audit record matching ``filters``, oldest first (the export's order: the hash chain's)."""
    qs = AuditRecord.objects.all()
    for name, field in (("actor", "actor"), ("action", "action"), ("outcome", "outcome"), ("metastore", "metastore"),
                        ("database", "database_name"), ("table", "table_name")):  # fmt: skip
        if getattr(filters, name):
            qs = qs.filter(**{field: getattr(filters, name)})
    if filters.request is not None:
        executions = Execution.objects.filter(change_request__pk=filters.request).values("pk")
        qs = qs.filter(Q(request_id_ref=filters.request) | Q(execution_id_ref__in=executions))
    return qs.order_by("id")


def list_audit(filters: AuditFilter, *, cursor: str = "", size: int = 50) -> Page[AuditRecord]:
    """One keyset page of audit records, newest first."""
    return _keyset_page(audit_records(filters), cursor, size)


def request_history(request: ChangeRequest) -> list[AuditRecord]:
    """The audit trail of one request, oldest first: its transitions and its execution's own record."""
    match = Q(request_id_ref=request.pk)
    if request.execution_id is not None:
        match |= Q(execution_id_ref=request.execution_id)
    return list(AuditRecord.objects.filter(match).order_by("id"))


def table_history(metastore: Any, database: str, table: str, *, limit: int = 50) -> list[AuditRecord]:
    """The latest audit records of one table (``metastore``: a Metastore or its name), newest first.

    A table renamed to this name brings the records of that rename (they name the table it was renamed from).
    """
    name = getattr(metastore, "name", metastore)
    renamed_in = {"metastore": name, "operation__kind": "rename_table", "operation__new__database": database,
                  "operation__new__table": table}  # fmt: skip
    requests = ChangeRequest.objects.filter(**renamed_in).values("pk")
    executions = Execution.objects.filter(**renamed_in).values("pk")
    match = Q(metastore=name, database_name=database, table_name=table)
    match |= Q(request_id_ref__in=requests) | Q(execution_id_ref__in=executions)
    return list(AuditRecord.objects.filter(match).order_by("-id")[:limit])


# Helpers -----------------------------------------------------------------------------------------------------------


def _keyset_page(qs: QuerySet, cursor: str, size: int) -> Page:
    """Newest first: a keyset page over the primary key, descending."""
    return keyset_page(qs, keys=("pk",), types=(int,), cursor=cursor, size=size, descending=True)


def _invalid(parameter: str, message: str) -> ApplicationError:
    return ApplicationError(ErrorCode.INVALID_PARAMETER, message, {"parameter": parameter})
