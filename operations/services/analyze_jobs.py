"""
ANALYZE on Spark: an approved ANALYZE (a change request, or ``hive_ddl --execute``) runs as a job of kind
``analyze`` through the data jobs' one runner (``data_jobs.py``), as relocate, compact and convert do.

What this kind provides: the plan lists every unit's files now (``analyze_plan``) for the analyze program, and the
swap writes the statistics it computed in one transaction (``analyze_swap``). Nothing is written to the data's
directories (the plan names no staging), so a cancel has nothing to remove: the request ends failed with nothing
swapped.
"""

from __future__ import annotations

from typing import Any

from operations.choices import JobKind
from operations.models import Execution, Job
from operations.services.analyze import analyze_plan, analyze_swap
from operations.services.data_jobs import DataJob, register_data_job
from operations.specs import AnalyzeTable

__all__ = ("ANALYZE",)

ANALYZE = JobKind.ANALYZE


def _ran(job: Job, manifest: dict[str, Any]) -> str:
    return (f"Analyzed {len(manifest.get('units', {}))} unit(s): {manifest.get('rows', 0)} row(s) in "
            f"{manifest.get('files', 0)} file(s)")  # fmt: skip


def _swapped(execution: Execution, manifest: dict[str, Any]) -> list[str]:
    return [f"Swapped the statistics as execution #{execution.pk}"]


def _result(manifest: dict[str, Any], execution: Execution) -> dict[str, Any]:
    return {**manifest, "units": len(manifest.get("units", {})), "execution": execution.pk}


register_data_job(
    ANALYZE,
    DataJob(
        operation_kinds=(AnalyzeTable.kind,), plan=lambda preview: analyze_plan(preview=preview), swap=analyze_swap,
        swap_name="the statistics swap", untouched="nothing was read or written", ran=_ran, swapped=_swapped,
        result=_result,
    ),
)  # fmt: skip
