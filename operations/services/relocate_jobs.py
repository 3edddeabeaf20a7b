"""
Data jobs that copy or rewrite the data: an approved relocate, compact or convert (a change request, or
``hive_ddl --execute``) runs on the engine as a job of kind ``relocate``, ``compact`` or ``convert``, through the data
jobs' one runner (``data_jobs.py``).

What these kinds provide: the plan lists the files now (``relocation_copy_plan``) for the relocate (or rewrite)
program, with ``plan["staging"]`` = the new location (or, for a table moving in its partitions outside its root, each
one's new directory below it: never the live root) (nothing points at it until the swap, and the preview blocked a
destination that exists or lies outside the governed roots; a rewrite's hidden directories), so a cancel removes the
partial copies and only those; the swap is ``relocation_swap``: it checks the manifest and re-points the metastore in
one staleness-checked transaction, keeping the source until ``relocations_cleanup``.
"""

from __future__ import annotations

from typing import Any

from operations.choices import JobKind
from operations.models import Execution, Job
from operations.planners.relocate import relocation_staging
from operations.preview import Preview
from operations.services.data_jobs import DataJob, register_data_job
from operations.services.relocate import relocation_copy_plan, relocation_swap
from operations.specs import CompactFiles, ConvertFormat, Relocate

__all__ = ("DATA_JOB_KINDS", "PROGRAM", "RELOCATE")

RELOCATE = JobKind.RELOCATE
PROGRAM = "relocate"
DATA_JOB_KINDS = (JobKind.RELOCATE, JobKind.COMPACT, JobKind.CONVERT)


def _program_plan(preview: Preview) -> dict[str, Any]:
    """The relocate (or rewrite) program's plan (every file listed now) and the staging a cancel removes (the new
    location, or the new directories of partitions moving in; a rewrite's hidden directory holding its new
    directories)."""
    assert isinstance(preview.spec, Relocate | CompactFiles | ConvertFormat), "only these copy or rewrite data"
    plan = relocation_copy_plan(preview=preview)
    return {**plan, "staging": relocation_staging(preview) if isinstance(preview.spec, Relocate) else plan["staging"]}


def _ran(job: Job, manifest: dict[str, Any]) -> str:
    if job.program == "rewrite":
        return f"Rewrote {manifest.get('rows', 0)} row(s) into {manifest.get('files', 0)} file(s), verified"
    return f"Copied and verified {manifest.get('files', 0)} file(s)"


def _swapped(execution: Execution, manifest: dict[str, Any]) -> list[str]:
    lines = []
    if caught_up := manifest.get("caught_up"):
        lines.append(f"Re-listed before the swap: copied {sum(map(len, caught_up.values()))} file(s) written into "
                     f"{len(caught_up)} source(s) during the copy")  # fmt: skip
    lines.append(f"Swapped as execution #{execution.pk}; the source is kept until {execution.relocation.keep_until}")
    return lines


def _data_job(operation_kind: str) -> DataJob:
    return DataJob(
        operation_kinds=(operation_kind,), plan=_program_plan, swap=relocation_swap, swap_name="the metastore swap",
        untouched="nothing was copied or swapped", ran=_ran, swapped=_swapped,
    )  # fmt: skip


register_data_job(JobKind.RELOCATE, _data_job(Relocate.kind))
register_data_job(JobKind.COMPACT, _data_job(CompactFiles.kind))
register_data_job(JobKind.CONVERT, _data_job(ConvertFormat.kind))
