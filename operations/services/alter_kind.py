"""
The ALTER change kinds (:mod:`operations.changes`): an ALTER of one table (and the revert of any execution on one
table), and the data jobs — relocate, compact (CONCATENATE) and convert (SET FILEFORMAT … WITH DATA) — ALTERs whose
preview carries a ``data_copy`` and run as jobs of their own kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.selectors.metastores import get_metastore
from operations.changes import ChangeKind, Subject, register_change_kind
from operations.choices import JobKind
from operations.models import ChangeRequest, Execution
from operations.preview import Preview
from operations.services.alter import alter_preview
from operations.services.revert import revert_preview
from operations.specs import (
    SPEC_KINDS,
    AnalyzeTable,
    CompactFiles,
    ConvertFormat,
    Relocate,
    RevertExecution,
    spec_from_dict,
)
from operations.table_state import read_table_state

__all__ = ("ALTER_JOB", "DATA_JOBS", "AlterKind", "DataJobKind", "register_alter_kinds")

ALTER_JOB = JobKind.ALTER
# A data job's operation kind -> its job kind (design.md's names).
DATA_JOBS = {
    Relocate.kind: JobKind.RELOCATE,
    CompactFiles.kind: JobKind.COMPACT,
    ConvertFormat.kind: JobKind.CONVERT,
    AnalyzeTable.kind: JobKind.ANALYZE,
}


class AlterKind(ChangeKind):
    """An ALTER of one table (every ``SPEC_KINDS`` operation but the data jobs), and a revert request of any execution
    on one table (``revert``: its plan is the execution's before-image)."""

    name = "alter"
    operation_kinds = (*sorted(set(SPEC_KINDS) - set(DATA_JOBS)), RevertExecution.kind)

    def preview(self, metastore: str | None, operation: Mapping[str, Any]) -> Preview:
        if operation.get("kind") == RevertExecution.kind:
            raise ApplicationError(
                ErrorCode.INVALID_PARAMETER,
                "A revert is requested from the executed request it reverts, not written as an operation.",
                {"kind": RevertExecution.kind},
            )
        return alter_preview(metastore=get_metastore(metastore), spec=spec_from_dict(dict(operation)))

    def plan(self, request: ChangeRequest) -> Preview:
        if request.revert_of_id:
            original = request.revert_of
            assert original is not None and original.execution is not None, "a revert request reverts an execution"
            return revert_preview(execution=original.execution)
        return alter_preview(metastore=get_metastore(request.metastore), spec=spec_from_dict(request.operation))

    def state_fingerprint(self, request: ChangeRequest) -> str | None:
        """The table's :attr:`~operations.table_state.TableState.fingerprint` now (a few queries, no plan built)."""
        if request.revert_of_id:
            return None  # its plan is the execution's before-image: rebuilt
        try:
            target = spec_from_dict(request.operation).target
            return read_table_state(get_metastore(request.metastore), target).fingerprint
        except (ApplicationError, KeyError, TypeError, ValueError):
            return None

    def subject(self, plan: Any) -> Subject:
        assert isinstance(plan, Preview), "an ALTER kind plans ALTERs"
        target = plan.spec.target
        return Subject(target.database, target.table, plan.spec.as_dict(), tuple(plan.databases))

    def revert_plan(self, execution: Execution) -> Preview:
        return revert_preview(execution=execution)

    def job_kind(self, request: ChangeRequest) -> str:
        return ALTER_JOB


class DataJobKind(AlterKind):
    """Relocate, compact and convert: ALTERs that copy or rewrite the data first (the preview's ``data_copy``), run as
    jobs of their own kind on the Spark engine."""

    name = "data_job"
    operation_kinds = tuple(DATA_JOBS)

    def job_kind(self, request: ChangeRequest) -> str:
        if not (request.preview or {}).get("data_copy"):
            return ALTER_JOB  # nothing to copy (a plan stored before data_copy existed): the metastore change alone
        return DATA_JOBS[request.operation["kind"]]


def register_alter_kinds() -> None:
    """Register the ALTER change kinds (``OperationsConfig.ready``); their job kinds register how they are queued."""
    register_change_kind(AlterKind())
    register_change_kind(DataJobKind())
