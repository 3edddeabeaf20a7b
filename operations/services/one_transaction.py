"""
The scaffold every execution in one metastore transaction shares: an ALTER (``alter.py``), a database statement
(``database.py``) and an access-control statement (``privileges.py``). Each brings only its own transaction.

Before anything is recorded, the plan rebuilt just before must be the approved one and unblocked
(:func:`refuse_unexecutable`). Then :func:`run_execution` runs the kind's work for the recorded execution (which
writes the commit marker in its transaction) and ends it: succeeded with the counts the work returns (the moves it
journaled committed, audited, the commit marker cleared), or failed (audited; the work rolled back) raising the
``ApplicationError`` that names the execution (``details["execution"]``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.selectors.metastores import Metastore
from operations.models import DirectoryMoveRecord, Execution
from operations.rules import Finding, blocked_error
from operations.services.audit import audit_execution
from operations.services.commit_markers import clear_commit_marker
from operations.services.execution_rows import end_execution, failure_text
from operations.staleness import ComparedFields, compare_plans, stale_message, stale_preview_error

__all__ = ("Counts", "refuse_unexecutable", "run_execution")

Counts = dict[str, dict[str, int]]


class _Plan(Protocol):
    @property
    def blockers(self) -> tuple[Finding, ...]: ...

    def as_dict(self) -> dict[str, Any]: ...


def refuse_unexecutable(plan: Any, approved: dict[str, Any] | None, *, compared: ComparedFields, subject: str) -> None:
    """Refuse ``plan`` (rebuilt just before) unless it is the approved one (``approved``: the summary a change
    request's approvers saw, compared by the kind's ``compared`` fields; ``subject`` is what changed, as the refusal
    names it) and unblocked; nothing is recorded."""
    if approved is not None:
        staleness = compare_plans(approved, plan, compared)
        if staleness.is_stale:
            raise stale_preview_error(stale_message(subject, "nothing was executed", staleness=staleness), staleness)
    if plan.blockers:
        raise blocked_error(plan.blockers)


def run_execution(execution: Execution, plan: _Plan, metastore: Metastore, work: Callable[[], Counts]) -> Execution:
    """Run ``work`` (the metastore transaction of the recorded ``execution`` of ``plan``, and what follows its commit)
    and end the execution as it went (see the module); the execution, succeeded."""
    started = time.monotonic()
    try:
        counts = work()
    except Exception as exc:
        end_execution(execution, Execution.State.FAILED, started, error=failure_text(exc))
        audit_execution(execution, plan.as_dict())
        if isinstance(exc, ApplicationError):
            exc.details.setdefault("execution", execution.pk)
            raise
        raise ApplicationError(
            ErrorCode.EXECUTION_FAILED,
            f"Execution failed and was rolled back: {failure_text(exc)}",
            {"execution": execution.pk},
        ) from exc
    execution.moves.update(state=DirectoryMoveRecord.State.COMMITTED)
    end_execution(execution, Execution.State.SUCCEEDED, started, actual_counts=counts)
    audit_execution(execution, plan.as_dict())
    clear_commit_marker(metastore, execution.commit_marker)
    return execution
