"""
Re-listing a data job's sources right before its swap, so that no write made during the job is lost (issue 25).

A relocation or rewrite plans its files from a listing taken when the job was queued; a writer that takes no Hive
lock (a plain Spark job, ``hdfs dfs -put``) may add or replace files while the copy runs. Before the metastore swap
every unit's source is listed again and compared with the plan's files (path and size) in one sorted sweep:

* a relocation copies the files that appeared, verified as the program verifies its copies
  (:func:`~operations.spark.programs.file_copy.copy_verified`, :data:`~catalog_admin.locations.COPY_CHECKSUM`), adds
  them to the plan's units and lists again, for at most :data:`CATCH_UP_ROUNDS` rounds; a file that changed size or
  disappeared, or files still appearing after the last round, refuse the swap naming them;
* a rewrite refuses the swap naming every file that appeared, changed or disappeared (its output holds the rows of
  the planned files only).

A refusal swaps nothing and leaves the source untouched; the copy stays where it is, as for an incomplete copy (a
resumed job lists again, a cancelled or discarded one removes its staging).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.locations import COPY_CHECKSUM, FileEntry, filesystem_for, is_hidden
from catalog_admin.object_stores import plan_filesystems
from operations.spark.programs.file_copy import copy_verified

__all__ = ("CATCH_UP_ROUNDS", "Drift", "catch_up_relocation", "compare_listing", "refuse_rewrite_drift")

logger = logging.getLogger(__name__)

CATCH_UP_ROUNDS = 3  # listings after the copy: a source still growing after this many is refused, not chased
NAMED_FILES = 10  # files named in a refusal's message (all of them are in its details, up to DETAILED_FILES)
DETAILED_FILES = 200


@dataclass(frozen=True)
class Drift:
    """How a unit's source differs from the files planned for it: ``added`` (listed entries not planned),
    ``changed`` and ``removed`` (planned locations whose size differs now, or that are gone)."""

    unit: str
    added: tuple[FileEntry, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.changed or self.removed)


@dataclass
class _Refusal:
    appeared: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def add(self, drift: Drift) -> None:
        self.appeared += [entry.location for entry in drift.added]
        self.changed += list(drift.changed)
        self.removed += list(drift.removed)


def compare_listing(unit: str, planned: Iterable[dict[str, Any]], listed: Iterable[FileEntry]) -> Drift:
    """The difference between the plan's files (``source`` and ``size``) and a listing now: both sorted by location,
    then one sweep over the two lists."""
    want = sorted((f["source"], int(f["size"])) for f in planned)
    have = sorted(listed, key=lambda entry: entry.location)
    added: list[FileEntry] = []
    changed: list[str] = []
    removed: list[str] = []
    i = j = 0
    while i < len(want) or j < len(have):
        if j == len(have) or (i < len(want) and want[i][0] < have[j].location):
            removed.append(want[i][0])
            i += 1
        elif i == len(want) or have[j].location < want[i][0]:
            added.append(have[j])
            j += 1
        else:
            if want[i][1] != have[j].size:
                changed.append(want[i][0])
            i, j = i + 1, j + 1
    return Drift(unit, tuple(added), tuple(changed), tuple(removed))


def refuse_rewrite_drift(plan: dict[str, Any]) -> None:
    """Before a rewrite's swap: every unit's visible files are still exactly those it rewrote, or the swap is refused
    naming the files that appeared, changed or disappeared."""
    refusal = _Refusal()
    for unit in plan["units"]:
        refusal.add(compare_listing(unit["key"], unit["files"], _listing(plan, unit["source"], visible_only=True)))
    _raise_if_any(refusal, "rewrite", "the rewrite read only the files planned before it ran")


def catch_up_relocation(
    plan: dict[str, Any], *, rounds: int = CATCH_UP_ROUNDS, between_rounds: Callable[[], None] = lambda: None
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """Before a relocation's swap: copy (verified) every file that appeared in a unit's source since its listing and
    list again, at most ``rounds`` times; the plan with the copied files in its units' ``files``, and what was copied
    by unit. A file that changed or disappeared, or a source still growing after the last round, refuses the swap.
    ``between_rounds`` runs before each listing (the caller's lock heartbeat)."""
    plan = copy.deepcopy(plan)
    caught_up: dict[str, list[dict[str, Any]]] = {}
    options, source_options = plan_filesystems(plan), plan_filesystems(plan, "source_filesystems")
    for done in range(rounds + 1):
        between_rounds()
        drifts = [
            compare_listing(unit["key"], unit["files"], _listing(plan, unit["source"], visible_only=False))
            for unit in plan["units"]
        ]
        if all(drift.is_empty for drift in drifts):
            return plan, caught_up
        refusal = _Refusal()
        for drift in drifts:
            if drift.changed or drift.removed or done == rounds:
                refusal.add(drift)
        why = (
            "the copy holds their earlier content"
            if done < rounds
            else f"files kept appearing through {rounds} catch-up copies"
        )
        _raise_if_any(refusal, "copy", why)
        units = {unit["key"]: unit for unit in plan["units"]}
        for drift in (drift for drift in drifts if drift.added):
            copied = [_copy_one(options, source_options, units[drift.unit], entry) for entry in drift.added]
            units[drift.unit]["files"] = units[drift.unit]["files"] + copied
            caught_up.setdefault(drift.unit, []).extend(copied)
    raise AssertionError("unreachable: the last round returns or refuses")


def _copy_one(
    options: dict[str, Any], source_options: dict[str, Any], unit: dict[str, Any], entry: FileEntry
) -> dict[str, Any]:
    """One file that appeared, copied and verified by size and checksum; refused when it does not verify."""
    item = {"source": entry.location, "destination": f"{unit['destination']}/{entry.relative}", "size": entry.size}
    result = copy_verified(options, {"unit": unit["key"], **item}, COPY_CHECKSUM, source_options)
    if not result["ok"]:
        raise ApplicationError(
            ErrorCode.EXECUTION_FAILED,
            f"{entry.location} appeared in {unit['key']} after its listing and its copy did not verify "
            f"({result['error']}); nothing was swapped.",
            {"unit": unit["key"], "file": entry.location},
        )
    logger.info("Caught up %s (%s bytes) appeared in %s after the listing", entry.location, entry.size, unit["key"])
    return {**item, "checksum": result["checksum"]}


def _listing(plan: dict[str, Any], source: str, *, visible_only: bool) -> list[FileEntry]:
    listed = filesystem_for(source, plan["metastore"]).list_files(source) or []
    return [entry for entry in listed if not (visible_only and is_hidden(entry.relative))]


def _raise_if_any(refusal: _Refusal, job: str, why: str) -> None:
    named = [*refusal.appeared, *refusal.changed, *refusal.removed]
    if not named:
        return
    counts = ", ".join(
        f"{len(files)} {what}"
        for what, files in (
            ("appeared", refusal.appeared),
            ("changed", refusal.changed),
            ("disappeared", refusal.removed),
        )
        if files
    )
    shown = ", ".join(named[:NAMED_FILES]) + (
        f" and {len(named) - NAMED_FILES} more" if len(named) > NAMED_FILES else ""
    )
    raise ApplicationError(
        ErrorCode.EXECUTION_FAILED,
        f"The source changed during the {job} ({counts}: {shown}), and {why}; nothing was swapped "
        "and the source is untouched. Run it again once the writers are done.",
        {
            "appeared": refusal.appeared[:DETAILED_FILES],
            "changed": refusal.changed[:DETAILED_FILES],
            "removed": refusal.removed[:DETAILED_FILES],
        },
    )
