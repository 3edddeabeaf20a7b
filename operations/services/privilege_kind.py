"""
The ``privilege`` change kind (:mod:`operations.changes`): GRANT/REVOKE, CREATE/DROP ROLE and GRANT/REVOKE ROLE as
change requests, their revert (``privilege_revert``: exactly the rows put back), and the ``privilege`` job that
executes them. A steward requests any of them; a viewer may request one thing only: SELECT for themselves on a
table or database (:func:`access_request_create`), decided by the approvers scoped to that database.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.roles import Role
from operations.changes import ChangeKind, Subject, register_change_kind
from operations.choices import JobKind
from operations.ddl.privileges import parse_privilege
from operations.models import ChangeRequest, Execution, Job
from operations.planners.privileges import PRIVILEGE_FIELDS, PrivilegePlan
from operations.policy import Allowed, can_request, has_role
from operations.privilege_specs import PRIVILEGE_KIND, PRIVILEGE_REVERT_KIND, Principal, PrivilegeSpec
from operations.services.alter_jobs import end_cancelled_request, run_request_execution
from operations.services.change_requests import (
    change_request_create,
    change_request_plan,
    change_request_submit,
)
from operations.services.jobs import JobHandle, create_job, register_job_kind
from operations.services.privileges import privilege_execute, privilege_plan, privilege_revert_plan
from operations.services.revert import check_not_reverted

__all__ = (
    "PRIVILEGE_JOB",
    "PrivilegeKind",
    "access_request_create",
    "privilege_request_create",
    "register_privilege_kind",
)

PRIVILEGE_JOB = JobKind.PRIVILEGE


def _operation(spec: PrivilegeSpec, grantor: str) -> dict[str, Any]:
    return {**spec.as_dict(), "grantor": grantor}


def _grantor(operation: Mapping[str, Any]) -> str:
    grantor = operation.get("grantor")
    if not isinstance(grantor, str) or not grantor:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER, "A privilege operation names its grantor.", {"parameter": "grantor"}
        )
    return grantor


def _spec(operation: Mapping[str, Any]) -> PrivilegeSpec:
    try:
        return PrivilegeSpec.from_dict(operation)
    except (KeyError, TypeError, ValueError) as exc:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER, f"Not a privilege operation: {exc}.", {"parameter": "operation"}
        ) from exc


def is_access_request(operation: Mapping[str, Any], user: AbstractBaseUser) -> bool:
    """SELECT granted to ``user`` themselves (as USER), WITHOUT GRANT OPTION, on one table or database."""
    try:
        spec = PrivilegeSpec.from_dict(operation)
    except (KeyError, TypeError, ValueError):
        return False
    return (
        spec.action == "grant"
        and spec.privileges == ("SELECT",)
        and not spec.option
        and not spec.columns
        and spec.principals == (Principal("USER", user.get_username()),)
        and operation.get("grantor") == user.get_username()
    )


class PrivilegeKind(ChangeKind):
    """An access-control statement on one metastore, and the revert of one (the rows it changed, put back)."""

    name = PRIVILEGE_KIND
    operation_kinds = (PRIVILEGE_KIND, PRIVILEGE_REVERT_KIND)
    compared = PRIVILEGE_FIELDS
    plan_template = "operations/inc/privilege_preview.html"
    subject_template = "operations/inc/subject_privilege.html"
    on_one_table = False

    def preview(self, metastore: str | None, operation: Mapping[str, Any]) -> PrivilegePlan:
        if operation.get("kind") == PRIVILEGE_REVERT_KIND:
            raise ApplicationError(
                ErrorCode.INVALID_PARAMETER,
                "A revert is requested from the executed request it reverts.",
                {"kind": PRIVILEGE_REVERT_KIND},
            )
        return privilege_plan(metastore, _spec(operation), grantor=_grantor(operation))

    def plan(self, request: ChangeRequest) -> PrivilegePlan:
        if request.revert_of_id:
            original = request.revert_of
            assert original is not None and original.execution is not None, "a revert request reverts an execution"
            return self.revert_plan(original.execution)
        if _grantor(request.operation) != request.requester.get_username():
            raise ApplicationError(
                ErrorCode.INVALID_STATE,
                f"Request #{request.pk} names another grantor than its requester.",
                {"request": request.pk},
            )
        return privilege_plan(request.metastore, _spec(request.operation), grantor=_grantor(request.operation))

    def request_rule(self, user: AbstractBaseUser, operation: Mapping[str, Any]) -> Allowed:
        """Stewards request any statement; a viewer only SELECT for themselves (:func:`is_access_request`)."""
        allowed = can_request(user)
        if allowed or not (has_role(user, Role.VIEWER) and is_access_request(operation, user)):
            return allowed
        return Allowed(True)

    def subject(self, plan: Any) -> Subject:
        assert isinstance(plan, PrivilegePlan), "the privilege kind plans privileges"
        if plan.reverts is not None:
            operation: dict[str, Any] = {"kind": PRIVILEGE_REVERT_KIND, "execution": plan.reverts}
        else:
            operation = _operation(plan.spec, plan.grantor)
        return Subject(
            plan.database_name, plan.table_name, operation, (plan.database_name,) if plan.database_name else ()
        )

    def revert_plan(self, execution: Execution) -> PrivilegePlan:
        check_not_reverted(execution)
        return privilege_revert_plan(execution, grantor=execution.actor)

    def job_kind(self, request: ChangeRequest) -> str:
        return PRIVILEGE_JOB


def privilege_request_create(
    *, user: Any, statement: str, metastore: str | None = None, reason: str = ""
) -> ChangeRequest:
    """A draft change request of an access-control statement, granted by ``user`` (the requester)."""
    spec = parse_privilege(statement)
    return change_request_create(
        user=user, metastore=metastore, operation=_operation(spec, user.get_username()), reason=reason
    )


def access_request_create(
    *, user: Any, metastore: str | None, database: str, table: str = "", reason: str = ""
) -> ChangeRequest:
    """A viewer's (or anyone's) request for SELECT on a table or database for themselves, submitted for approval by
    the approvers scoped to that database."""
    spec = PrivilegeSpec(
        "grant", ("SELECT",), database.strip().lower(), table.strip().lower(), (Principal("USER", user.get_username()),)
    )
    request = change_request_create(
        user=user,
        metastore=metastore,
        operation=_operation(spec, user.get_username()),
        reason=reason or f"{user.get_username()} asks to read {spec.object_label}",
    )
    if not request.preview.get("blockers"):
        request = change_request_submit(request=request, user=user)
    return request


def run_privilege(handle: JobHandle) -> None:
    """Execute the request's plan: rebuilt by the worker and bound to the approved one."""
    run_request_execution(handle, plan_of=_plan, execute=privilege_execute)


def _plan(request: ChangeRequest) -> PrivilegePlan:
    plan = change_request_plan(request)
    assert isinstance(plan, PrivilegePlan), f"request #{request.pk} is not an access-control statement"
    return plan


def enqueue_privilege(request: ChangeRequest, actor: str) -> Job:
    return create_job(kind=PRIVILEGE_JOB, actor=actor, change_request=request)


def register_privilege_kind() -> None:
    """Register the change kind and its job (``OperationsConfig.ready``)."""
    register_change_kind(PrivilegeKind())
    register_job_kind(PRIVILEGE_JOB, run_privilege, enqueue=enqueue_privilege, discard=end_cancelled_request)
