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
from operations import lifecycle
from operations.choices import ChangeRequestState
from operations.lifecycle import ACTIONS
from operations.models import Approval, AuditRecord, ChangeRequest, Execution, Job
from operations.policy import Allowed, can_approve, has_role
from operations.risk import LEVELS

__all__ = (
    "ACTIONS",
    "RISKS",
    "AuditFilter",
    "ChangeRequestFilter",
    "audit_records",
    "change_request_actions",
    "get_change_request",
    "get_job",
    "inbox",
    "inbox_count",
    "latest_job_of_request",
    "list_audit",
    "list_change_requests",
    "request_history",
    "table_history",
)

RISKS = LEVELS  # the one risk model (operations.risk)
STATES = tuple(ChangeRequestState.values)
_INBOX_LIMIT = 200


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


# A stored preview can be large (hundreds of KB on a huge table): lists show none of it, so they never decode it.
_LIST_DEFERRED = ("preview",)


def _requests() -> QuerySet[ChangeRequest]:
    return ChangeRequest.objects.select_related("requester").prefetch_related(
        Prefetch("approvals", queryset=Approval.objects.select_related("approver"))
    )


def get_job(pk: int) -> Job:
    """One background job with its change request; NotFound otherwise."""
    found = Job.objects.select_related("change_request").filter(pk=pk).first()
    if found is None:
        raise NotFound("job", f"#{pk}")
    return found


def latest_job_of_request(pk: int) -> Job | None:
    """The newest job of request ``pk``. A page that shows a request with its job reads the job first: a worker ends
    the request before its job, so a job read as ended has a request that is ended too (read after it)."""
    return Job.objects.filter(change_request_id=pk).order_by("-created_at", "-pk").first()


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
    """One keyset page of requests, newest first, without their stored previews (a row shows none of it)."""
    qs = _requests().defer(*_LIST_DEFERRED)
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
    """Submitted requests waiting for ``user``'s decision: not their own, within their scope (every database the
    plan touches), not yet decided."""
    if not has_role(user, Role.APPROVER, Role.ADMIN):
        return []
    waiting = list(_waiting_for(user, _requests().defer(*_LIST_DEFERRED)).order_by("submitted_at", "id")[:_INBOX_LIMIT])
    scope = _scope_check(user)
    return [r for r in waiting if scope(r)]


def inbox_count(user: AbstractBaseUser) -> int:
    """How many requests :func:`inbox` would list (for the navigation bar)."""
    if not has_role(user, Role.APPROVER, Role.ADMIN):
        return 0
    scope = _scope_check(user)
    waiting = _waiting_for(user, ChangeRequest.objects.defer(*_LIST_DEFERRED))[:_INBOX_LIMIT]
    return sum(1 for r in waiting if scope(r))


def _waiting_for(user: AbstractBaseUser, qs: QuerySet[ChangeRequest]) -> QuerySet[ChangeRequest]:
    waiting = qs.filter(state=ChangeRequestState.SUBMITTED).exclude(requester=user).exclude(approvals__approver=user)
    return waiting.select_related("revert_of").defer("revert_of__preview")


def _scope_check(user: AbstractBaseUser) -> Callable[[ChangeRequest], bool]:
    """``request -> bool``: the policy's approval check, asked once per set of databases a plan touches."""
    decided: dict[tuple[str, ...], bool] = {}

    def allowed(request: ChangeRequest) -> bool:
        databases = lifecycle.databases_touched(request)
        if databases not in decided:
            decided[databases] = bool(can_approve(user, requester_id=request.requester_id, databases=databases))
        return decided[databases]

    return allowed


def change_request_actions(
    request: ChangeRequest, user: AbstractBaseUser, *, stale: bool = False
) -> dict[str, Allowed]:
    """Each action of :data:`ACTIONS` -> whether ``user`` may take it on ``request`` now, and why not: exactly the
    :mod:`operations.lifecycle` checks the services enforce.

    ``stale``: the table changed since the preview (approval and execution then wait for a refresh).
    """
    return {
        "edit": lifecycle.can_edit(request, user),
        "revise": lifecycle.can_revise(request, user),
        "submit": lifecycle.can_submit(request, user),
        "refresh": lifecycle.can_refresh(request, user),
        "approve": lifecycle.can_approve(request, user, stale=stale),
        "reject": lifecycle.can_reject(request, user),
        "execute": lifecycle.can_execute(request, user, stale=stale),
        "schedule": lifecycle.can_schedule(request, user, stale=stale),
        "cancel": lifecycle.can_cancel(request, user),
        "revert": lifecycle.can_revert(request, user),
        "comment": lifecycle.can_comment(request, user),
        "settle": lifecycle.can_settle(request, user),
    }


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


# Data jobs ------------------------------------------------------------------------------------------------------------
