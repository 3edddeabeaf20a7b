"""
ANALYZE as a data job: the analyze program's plan (every unit's files listed now), the check of its manifest, and the
swap of the statistics it computed (``planners/analyze.py``'s statements, their :class:`Measured` placeholders filled)
through ``alter_execute``: one metastore transaction, staleness-checked against the approved plan, audited, with the
old statistics rows as the before-image (revert writes them back). Nothing is copied, so no relocation is recorded.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.locations import filesystem_for, is_hidden
from catalog_admin.selectors.metastores import get_metastore
from operations.models import Execution
from operations.planners.analyze_steps import LAST_ANALYZED
from operations.planners.data_scope import refuse_symlinks
from operations.preview import Preview
from operations.rules import blocked_error
from operations.services.alter import alter_execute
from operations.services.relocate import copy_filesystem_options
from operations.specs import AnalyzeTable
from operations.table_state import read_table_state

__all__ = ("PROGRAM", "analyze_execute", "analyze_plan", "analyze_swap", "measured_statistics", "verify_manifest")

PROGRAM = "analyze"
RunProgram = Callable[[dict[str, Any]], dict[str, Any]]


def analyze_plan(*, preview: Preview, completed: tuple[str, ...] = ()) -> dict[str, Any]:
    """The analyze program's JSON plan: every unit's visible files listed now, the table's columns and SerDe
    parameters (the program reads with them), the analyzed columns."""
    spec = preview.spec
    if not isinstance(spec, AnalyzeTable) or preview.data_copy is None:
        raise ApplicationError(ErrorCode.INVALID_PARAMETER, f"{preview.statement} is not an ANALYZE with data to "
                               "read.", {"operation": preview.spec.kind})  # fmt: skip
    state = read_table_state(get_metastore(preview.metastore), spec.target)
    types = {c.name.lower(): c.type.lower() for c in state.columns}
    units = []
    for unit in preview.data_copy.units:
        listed = filesystem_for(unit.source, preview.metastore).list_files(unit.source) or []
        refuse_symlinks(listed, PROGRAM)
        files = [{"source": f.location, "size": f.size} for f in listed if not is_hidden(f.relative)]
        units.append({"key": unit.key, "source": unit.source, "format": unit.source_format, "files": files})
    return {
        "program": PROGRAM, "metastore": preview.metastore, "statement": preview.statement,
        "fingerprint": preview.fingerprint, "units": units, "noscan": spec.noscan,
        "columns": [[c.name, c.type] for c in state.columns],
        "analyzed": [[name, types[name]] for name in preview.inverse.get("columns", [])],
        "serde": {k: v for k, v in state.serde_params.items() if v is not None},
        "filesystems": copy_filesystem_options(preview.metastore), "completed": list(completed),
    }  # fmt: skip


def verify_manifest(plan: dict[str, Any], manifest: dict[str, Any]) -> None:
    """Every unit was analyzed, over exactly the files planned; else nothing is swapped."""
    done = manifest.get("units", {})
    missing = [u["key"] for u in plan["units"] if u["key"] not in done]
    differ = [u["key"] for u in plan["units"] if u["key"] in done and done[u["key"]]["files"] != len(u["files"])]
    if missing or differ:
        raise ApplicationError(
            ErrorCode.EXECUTION_FAILED,
            f"The analysis is incomplete ({len(missing)} unit(s) not analyzed, {len(differ)} over other files; first: "
            f"{(missing or differ)[0]}); nothing was swapped.",
            {"missing": missing[:20], "files_differ": differ[:20]},
        )


def measured_statistics(manifest: dict[str, Any], now: int) -> dict[tuple[str, str], object]:
    """The values of the swap's :class:`Measured` placeholders: the basic statistics (as strings, as Hive's
    parameters are) and each analyzed column's fields, by unit; ``LAST_ANALYZED`` the swap's time in seconds."""
    measured: dict[tuple[str, str], object] = {(LAST_ANALYZED.unit, LAST_ANALYZED.stat): now}
    for key, unit in manifest["units"].items():
        measured[(key, "numFiles")] = str(unit["files"])
        measured[(key, "totalSize")] = str(unit["bytes"])
        if "rows" in unit:
            measured[(key, "numRows")] = str(unit["rows"])
            measured[(key, "rawDataSize")] = str(unit["raw_data_size"])
        for column, fields in unit.get("columns", {}).items():
            measured.update({(key, f"{column}|{field}"): value for field, value in fields.items()})
    return measured


def analyze_swap(
    *, preview: Preview, plan: dict[str, Any], manifest: dict[str, Any], actor: str, source: str, reason: str = "",
    approved: dict[str, Any] | None = None,
) -> Execution:  # fmt: skip
    """After the job: its manifest checked against the plan, the files listed again (the same count and bytes as
    the job read, else refused as stale), then the statistics written in one transaction (``alter_execute``)."""
    if preview.blockers:
        raise blocked_error(preview.blockers)
    verify_manifest(plan, manifest)
    _refuse_changed_files(plan, preview)
    return alter_execute(
        preview=preview, actor=actor, source=source, reason=reason, approved=approved, data_copied=True,
        measured=measured_statistics(manifest, int(time.time())),
    )  # fmt: skip


def analyze_execute(
    *, preview: Preview, actor: str, source: str, run_program: RunProgram, reason: str = "",
    approved: dict[str, Any] | None = None,
) -> Execution:  # fmt: skip
    """Plan, run the program (``run_program(plan) -> manifest``: Spark, or a test's own process), swap."""
    if preview.blockers:
        raise blocked_error(preview.blockers)
    plan = analyze_plan(preview=preview)
    manifest = run_program(plan)
    return analyze_swap(preview=preview, plan=plan, manifest=manifest, actor=actor, source=source, reason=reason,
                        approved=approved)  # fmt: skip


def _refuse_changed_files(plan: dict[str, Any], preview: Preview) -> None:
    data_copy = preview.data_copy
    files = sum(len(u["files"]) for u in plan["units"])
    size = sum(f["size"] for u in plan["units"] for f in u["files"])
    if data_copy is None or (data_copy.files, data_copy.bytes) != (files, size):
        now = (data_copy.files, data_copy.bytes) if data_copy else (0, 0)
        raise ApplicationError(
            ErrorCode.STALE_PREVIEW,
            f"The files changed while they were analyzed ({files} file(s), {size} bytes read; {now[0]} file(s), "
            f"{now[1]} bytes now); nothing was swapped. Run the ANALYZE again.",
            {"read": [files, size], "now": list(now)},
        )
