"""The plans of merge change requests, rebuilt now: the merge preview, or the revert preview of a merge execution."""

from __future__ import annotations

from typing import Any

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.merge.preview import merge_preview
from operations.merge.request import MergeRequest
from operations.merge.revert import merge_revert_preview
from operations.merge.workflow import MERGE, MergeChange, MergeRevertChange, merge_request_from_dict
from operations.models import Execution, MergeImport
from operations.services.revert import check_not_reverted

__all__ = ("merge_change", "merge_import_of", "merge_revert_change", "request_merge_change")


def merge_change(request: MergeRequest) -> MergeChange:
    """The merge preview of ``request`` as a change request's plan."""
    return MergeChange(merge_preview(request))


def request_merge_change(
    operation: dict[str, Any], original: Execution | None = None
) -> MergeChange | MergeRevertChange:
    """A merge request's plan rebuilt from its stored operation (a revert's from the execution it reverts)."""
    if operation["kind"] == MERGE:
        return merge_change(merge_request_from_dict(operation))
    assert original is not None, "a merge revert names the execution it reverts"
    return merge_revert_change(original, include_hive_rows=bool(operation.get("include_hive_rows")))


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


def merge_import_of(execution: Execution) -> MergeImport:
    """The ``MergeImport`` a merge execution recorded (its id ranges are what a revert deletes)."""
    found = MergeImport.objects.filter(execution=execution).first()
    if found is None:
        raise ApplicationError(
            ErrorCode.INVALID_STATE,
            f"Execution #{execution.pk} recorded no merge import: there are no id ranges to revert.",
            {"execution": execution.pk},
        )
    return found
