"""
The ``database`` change kind (:mod:`operations.changes`, issue 27): ``CREATE DATABASE``, ``ALTER DATABASE`` and
``DROP DATABASE … RESTRICT``, and the revert of any of them. Its plans are :class:`DatabasePlan` (planners in
``operations/planners/databases/``), its subject a database (no table), its job the ``database`` job
(``services/database_jobs.py``), which runs ``database_execute``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.selectors.metastores import get_metastore
from operations.changes import ChangeKind, Subject, register_change_kind
from operations.choices import JobKind
from operations.database_specs import DATABASE_SPEC_KINDS, RevertDatabase, database_spec_from_dict
from operations.models import ChangeRequest, Execution
from operations.planners.databases import DATABASE_FIELDS, DatabasePlan, plan_database, plan_database_revert_of
from operations.planners.databases.state import read_database_state
from operations.services.revert import check_not_reverted

__all__ = ("DatabaseKind", "database_plan", "database_revert_plan", "register_database_kind")


def database_plan(metastore: str | None, operation: Mapping[str, Any]) -> DatabasePlan:
    """The plan of a database ``operation`` (a spec's ``as_dict()`` or an API payload) on ``metastore``; a malformed
    operation is refused as ``invalid_parameter`` naming what is wrong."""
    if operation.get("kind") == RevertDatabase.kind:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            "A revert is requested from the executed request it reverts, not written as an operation.",
            {"kind": RevertDatabase.kind},
        )
    try:
        spec = database_spec_from_dict(dict(operation))
    except (TypeError, ValueError) as exc:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"operation is not a valid {operation.get('kind')} operation ({exc}).",
            {"parameter": "operation"},
        ) from exc
    return plan_database(get_metastore(metastore), spec)


def database_revert_plan(execution: Execution) -> DatabasePlan:
    """The plan undoing ``execution`` (a database statement that succeeded and was not reverted)."""
    kind = (execution.operation or {}).get("kind")
    if kind == RevertDatabase.kind:
        raise ApplicationError(
            ErrorCode.INVALID_STATE,
            f"Execution #{execution.pk} reverted a database statement; "
            "write the statement again instead of reverting the revert.",
            {"execution": execution.pk},
        )
    if execution.state not in (Execution.State.SUCCEEDED, Execution.State.RECONCILED):
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"Execution #{execution.pk} is {execution.state}: only a successful execution can be reverted.",
            {"execution": execution.pk},
        )
    if (execution.before_image or {}).get("noop"):
        raise ApplicationError(
            ErrorCode.INVALID_STATE,
            f"Execution #{execution.pk} changed nothing (IF [NOT] EXISTS): there is nothing to revert.",
            {"execution": execution.pk},
        )
    check_not_reverted(execution)
    return plan_database_revert_of(
        get_metastore(execution.metastore),
        execution_id=execution.pk,
        kind=str(kind),
        image=execution.read_before_image(),
    )


class DatabaseKind(ChangeKind):
    """A statement about one database, and the revert of one."""

    name = "database"
    operation_kinds = tuple(sorted(DATABASE_SPEC_KINDS))
    compared = DATABASE_FIELDS
    plan_template = "operations/inc/database_plan.html"
    subject_template = "operations/inc/subject_database.html"
    on_one_table = False

    def preview(self, metastore: str | None, operation: Mapping[str, Any]) -> DatabasePlan:
        return database_plan(metastore, operation)

    def plan(self, request: ChangeRequest) -> DatabasePlan:
        if request.revert_of_id:
            original = request.revert_of
            assert original is not None and original.execution is not None, "a revert request reverts an execution"
            return database_revert_plan(original.execution)
        return database_plan(request.metastore, request.operation)

    def state_fingerprint(self, request: ChangeRequest) -> str | None:
        if request.revert_of_id:
            return None
        try:
            state = read_database_state(get_metastore(request.metastore), str(request.operation["name"]))
        except (ApplicationError, KeyError):
            return None
        return state.fingerprint if state is not None else "absent"

    def subject(self, plan: Any) -> Subject:
        assert isinstance(plan, DatabasePlan), "the database kind plans database statements"
        return Subject(plan.database, "", plan.spec.as_dict(), (plan.database,))

    def revert_plan(self, execution: Execution) -> DatabasePlan:
        return database_revert_plan(execution)

    def job_kind(self, request: ChangeRequest) -> str:
        return JobKind.DATABASE


def register_database_kind() -> None:
    """Register the ``database`` change kind (``OperationsConfig.ready``)."""
    register_change_kind(DatabaseKind())
