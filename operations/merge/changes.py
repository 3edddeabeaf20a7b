"""
The ``merge`` and ``merge_revert`` change kinds (:mod:`operations.changes`): the plans of merge change requests,
rebuilt now (the merge preview, or the revert preview of a merge execution), and the jobs that run them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.changes import ChangeKind, Subject, register_change_kind
from operations.merge.preview import merge_preview
from operations.merge.request import MergeRequest
from operations.merge.revert import merge_revert_preview
from operations.merge.workflow import (
    MERGE,
    MERGE_FIELDS,
    MERGE_REVERT,
    MergeChange,
    MergeRevertChange,
    merge_import_of,
    merge_request_from_dict,
)
from operations.models import ChangeRequest, Execution
from operations.services.revert import check_not_reverted

__all__ = (
    "MergeKind",
    "MergeRevertKind",
    "merge_change",
    "merge_revert_change",
    "register_merge_kinds",
)


def merge_change(request: MergeRequest) -> MergeChange:
    """The merge preview of ``request`` as a change request's plan."""
    return MergeChange(merge_preview(request))


def merge_revert_change(execution: Execution, *, include_hive_rows: bool = False) -> MergeRevertChange:
    """The revert of a merge execution as a plan (``merge_revert_preview`` of its import); refused, with the reason,
    for an execution that did not succeed or has no recorded import."""
    if execution.state not in (Execution.State.SUCCEEDED, Execution.State.RECONCILED):
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"Execution #{execution.pk} is {execution.state}: only a successful execution can be reverted.",
            {"execution": execution.pk},
        )
    check_not_reverted(execution)
    revert = merge_revert_preview(merge_import_of(execution))
    return MergeRevertChange(
        execution_id=execution.pk,
        metastore=execution.metastore,
        database_name=execution.database_name,
        original_statement=execution.statement,
        revert=revert,
        include_hive_rows=include_hive_rows,
    )


class _MergeKinds(ChangeKind):
    """What a merge and its revert share: on whole databases of the target, compared by :data:`MERGE_FIELDS`, never
    given an ALTER statement."""

    compared = MERGE_FIELDS
    subject_template = "operations/inc/subject_merge.html"
    on_one_table = False

    def replan(self, request: ChangeRequest, operation: Mapping[str, Any] | None) -> MergeChange | MergeRevertChange:
        if operation is not None:
            raise ApplicationError(
                ErrorCode.INVALID_PARAMETER,
                "A merge request carries a merge, not an ALTER statement; cancel it and preview a new merge instead.",
                {"parameter": "statement"},
            )
        return self.plan(request)

    def subject(self, plan: Any) -> Subject:
        assert isinstance(plan, MergeChange | MergeRevertChange), "a merge kind plans merges"
        return Subject(plan.database_name, plan.table_name, plan.operation)

    def revert_plan(self, execution: Execution) -> MergeRevertChange:
        return merge_revert_change(execution)


class MergeKind(_MergeKinds):
    """Databases of one metastore imported into another (the request is on the target)."""

    name = MERGE
    operation_kinds = (MERGE,)
    plan_template = "operations/inc/merge_preview.html"

    def preview(self, metastore: str | None, operation: Mapping[str, Any]) -> MergeChange:
        return merge_change(merge_request_from_dict(dict(operation)))

    def plan(self, request: ChangeRequest) -> MergeChange:
        return merge_change(merge_request_from_dict(request.operation))

    def job_kind(self, request: ChangeRequest) -> str:
        return MERGE


class MergeRevertKind(_MergeKinds):
    """The rows a merge execution imported, deleted (a revert request of a merge request)."""

    name = MERGE_REVERT
    operation_kinds = (MERGE_REVERT,)
    plan_template = "operations/inc/merge_revert_preview.html"

    def preview(self, metastore: str | None, operation: Mapping[str, Any]) -> MergeRevertChange:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            "A merge's revert is requested from the merge request it reverts, not created on its own.",
            {"kind": MERGE_REVERT},
        )

    def plan(self, request: ChangeRequest) -> MergeRevertChange:
        original = request.revert_of.execution if request.revert_of is not None else None
        if original is None:
            raise ApplicationError(
                ErrorCode.INVALID_STATE,
                f"Request #{request.pk} reverts a merge but names no execution to revert.",
                {"request": request.pk},
            )
        return merge_revert_change(original, include_hive_rows=bool(request.operation.get("include_hive_rows")))

    def revert_plan(self, execution: Execution) -> MergeRevertChange:
        raise ApplicationError(
            ErrorCode.INVALID_STATE,
            f"Execution #{execution.pk} reverted a merge: it cannot be reverted in turn; merge the databases again.",
            {"execution": execution.pk},
        )

    def job_kind(self, request: ChangeRequest) -> str:
        return MERGE_REVERT


def register_merge_kinds() -> None:
    """Register the merge change kinds (``OperationsConfig.ready``); ``operations.merge.jobs`` registers their jobs."""
    register_change_kind(MergeKind())
    register_change_kind(MergeRevertKind())
