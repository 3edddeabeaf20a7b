"""
Relocate: plan the copy, run it (a Spark program), verify it, swap the metastore, keep the source, clean up.

``relocation_copy_plan`` lists every file of the preview's units now (the console plans the file list; the program
only copies). ``relocate_execute`` runs the program through ``run_program`` (the Spark engine, or a test's own
session), checks its manifest against the plan, then swaps with ``alter_execute``: one metastore transaction,
staleness-checked against the approved plan, audited, with the old locations as its before-image (revert writes
them back). The source stays for ``CATALOG_RELOCATION_RETENTION``; ``relocations_cleanup`` (a job or the
``relocations_cleanup`` command) removes it afterwards, or removes the copy of a relocation that was reverted.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.locations import filesystem_for
from operations.models import Execution, Relocation
from operations.planners.data_scope import refuse_symlinks
from operations.preview import DataCopy, Preview
from operations.services.alter import alter_execute
from operations.services.audit import record_audit
from operations.services.rewrite import REWRITE_SPECS, measured_statistics, rewrite_plan, verify_rewrite_manifest

__all__ = (
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
    options = _filesystem_options(preview.metastore)
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
    A rewrite's manifest is checked for its rows, and its new directories measured for numFiles/totalSize."""
    _refuse_blocked(preview)
    measured = None
    if plan.get("program") == "rewrite":
        verify_rewrite_manifest(plan, manifest)
        measured = measured_statistics(plan)
    else:
        verify_copy_manifest(plan, manifest)
    try:
        execution = alter_execute(
            preview=preview, actor=actor, source=source, reason=reason, approved=approved, data_copied=True,
            measured=measured,
        )  # fmt: skip
    except ApplicationError:
        _remove_copies(plan)
        raise
    _record_relocation(execution, plan, float(manifest.get("seconds", 0.0)))
    return execution


def relocations_cleanup(*, now: datetime | None = None, actor: str = "system:relocations-cleanup") -> list[Relocation]:
    """Remove what relocations no longer need: the source once its retention time passed, or the copy of a
    relocation that was reverted. Each is audited; a failure is logged and retried on the next run."""
    now = now or timezone.now()
    handled = []
    for relocation in Relocation.objects.filter(state=Relocation.State.SWAPPED).select_related("execution"):
        reverted = hasattr(relocation.execution, "reverted_by")
        if not reverted and relocation.keep_until > now:
            continue
        side = "destination" if reverted else "source"
        try:
            for unit in relocation.units:
                filesystem_for(unit[side], relocation.metastore).delete_tree(unit[side])
        except OSError:
            logger.exception("Could not remove the %s of relocation %s; the next cleanup retries", side, relocation.pk)
            continue
        handled.append(_mark_cleaned(relocation, reverted, now, actor))
    return handled


def _mark_cleaned(relocation: Relocation, reverted: bool, now: datetime, actor: str) -> Relocation:
    with transaction.atomic():
        relocation.state = Relocation.State.REVERTED if reverted else Relocation.State.CLEANED
        relocation.cleaned_at = now
        relocation.save(update_fields=["state", "cleaned_at"])
        execution = relocation.execution
        record_audit(
            actor=actor,
            action="relocation_cleanup",
            outcome=relocation.state,
            execution_id=execution.pk,
            metastore=execution.metastore,
            database_name=execution.database_name,
            table_name=execution.table_name,
            statement=execution.statement,
            details={"removed": "destination" if reverted else "source", "units": len(relocation.units),
                     "keep_until": relocation.keep_until.isoformat()},
        )  # fmt: skip
    return relocation


def _record_relocation(execution: Execution, plan: dict[str, Any], copy_seconds: float) -> Relocation:
    files = [f for unit in plan["units"] for f in unit["files"]]
    return Relocation.objects.create(
        execution=execution,
        metastore=plan["metastore"],
        units=[{k: unit[k] for k in ("key", "source", "destination")} for unit in plan["units"]],
        files=len(files),
        bytes=sum(f["size"] for f in files),
        copy_seconds=copy_seconds,
        keep_until=timezone.now() + settings.CATALOG_RELOCATION_RETENTION,
    )


def _remove_copies(plan: dict[str, Any]) -> None:
    for unit in plan["units"]:
        try:
            filesystem_for(unit["destination"], plan["metastore"]).delete_tree(unit["destination"])
        except OSError:
            logger.exception("Could not remove the unused copy %s", unit["destination"])


def _refuse_blocked(preview: Preview) -> None:
    if preview.blockers:
        first = preview.blockers[0]
        raise ApplicationError(
            ErrorCode.HIVE_RULE_VIOLATION,
            first.message,
            {"rule": first.rule, "blockers": [b.__dict__ for b in preview.blockers]},
        )


def _data_copy(preview: Preview) -> DataCopy:
    if preview.data_copy is None:
        raise ApplicationError(
            ErrorCode.INVALID_PARAMETER,
            f"{preview.statement} copies no data: execute it as an ALTER.",
            {"operation": preview.spec.kind},
        )
    return preview.data_copy


def _filesystem_options(metastore: str) -> dict[str, Any]:
    """The settings' filesystem options with this metastore's own object-store options applied (no secrets)."""
    configured = getattr(settings, "CATALOG_FILESYSTEMS", {})
    own = configured.get("metastores", {}).get(metastore, {})
    return {"s3": own.get("s3", configured.get("s3", {})), "hdfs": configured.get("hdfs", {})}
