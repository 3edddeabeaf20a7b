"""
Running an approved merge (or its revert) as an audited execution, as ``alter_execute`` runs an ALTER: the plan rebuilt
just before must be the approved one, nothing runs while it is blocked, the ``Execution`` record names who, why and
what, and the audit log gets the outcome. The copy itself is ``operations.merge.execute.merge_execute``, which records
the id ranges it inserted in a ``MergeImport``; a revert is ``operations.merge.revert.merge_revert`` of that import.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.utils import timezone

from catalog_admin.errors import ApplicationError, ErrorCode
from operations.merge.engine import Elsewhere
from operations.merge.execute import merge_execute, merge_resume
from operations.merge.revert import merge_revert
from operations.merge.workflow import MERGE_FIELDS, MergeChange, MergeRevertChange, merge_import_of
from operations.models import Execution, MergeImport
from operations.rules import blocked_error
from operations.services.audit import audit_execution
from operations.staleness import compare_plans, stale_message, stale_preview_error

__all__ = ("merge_revert_run", "merge_run", "merge_run_resume")

Report = Callable[[Any], None]


def merge_run(
    change: MergeChange,
    *,
    actor: str,
    source: str,
    reason: str,
    approved: dict[str, Any] | None = None,
    report: Report = lambda event: None,
    spark: Any = None,
    elsewhere: Elsewhere | None = None,
) -> Execution:
    """Run exactly ``change`` (rebuilt just now; ``approved``: the plan a change request's approvers saw) and return
    its execution; raises the ``ApplicationError`` that stopped it (``details["execution"]`` once one was recorded)."""
    _check_runnable(change, approved)
    execution = _start(change, actor=actor, source=source, reason=reason)
    started = time.monotonic()
    try:
        merge_execute(
            change.preview.request, change.preview, report=report, spark=spark, execution=execution,
            elsewhere=elsewhere,
        )  # fmt: skip
    except Exception as exc:
        raise _failed(execution, change, started, exc) from exc
    _finish(execution, change, started, Execution.State.SUCCEEDED, actual_counts=_counts(execution.preview))
    return execution


def merge_run_resume(merge: MergeImport, *, report: Report = lambda event: None,
                     elsewhere: Elsewhere | None = None) -> Execution:  # fmt: skip
    """Continue the stopped merge ``merge`` (its completed units kept, ``merge_resume``) as the execution that
    started it, which ends succeeded or failed again; raises as :func:`merge_run`."""
    execution = merge.execution
    if execution is None:
        raise ApplicationError(
            ErrorCode.INVALID_STATE, f"Merge #{merge.pk} has no execution to continue.", {"merge": merge.pk}
        )
    execution.state, execution.error, execution.finished_at = Execution.State.RUNNING, "", None
    execution.save(update_fields=["state", "error", "finished_at"])
    recorded = _Recorded(execution)
    started = time.monotonic()
    try:
        merge_resume(merge, report=report, elsewhere=elsewhere)
    except Exception as exc:
        raise _failed(execution, recorded, started, exc) from exc
    _finish(execution, recorded, started, Execution.State.SUCCEEDED, actual_counts=_counts(execution.preview))
    return execution


class _Recorded:
    """The executed plan as its execution recorded it (what the audit of a resumed merge names)."""

    def __init__(self, execution: Execution) -> None:
        self.preview = execution.preview

    def as_dict(self) -> dict[str, Any]:
        return dict(self.preview)


Ran = MergeChange | MergeRevertChange | _Recorded


def _counts(preview: dict[str, Any]) -> dict[str, dict[str, int]]:
    return {t["table"]: {"insert": t["rows"]} for t in preview.get("tables", []) if t.get("rows")}


def merge_revert_run(
    change: MergeRevertChange, *, actor: str, source: str, reason: str, approved: dict[str, Any] | None = None
) -> Execution:
    """Delete exactly the rows the merge execution imported (``merge_revert``), as an execution that reverts it."""
    _check_runnable(change, approved)
    original = Execution.objects.get(pk=change.execution_id)
    execution = _start(change, actor=actor, source=source, reason=reason, reverts=original)
    started = time.monotonic()
    try:
        merge_revert(merge_import_of(original), include_hive_rows=change.include_hive_rows)
    except Exception as exc:
        raise _failed(execution, change, started, exc) from exc
    _finish(execution, change, started, Execution.State.SUCCEEDED)
    return execution


def _check_runnable(change: MergeChange | MergeRevertChange, approved: dict[str, Any] | None) -> None:
    if approved is not None:
        staleness = compare_plans(approved, change, MERGE_FIELDS)
        if staleness.is_stale:
            message = stale_message(
                "The metastores", "nothing was executed", since="the approved merge preview", staleness=staleness
            )
            raise stale_preview_error(message, staleness)
    if change.blockers:
        raise blocked_error(change.blockers)


def _start(
    change: MergeChange | MergeRevertChange, *, actor: str, source: str, reason: str, reverts: Execution | None = None
) -> Execution:
    return Execution.objects.create(
        metastore=change.metastore,
        database_name=change.database_name,
        table_name=change.table_name,
        statement=change.statement,
        operation=change.operation,
        preview=change.as_dict(),
        fingerprint=change.fingerprint,
        actor=actor,
        source=source,
        reason=reason,
        expected_counts={t["table"]: {"insert": t["rows"]} for t in change.as_dict().get("tables", []) if t["rows"]},
        reverts=reverts,
    )


def _failed(execution: Execution, change: Ran, started: float, exc: Exception) -> Exception:
    message = exc.message if isinstance(exc, ApplicationError) else f"{type(exc).__name__}: {exc}"
    _finish(execution, change, started, Execution.State.FAILED, error=message)
    if isinstance(exc, ApplicationError):
        exc.details.setdefault("execution", execution.pk)
        return exc
    return ApplicationError(ErrorCode.EXECUTION_FAILED, f"Merge failed: {message}", {"execution": execution.pk})


def _finish(execution: Execution, change: Ran, started: float, state: str, **fields: Any) -> None:
    """End ``execution`` (unless the core already ended it) and audit it."""
    execution.refresh_from_db()
    if execution.state == Execution.State.RUNNING:
        execution.state = state
        execution.finished_at = timezone.now()
        execution.duration_ms = int((time.monotonic() - started) * 1000)
        for name, value in fields.items():
            setattr(execution, name, value)
        execution.save()
    audit_execution(execution, change.as_dict())
