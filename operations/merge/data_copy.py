"""
Copying the data a merge's location rules move, before anything is published, and removing it when the merge is
reverted. The journal is ``MergeImport.data_copy``::

    {"units": [{"key", "source", "destination"}, ...],     # the approved preview's units (data_journal)
     "files": {key: [[relative path, size], ...]},         # each unit's files as listed right before its copy
     "completed": [key, ...],                               # units copied and verified
     "checksums": {key: {destination: checksum}},           # the copies' checksums (the run that verified them)
     "kept": [{"key", "location", "reason"}, ...]}          # what a revert could not remove, and why

``copy_merge_data`` copies every unit not completed with the relocation's verified copy (the relocate program:
per file, size and checksum from the bytes of both ends; on the given Spark session, else in this process), the
verified units journaled every :data:`JOURNAL_SECONDS` and whenever the copy stops; a resumed merge re-verifies the
completed units against their sources (a unit that no longer matches is copied again) and copies the rest. Then every
source is listed again (``_catch_up``): a file written during the copy is copied, verified and journaled, a file
changed or gone refuses the publish naming it. It raises unless every unit verified, so the merge publishes only what
was copied. Source data is never deleted. A cancel is
taken between batches of units (the relocate program's batches of about 256 files): each is reported as
``{"unit_done": "data …"}``, where the merge job checks for one.

``remove_merge_copies`` (after a revert deleted the imported rows) removes the copied directories under the
relocation cleanup's delete-time checks: nothing in the target at, in or above one, and nothing in it the merge did
not copy (a file written since is kept, and reported).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from catalog_admin.errors import ApplicationError
from catalog_admin.locations import COPY_CHECKSUM, filesystem_for
from operations.merge.data_plan import DataCopyPlan
from operations.models import MergeImport
from operations.planners.data_scope import refuse_symlinks
from operations.services.relisting import catch_up_relocation
from operations.services.relocate import copy_filesystem_options, verify_copy_manifest
from operations.services.relocation_cleanup import remove_unused
from operations.spark.programs import relocate

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from operations.merge.engine import Elsewhere

__all__ = ("copied_directories", "copy_merge_data", "data_journal", "remove_merge_copies")

Report = Callable[[dict], None]
JOURNAL_SECONDS = 5.0  # verified units are journaled at most this often (and whenever the copy stops): the journal
# is one JSON value, rewritten whole, so a merge of many small units does not rewrite it after each


def data_journal(plan: DataCopyPlan) -> dict[str, Any]:
    """A new merge's ``data_copy`` journal: the approved preview's units, nothing copied yet (recorded with the
    reserved ids, so a merge that stops at any point resumes with its data to copy)."""
    return {"units": plan.journal(), "files": {}, "completed": [], "checksums": {}}


def copy_merge_data(
    merge: MergeImport, report: Report, spark: SparkSession | None = None, elsewhere: Elsewhere | None = None
) -> dict[str, Any]:
    """Copy and verify every unit of ``merge``'s journal not verified yet (re-verifying those that were); the
    relocate program's manifest. The program runs on ``spark``, else ``elsewhere`` (a Spark driver of the merge's
    engine), else in this process. Raises when a unit did not verify: nothing may be published then."""
    if not merge.data_copy.get("units"):
        return {}
    _reverify(merge, report)
    journal = merge.data_copy
    pending = [unit for unit in journal["units"] if unit["key"] not in set(journal["completed"])]
    plan = _copy_plan(merge, pending)
    report({"message": f"Data copy: {len(pending)} of {len(journal['units'])} unit(s) to copy"})

    verified: list[str] = []  # units verified since the journal was last written
    written = [time.monotonic()]

    def journal() -> None:
        if verified:
            _journal(merge, completed=verified)
            verified.clear()
        written[0] = time.monotonic()

    def on_event(event: dict[str, Any]) -> None:
        if "unit_done" in event:
            verified.append(event["unit_done"])
        elif "files_done" in event and "message" not in event:  # a batch done (not the opening totals): safe point
            if time.monotonic() - written[0] >= JOURNAL_SECONDS:
                journal()
            report({"message": f"Data copy: {event['files_done']:,} of {event.get('files_total', '?')} file(s)"})
            report({"unit_done": f"data {event.get('partitions_done', 0)} of {len(journal_units)} unit(s)"})

    def reported(units: list[str]) -> None:  # the units a driver elsewhere reported verified
        known = set(verified)
        verified.extend(key for key in dict.fromkeys(units) if key in planned and key not in known)

    journal_units, planned = merge.data_copy["units"], {unit["key"] for unit in pending}
    try:
        if elsewhere is not None and spark is None and pending:  # no driver for nothing (a resumed merge's)
            manifest = elsewhere("relocate", plan, reported)
        else:
            manifest = relocate.run(spark, plan, on_event)
    except BaseException:
        journal()  # whatever stopped the copy (a cancel, a failure), the verified units stay verified
        raise
    checksums = {key: unit["checksums"] for key, unit in manifest["units"].items()}
    last = [key for key in manifest["units"] if key not in set(merge.data_copy.get("completed", []))]
    _journal(merge, completed=last, checksums=checksums)  # one write: the last units and every copy's checksum
    verify_copy_manifest(plan, manifest)
    _catch_up(merge, report)
    return manifest


def copied_directories(merge: MergeImport) -> tuple[str, ...]:
    """The directories ``merge`` copied data into (or began to): what its revert removes."""
    started = merge.data_copy.get("files", {})
    return tuple(unit["destination"] for unit in merge.data_copy.get("units", []) if unit["key"] in started)


def remove_merge_copies(merge: MergeImport) -> list[dict[str, Any]]:
    """Remove the copied directories (the imported rows must be gone); what was kept, with why, journaled too."""
    journal = merge.data_copy
    if not journal.get("units"):
        return []
    files = journal.get("files", {})
    units = [
        {"key": unit["key"], "destination": unit["destination"], "files": {"destination": files.get(unit["key"])}}
        for unit in journal["units"]
    ]
    kept = remove_unused(merge.target, units, "destination")
    merge.data_copy = {**journal, "kept": kept}
    merge.save(update_fields=["data_copy", "updated_at"])
    return kept


def _copy_plan(merge: MergeImport, units: list[dict[str, str]]) -> dict[str, Any]:
    """The relocate program's plan for ``units``: each source listed now (no link followed), its files journaled as
    the ones the merge copies there."""
    planned, listed_units = {}, []
    for unit in units:
        listed = filesystem_for(unit["source"], merge.source).list_files(unit["source"]) or []
        refuse_symlinks(listed, "merging")
        planned[unit["key"]] = [[entry.relative, entry.size] for entry in listed]
        files = [
            {"source": e.location, "destination": f"{unit['destination']}/{e.relative}", "size": e.size} for e in listed
        ]
        listed_units.append({**unit, "files": files})
    _journal(merge, files=planned)
    return {"program": "relocate", "metastore": merge.target, "units": listed_units, **_filesystems(merge),
            "completed": [], "checksum": COPY_CHECKSUM}  # fmt: skip


def _filesystems(merge: MergeImport) -> dict[str, Any]:
    """How the copy reaches each end: the sources with the source metastore's settings, the copies with the
    target's (each side's credentials reach a driver as its own variables: ``object_stores.plan_filesystems``)."""
    return {
        "filesystems": copy_filesystem_options(merge.target),
        "source_filesystems": copy_filesystem_options(merge.source),
    }


def _catch_up(merge: MergeImport, report: Report) -> None:
    """Right before the publish: every unit's source listed again against the files journaled for it
    (``relisting.catch_up_relocation``, as a relocation before its swap): files that appeared since are copied,
    verified, and journaled as the merge's (a revert removes them with the rest); a file changed or gone refuses the
    publish naming it."""
    journal = merge.data_copy
    files = journal.get("files", {})
    units = [
        {**unit, "files": [{"source": f"{unit['source']}/{relative}", "size": size}
                           for relative, size in files.get(unit["key"], [])]}
        for unit in journal["units"]
    ]  # fmt: skip
    plan = {"metastore": merge.source, "units": units, **_filesystems(merge)}
    try:
        _plan, caught_up = catch_up_relocation(plan)
    except ApplicationError as exc:
        raise ApplicationError(exc.code, exc.message.replace("swapped", "published"), exc.details) from exc
    if not caught_up:
        return
    by_key = {unit["key"]: unit for unit in journal["units"]}
    added = {
        key: [*files.get(key, []), *[[f["destination"].removeprefix(by_key[key]["destination"] + "/"), f["size"]]
                                     for f in copied]]
        for key, copied in caught_up.items()
    }  # fmt: skip
    _journal(merge, files=added)
    report({"message": f"Data copy: re-listed before publishing, copied {sum(map(len, caught_up.values()))} "
            f"file(s) written into {len(caught_up)} source(s) during the copy"})  # fmt: skip


def _reverify(merge: MergeImport, report: Report) -> None:
    """A resumed merge: every completed unit's copy compared with its source again, file by file (names, sizes and
    checksums of both ends' bytes); a unit that differs is copied again."""
    journal = merge.data_copy
    completed = journal.get("completed", [])
    if not completed:
        return
    by_key = {unit["key"]: unit for unit in journal["units"]}
    differing = [key for key in completed if not _still_equal(merge, by_key[key])]
    if differing:
        report({"message": f"Data copy: {len(differing)} verified unit(s) differ now; copying them again"})
    merge.data_copy = {**journal, "completed": [key for key in completed if key not in differing]}
    merge.save(update_fields=["data_copy", "updated_at"])


def _still_equal(merge: MergeImport, unit: dict[str, str]) -> bool:
    source_fs = filesystem_for(unit["source"], merge.source)
    copy_fs = filesystem_for(unit["destination"], merge.target)
    sources = source_fs.list_files(unit["source"]) or []
    copies = copy_fs.list_files(unit["destination"]) or []
    if [(e.relative, e.size) for e in sources] != [(e.relative, e.size) for e in copies]:
        return False
    if any(e.symlink for e in (*sources, *copies)):
        return False
    return all(
        source_fs.digest(s.location, COPY_CHECKSUM).hexdigest == copy_fs.digest(c.location, COPY_CHECKSUM).hexdigest
        for s, c in zip(sources, copies, strict=True)
    )


def _journal(
    merge: MergeImport,
    *,
    completed: list[str] | None = None,
    files: dict[str, Any] | None = None,
    checksums: dict[str, Any] | None = None,
) -> None:
    journal = dict(merge.data_copy)
    if checksums:
        journal["checksums"] = {**journal.get("checksums", {}), **checksums}
    if completed:
        journal["completed"] = [*journal.get("completed", []), *completed]
    if files:
        journal["files"] = {**journal.get("files", {}), **files}
    merge.data_copy = journal
    merge.save(update_fields=["data_copy", "updated_at"])
