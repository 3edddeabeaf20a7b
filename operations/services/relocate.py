"""
Relocate: plan the copy, run it (a Spark program), verify it, swap the metastore, keep the source, clean up.

``relocation_copy_plan`` lists every file of the preview's units now (the console plans the file list; the program
only copies). ``relocate_execute`` runs the program through ``run_program`` (the Spark engine, or a test's own
session), checks its manifest against the plan, then swaps with ``alter_execute``: one metastore transaction,
staleness-checked against the approved plan, audited, with the old locations as its before-image (revert writes
them back). The :class:`Relocation` is recorded as the swap starts, before it commits. The source stays for
``CATALOG_RELOCATION_RETENTION``; ``relocations_cleanup`` (``services/relocation_cleanup.py``, a job or the
``relocations_cleanup`` command) removes it afterwards, or the copy of a relocation that was reverted, under the
checks made at delete time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from django.conf import settings

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.locations import filesystem_for
from catalog_admin.selectors.metastores import get_metastore
from operations.models import Execution, Relocation
from operations.planners.data_scope import refuse_symlinks
from operations.planners.rewrite_swap import swap_moves
from operations.preview import DataCopy, DirectoryMove, Preview
from operations.rules import blocked_error
from operations.services.alter import alter_execute
from operations.services.hive_locks import exclusive_table_lock
from operations.services.relisting import catch_up_relocation, refuse_rewrite_drift
from operations.services.relocation_cleanup import (
    record_relocation,
    relocations_cleanup,
    remove_copies,
    settle_relocation,
)
from operations.services.rewrite import REWRITE_SPECS, measured_statistics, rewrite_plan, verify_rewrite_manifest

__all__ = (
    "copy_filesystem_options",
    "relocate_execute",
    "relocation_copy_plan",
    "relocation_swap",
    "relocations_cleanup",
    "verify_copy_manifest",
)

logger = logging.getLogger(__name__)

RunProgram = Callable[[dict[str, Any]], dict[str, Any]]


def relocation_copy_plan(*, preview: Preview, completed: Sequence[str] = ()) -> dict[str, Any]:
    """The relocate program's JSON plan: every file of every unit, listed now, with its destination and size (a
    rewrite's: the rewrite program's, ``services/rewrite.py``)."""
    data_copy = _data_copy(preview)
    options = copy_filesystem_options(preview.metastore)
    if isinstance(preview.spec, REWRITE_SPECS):
        return rewrite_plan(preview=preview, data_copy=data_copy, filesystems=options, completed=completed)
    units = []
    for unit in data_copy.units:
        listed = filesystem_for(unit.source, preview.metastore).list_files(unit.source) or []
        refuse_symlinks(listed, "relocate")
        files = [
            {"source": entry.location, "destination": f"{unit.destination}/{entry.relative}", "size": entry.size}
            for entry in listed
        ]
        units.append({"key": unit.key, "source": unit.source, "destination": unit.destination, "files": files})
    return {
        "program": "relocate",
        "metastore": preview.metastore,
        "statement": preview.statement,
        "fingerprint": preview.fingerprint,
        "units": units,
        "filesystems": options,
        "completed": list(completed),
    }


def verify_copy_manifest(plan: dict[str, Any], manifest: dict[str, Any]) -> None:
    """Every unit of the plan was copied and verified (now or by an earlier run), file for file; else nothing swaps."""
    done = {**{key: None for key in manifest.get("skipped", ())}, **manifest.get("units", {})}
    missing = [unit["key"] for unit in plan["units"] if unit["key"] not in done]
    short = [
        unit["key"]
        for unit in plan["units"]
        if done.get(unit["key"]) is not None and done[unit["key"]]["files"] != len(unit["files"])
    ]
    if missing or short:
        raise ApplicationError(
            ErrorCode.EXECUTION_FAILED,
            f"The copy is incomplete ({len(missing)} unit(s) not copied, {len(short)} with files missing; first: "
            f"{(missing or short)[0]}); nothing was swapped.",
            {"missing": missing[:20], "short": short[:20]},
        )


def relocate_execute(
    *,
    preview: Preview,
    actor: str,
    source: str,
    run_program: RunProgram,
    reason: str = "",
    approved: dict[str, Any] | None = None,
    completed: Sequence[str] = (),
) -> Execution:
    """Copy (``run_program(plan) -> manifest``), verify, swap; the swap's execution, with its :class:`Relocation`.

    A failed copy swaps nothing and leaves the verified units for a resumed run (``completed``); a swap refused as
    stale removes the copy (nothing points at it)."""
    _refuse_blocked(preview)
    plan = relocation_copy_plan(preview=preview, completed=completed)
    started = time.monotonic()
    manifest = run_program(plan)
    manifest.setdefault("seconds", time.monotonic() - started)
    return relocation_swap(
        preview=preview, plan=plan, manifest=manifest, actor=actor, source=source, reason=reason, approved=approved
    )


def relocation_swap(
    *,
    preview: Preview,
    plan: dict[str, Any],
    manifest: dict[str, Any],
    actor: str,
    source: str,
    reason: str = "",
    approved: dict[str, Any] | None = None,
) -> Execution:
    """After the copy: check ``manifest`` against ``plan``, then re-point the metastore in one staleness-checked
    transaction (``alter_execute``); the swap's execution, with its :class:`Relocation`. A copy that is incomplete
    swaps nothing (its verified units stay for a resumed run); a swap refused (stale, failed) removes the copy.
    A rewrite's manifest is checked for its rows, and its new directories measured for numFiles/totalSize.

    No write is lost: the re-listing and the swap run under Hive's EXCLUSIVE lock on the table (``hive_locks``:
    refused while a Hive writer holds one; Hive's writers wait meanwhile), and every unit's source is listed again
    first (``relisting``): files a writer without Hive's lock added are copied (a relocation) or refuse the swap (a
    rewrite), a changed or removed file refuses it; a refusal there leaves the source and the copy as they are."""
    _refuse_blocked(preview)
    rewrite = plan.get("program") == "rewrite"
    if rewrite:
        verify_rewrite_manifest(plan, manifest)
    else:
        verify_copy_manifest(plan, manifest)
    target = preview.spec.target
    recorded: list[Relocation] = []
    with exclusive_table_lock(
        get_metastore(preview.metastore), target.database, target.table, user=actor,
        agent=f"catalog-admin swap: {preview.statement}",
    ) as lock:  # fmt: skip
        plan = _relisted(
            plan, manifest, rewrite=rewrite, heartbeat=lock.heartbeat if lock is not None else lambda: None
        )
        measured = measured_statistics(plan, manifest) if rewrite else None
        try:
            execution = alter_execute(
                preview=preview, actor=actor, source=source, reason=reason, approved=approved, data_copied=True,
                measured=measured, swap_moves=_swap_moves(preview) if rewrite else (),
                on_started=lambda started: recorded.append(_record_relocation(started, plan, manifest)),
            )  # fmt: skip
        except ApplicationError:
            remove_copies(plan, recorded[0] if recorded else None)
            raise
    settle_relocation(execution)
    return execution


def _swap_moves(preview: Preview) -> tuple[DirectoryMove, ...]:
    """A rewrite's swap: each old directory to the trash, the new one into its place (``planners/rewrite_swap``)."""
    return swap_moves(_data_copy(preview).units, preview.inverse["token"])


def _record_relocation(execution: Execution, plan: dict[str, Any], manifest: dict[str, Any]) -> Relocation:
    return record_relocation(execution, plan, float(manifest.get("seconds", 0.0)))


def _relisted(
    plan: dict[str, Any], manifest: dict[str, Any], *, rewrite: bool, heartbeat: Callable[[], None]
) -> dict[str, Any]:
    """Every unit's source listed again right before the swap (``services/relisting.py``): a rewrite's must be
    unchanged; a relocation's new files are copied in a verified catch-up pass, recorded in ``manifest``
    (``caught_up``, by unit) and returned in the plan's units, whose files the :class:`Relocation` records."""
    if rewrite:
        heartbeat()
        refuse_rewrite_drift(plan)
        return plan
    plan, caught_up = catch_up_relocation(plan, between_rounds=heartbeat)
    if caught_up:
        manifest["caught_up"] = caught_up
        manifest["files"] = manifest.get("files", 0) + sum(len(files) for files in caught_up.values())
        manifest["bytes"] = manifest.get("bytes", 0) + sum(f["size"] for files in caught_up.values() for f in files)
    return plan


def _refuse_blocked(preview: Preview) -> None:
    if preview.blockers:
        raise blocked_error(preview.blockers)


def _data_copy(preview: Preview) -> DataCopy:
    if preview.data_copy is None:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"{preview.statement} copies no data: execute it as an ALTER.",
            {"operation": preview.spec.kind},
        )
    return preview.data_copy


def copy_filesystem_options(metastore: str) -> dict[str, Any]:
    """The settings' filesystem options with this metastore's own object-store options applied (no secrets)."""
    configured = getattr(settings, "CATALOG_FILESYSTEMS", {})
    own = configured.get("metastores", {}).get(metastore, {})
    return {"s3": own.get("s3", configured.get("s3", {})), "hdfs": configured.get("hdfs", {})}
