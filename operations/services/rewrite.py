"""
Rewrites (CONCATENATE, SET FILEFORMAT … WITH DATA) as data jobs: the program's plan, its manifest's check, and what
the swap measures. The rest is the relocation's (``services/relocate.py``): ``relocate_execute`` / the relocate job
run the program, ``relocation_swap`` swaps through ``alter_execute`` (staleness-checked, audited, before-image,
revert; the rewrite's moves: old directory to the trash, new one into its place, ``planners/rewrite_swap``) and
records a :class:`~operations.models.Relocation` whose ``source`` sides (the old directories, in the trash) the
relocation cleanup removes after the retention time, or whose ``destination`` sides (the new ones, moved back into
their staging directory by a revert) after a revert.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.conf import settings

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.locations import FileEntry, filesystem_for, is_hidden
from catalog_admin.object_stores import plan_filesystems
from catalog_admin.selectors.metastores import get_metastore
from operations.planners.data_scope import refuse_symlinks
from operations.planners.rewrite_swap import retained_levels, staging_levels
from operations.preview import DataCopy, Preview
from operations.spark.programs.arrow_files import file_rows
from operations.specs import CompactFiles, ConvertFormat
from operations.table_state import read_table_state

__all__ = ("REWRITE_SPECS", "measured_statistics", "rewrite_plan", "verify_rewrite_manifest")

REWRITE_SPECS = (CompactFiles, ConvertFormat)
PROGRAM = "rewrite"


def rewrite_plan(
    *, preview: Preview, data_copy: DataCopy, filesystems: dict[str, Any], completed: Sequence[str] = ()
) -> dict[str, Any]:
    """The rewrite program's JSON plan: every unit's visible files listed now, the table's columns and SerDe
    parameters (the program reads with them, it infers nothing), the target format and file size."""
    spec = preview.spec
    assert isinstance(spec, REWRITE_SPECS), "only CONCATENATE and SET FILEFORMAT … WITH DATA rewrite data"
    state = read_table_state(get_metastore(preview.metastore), spec.target)
    token = preview.inverse["token"]
    units = []
    for unit in data_copy.units:
        listed = filesystem_for(unit.source, preview.metastore).list_files(unit.source) or []
        refuse_symlinks(listed, "rewrite")
        files = [{"source": f.location, "size": f.size} for f in listed if not is_hidden(f.relative)]
        target = spec.file_format.lower() if isinstance(spec, ConvertFormat) else unit.source_format
        units.append({"key": unit.key, "source": unit.source, "destination": unit.destination,
                      "retained": unit.retained, "source_format": unit.source_format, "target_format": target,
                      "files": files, "prune": {"source": retained_levels(unit, token),
                                                "destination": staging_levels(unit, token)}})  # fmt: skip
    target_bytes = getattr(spec, "target_file_bytes", None) or settings.CATALOG_COMPACT_TARGET_FILE_BYTES
    return {
        "program": PROGRAM,
        "metastore": preview.metastore,
        "statement": preview.statement,
        "fingerprint": preview.fingerprint,
        "units": units,
        "columns": [[c.name, c.type] for c in state.columns],
        "serde": {k: v for k, v in state.serde_params.items() if v is not None},
        "target_file_bytes": target_bytes,
        "filesystems": filesystems,
        "completed": list(completed),
        "staging": preview.inverse["staging"],
    }


def verify_rewrite_manifest(plan: dict[str, Any], manifest: dict[str, Any]) -> None:
    """Every unit was rewritten (now or by an earlier run) with as many rows as it read; else nothing swaps."""
    done = {**{key: None for key in manifest.get("skipped", ())}, **manifest.get("units", {})}
    missing = [unit["key"] for unit in plan["units"] if unit["key"] not in done]
    wrong = [key for key, unit in done.items() if unit is not None and unit["rows_in"] != unit["rows_out"]]
    if missing or wrong:
        raise ApplicationError(
            ErrorCode.EXECUTION_FAILED,
            f"The rewrite is incomplete ({len(missing)} unit(s) not rewritten, {len(wrong)} whose rows differ; "
            f"first: {(missing or wrong)[0]}); nothing was swapped.",
            {"missing": missing[:20], "rows_differ": wrong[:20]},
        )


def measured_statistics(plan: dict[str, Any], manifest: dict[str, Any]) -> dict[tuple[str, str], str]:
    """The basic statistics of every unit's new directory (``planners/rewrite_stats``), for the swap's steps:
    numFiles and totalSize from a listing now (Hive counts visible files only: ``FileUtils.HIDDEN_FILES_PATH_FILTER``),
    numRows the program's verified count (a unit an earlier run rewrote: its new files counted again now), rawDataSize
    of Parquet rows × columns (``ParquetHiveSerDe``). An empty new directory refuses the swap."""
    measured = {}
    counted = manifest.get("units", {})
    for unit in plan["units"]:
        listed = filesystem_for(unit["destination"], plan["metastore"]).list_files(unit["destination"]) or []
        visible = [f for f in listed if not is_hidden(f.relative)]
        if not visible and unit["files"]:
            raise ApplicationError(
                ErrorCode.EXECUTION_FAILED,
                f"{unit['destination']} holds no file after the rewrite of {unit['key']}; nothing was swapped.",
                {"unit": unit["key"]},
            )
        key = unit["key"]
        rows = counted[key]["rows_out"] if key in counted else _recounted(plan, unit["target_format"], visible)
        measured[(key, "numFiles")] = str(len(visible))
        measured[(key, "totalSize")] = str(sum(f.size for f in visible))
        measured[(key, "numRows")] = str(rows)
        measured[(key, "rawDataSize")] = str(rows * len(plan["columns"]))
    return measured


def _recounted(plan: dict[str, Any], file_format: str, files: Sequence[FileEntry]) -> int:
    """Rows of the new files of a unit an earlier run rewrote and verified (footers, records, lines)."""
    options = plan_filesystems(plan)
    return sum(file_rows(options, file_format, f.location) for f in files)
