"""
What a data job copied, and removing what it no longer needs without deleting anything that is still needed.

A :class:`~operations.models.Relocation` is recorded before its swap commits (``PENDING``; ``record_relocation`` is
the swap's ``on_started``), with each unit's files on both sides as the job left them (relative path and size). The
cleanup (``relocations_cleanup``) decides from the real state which side of a relocation goes, never from a
remembered flag:

* the swap's execution still RUNNING: nothing (``reconcile_executions`` settles it from its commit marker first);
  FAILED: the swap never committed, the copy goes (``ABANDONED``);
* a revert attempt still RUNNING: nothing; a SUCCEEDED or RECONCILED revert: the copy goes (``REVERTED``); a failed
  or refused revert changed nothing: it is no revert;
* otherwise, after the retention time: the source goes (``CLEANED``).

Each unit directory is deleted only if, at delete time, no table or partition in the metastore is at, in or above it
(a partitioned table's own root above it is not: Hive reads a partitioned table through its partitions) and it holds
no file the job did not leave there (a file written or rewritten since is kept). What is kept is stored on the
record (``kept``, shown on the job's page), audited when it changes, and retried on the next run.
"""

from __future__ import annotations

import logging
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from catalog_admin.errors import ApplicationError
from catalog_admin.locations import FileEntry, filesystem_for, normalize_location
from catalog_admin.models import PartitionKey
from catalog_admin.selectors.locations import LocationUser, location_users
from catalog_admin.selectors.metastores import get_metastore
from operations.containment import ancestors, canonical
from operations.models import DONE, Execution, Relocation
from operations.services.audit import record_audit

__all__ = (
    "extra_files",
    "in_use",
    "record_relocation",
    "relocations_cleanup",
    "remove_copies",
    "remove_unused",
    "settle_relocation",
)

logger = logging.getLogger(__name__)

Files = list[list[Any]]  # [[relative path, size], ...]
KEPT_STORED = 100  # kept units stored on a relocation (and audited) by name; the rest counted


@dataclass(frozen=True)
class Due:
    """Which side of a relocation's units goes now, the state once it is gone, or why nothing may go yet."""

    side: str
    state: str
    blocked: str = ""


def record_relocation(execution: Execution, plan: dict[str, Any], copy_seconds: float) -> Relocation:
    """The relocation's record, ``PENDING`` until its swap settles: every unit with each side's files."""
    units = [_recorded_unit(plan, unit) for unit in plan["units"]]
    return Relocation.objects.create(
        execution=execution,
        metastore=plan["metastore"],
        units=units,
        files=sum(len(unit["files"]) for unit in plan["units"]),
        bytes=sum(f["size"] for unit in plan["units"] for f in unit["files"]),
        copy_seconds=copy_seconds,
        keep_until=timezone.now() + settings.CATALOG_RELOCATION_RETENTION,
        state=Relocation.State.PENDING,
    )


def _recorded_unit(plan: dict[str, Any], unit: dict[str, Any]) -> dict[str, Any]:
    """One unit as the cleanup reads it: ``source`` where the old files are kept, ``destination`` where the new
    ones go after a revert (or stay when the swap never committed), each side's files. A rewrite's swap moves its old
    directory to the trash and its new one home (``planners/rewrite_swap``): ``source`` is the trash, ``home`` the
    unit's own location (where the new files are while swapped), ``prune`` the emptied parents each side's delete
    takes along."""
    recorded = {**{k: unit[k] for k in ("key", "source", "destination")}, "files": _unit_files(plan, unit)}
    if unit.get("retained"):
        recorded.update(source=unit["retained"], home=unit["source"], prune=unit.get("prune", {}))
    return recorded


def settle_relocation(execution: Execution) -> None:
    """After the swap's execution ended (in process, or settled by ``reconcile_executions``): a committed swap's
    relocation is ``SWAPPED``; one that never committed stays ``PENDING`` until the cleanup removes its copy."""
    if execution.state in DONE:
        Relocation.objects.filter(execution=execution, state=Relocation.State.PENDING).update(
            state=Relocation.State.SWAPPED, kept=[]
        )


def remove_copies(plan: dict[str, Any], relocation: Relocation | None) -> None:
    """Remove the copies of a swap that was refused, under the cleanup's checks: through the relocation's record
    when one was made (it becomes ``ABANDONED``, or keeps what it cannot remove), else from the plan."""
    if relocation is not None:
        relocation.refresh_from_db()
        _clean(relocation, Due("destination", Relocation.State.ABANDONED), timezone.now(), "system:relocate")
        return
    units = [{**unit, "files": _unit_files(plan, unit)} for unit in plan["units"]]
    for kept in _remove_side(plan["metastore"], units, "destination"):
        logger.warning("Kept the unused copy %s: %s", kept["location"], kept["reason"])


def relocations_cleanup(*, now: datetime | None = None, actor: str = "system:relocations-cleanup") -> list[Relocation]:
    """Remove what relocations no longer need (see the module docstring): the relocations finished now, and those
    whose due side was kept (``kept`` says what and why; the next run retries them)."""
    now = now or timezone.now()
    handled = []
    pending = Relocation.objects.filter(state__in=(Relocation.State.PENDING, Relocation.State.SWAPPED))
    for relocation in pending.select_related("execution").order_by("pk"):
        settle_relocation(relocation.execution)
        relocation.refresh_from_db(fields=["state"])
        due = _due(relocation, now)
        if due is None:
            continue
        try:
            _clean(relocation, due, now, actor)
        except (OSError, ApplicationError):
            logger.exception("Could not clean up relocation %s; the next cleanup retries", relocation.pk)
            continue
        handled.append(relocation)
    return handled


def extra_files(relocation: Relocation, side: str) -> list[str]:
    """The files at ``side`` of the relocation's units, listed now, that the job did not leave there (written or
    rewritten since), as locations. A unit recorded before file records existed is not listed: the cleanup keeps
    its directories whole."""
    found = []
    for unit in relocation.units:
        location = unit.get("home", unit[side]) if side == "destination" else unit[side]
        recorded = unit.get("files", {}).get(side)
        if recorded is not None:
            listed = filesystem_for(location, relocation.metastore).list_files(location) or []
            found += [entry.location for entry in _unknown(listed, recorded)]
    return found


def _unknown(listed: Sequence[FileEntry], recorded: Files) -> list[FileEntry]:
    """The listed files not among the recorded ones (by relative path and size)."""
    known = {(relative, size) for relative, size in recorded}
    return [entry for entry in listed if (entry.relative, entry.size) not in known]


# Deciding --------------------------------------------------------------------------------------------------------


def _due(relocation: Relocation, now: datetime) -> Due | None:
    """Which side goes, from the swap's and its revert attempts' states now (None: nothing is due yet)."""
    swap = relocation.execution
    if swap.state == Execution.State.RUNNING:
        return Due("destination", Relocation.State.ABANDONED, blocked=f"its swap (execution #{swap.pk}) has not "
                   "settled; reconcile_executions decides it from its commit marker")  # fmt: skip
    if swap.state not in DONE:
        return Due("destination", Relocation.State.ABANDONED)
    running = swap.revert_running
    if running is not None:
        return Due("source", Relocation.State.CLEANED, blocked=f"its revert (execution #{running.pk}) has not "
                   "settled; reconcile_executions decides it from its commit marker")  # fmt: skip
    if swap.reverted_by is not None:
        return Due("destination", Relocation.State.REVERTED)
    if relocation.keep_until > now:
        return None
    return Due("source", Relocation.State.CLEANED)


def _clean(relocation: Relocation, due: Due, now: datetime, actor: str) -> None:
    """Remove ``due.side`` of the relocation's units (what may go), store and audit what was kept; once nothing is
    kept, the relocation reaches ``due.state``."""
    if due.blocked:
        kept = [{"key": unit["key"], "location": unit[due.side], "reason": due.blocked} for unit in relocation.units]
    else:
        kept = _remove_side(relocation.metastore, relocation.units, due.side)
        held = {k["key"] for k in kept}
        relocation.units = [unit if unit["key"] in held or unit.get("removed") else {**unit, "removed": due.side}
                            for unit in relocation.units]  # fmt: skip
    stored = _stored(kept)
    with transaction.atomic():
        changed = stored != relocation.kept
        relocation.kept = stored
        fields = ["units", "kept"]
        if not kept:
            relocation.state, relocation.cleaned_at = due.state, now
            fields += ["state", "cleaned_at"]
        relocation.save(update_fields=fields)
        if changed or not kept:
            _audit(relocation, due, actor, kept)


def _stored(kept: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the record keeps of ``kept``: the first :data:`KEPT_STORED`, then one line for the rest."""
    if len(kept) <= KEPT_STORED:
        return kept
    rest = {"key": "", "location": "", "reason": f"and {len(kept) - KEPT_STORED} more unit(s)"}
    return [*kept[:KEPT_STORED], rest]


def _audit(relocation: Relocation, due: Due, actor: str, kept: list[dict[str, Any]]) -> None:
    execution = relocation.execution
    record_audit(
        actor=actor,
        action="relocation_cleanup",
        outcome=relocation.state if not kept else "kept",
        execution_id=execution.pk,
        metastore=execution.metastore,
        database_name=execution.database_name,
        table_name=execution.table_name,
        statement=execution.statement,
        details={"removed": due.side if not kept else None, "side": due.side, "units": len(relocation.units),
                 "kept": kept[:KEPT_STORED], "kept_count": len(kept), "keep_until": relocation.keep_until.isoformat()},
    )  # fmt: skip


# Deleting --------------------------------------------------------------------------------------------------------


def _remove_side(metastore: str, units: Sequence[dict[str, Any]], side: str) -> list[dict[str, Any]]:
    """Delete ``side`` of every unit that passes the checks now; what was kept, with the reason."""
    todo = [unit for unit in units if unit.get("removed") != side]
    users = _users(metastore, [canonical(unit[side]) for unit in todo])
    kept = []
    for unit in todo:
        location = unit[side]
        reason = _why_kept(metastore, location, unit.get("files", {}).get(side), users)
        if reason is None:
            filesystem = filesystem_for(location, metastore)
            filesystem.delete_tree(location)
            if levels := unit.get("prune", {}).get(side):
                filesystem.prune_empty_parents(location, levels=levels)
        elif reason:
            kept.append({"key": unit["key"], "location": location, "reason": reason})
    return kept


def remove_unused(metastore: str, units: Sequence[dict[str, Any]], side: str) -> list[dict[str, Any]]:
    """Delete ``side`` of every unit (``key``, ``side``, ``files: {side: [[relative, size], ...]}``) that passes the
    delete-time checks now: what was kept, with the reason (the merge's revert removes its copies through this)."""
    return _remove_side(metastore, units, side)


def in_use(metastore: str, location: str) -> str | None:
    """Who uses ``location`` now, in the metastore (a table or partition at, in or above it; a partitioned table's
    own root above it aside), said in a sentence; None: nobody."""
    return _users_sentence(_using(canonical(location), _users(metastore, [canonical(location)])))


def _users_sentence(using: Sequence[LocationUser]) -> str | None:
    if not using:
        return None
    more = f" (and {len(using) - 1} more)" if using[1:] else ""
    return f"{using[0].owner} uses {using[0].location}{more}"


def _why_kept(metastore: str, location: str, recorded: Files | None, users: Users) -> str | None:
    """Why ``location`` may not be deleted now; ``""``: it is gone already; None: delete it."""
    using = _users_sentence(_using(canonical(location), users))
    if using:
        return using
    filesystem = filesystem_for(location, metastore)
    exists = filesystem.exists(location)
    if exists is None:
        return "its filesystem cannot be read from the console"
    if not exists:
        return ""
    if recorded is None:
        return "the relocation has no record of the files its job left there"
    extra = [entry.relative for entry in _unknown(filesystem.list_files(location) or [], recorded)]
    if extra:
        return f"{len(extra)} file(s) written or changed after the job (first: {extra[0]})"
    return None


@dataclass(frozen=True)
class Users:
    """The tables and partitions at, in or above some paths, and which of those tables are partitioned; indexed once
    by canonical location (sorted, and by exact location) so each path's users are found by bisection and its
    ancestors' lookups: O((U + N) log U + N · depth) for N paths and U users, not N · U comparisons."""

    found: tuple[LocationUser, ...]
    partitioned: frozenset[int]

    @cached_property
    def _sorted(self) -> tuple[list[str], list[LocationUser]]:
        ordered = sorted(self.found, key=lambda u: canonical(u.location))
        return [canonical(u.location) for u in ordered], ordered

    @cached_property
    def _at(self) -> dict[str, list[LocationUser]]:
        at: dict[str, list[LocationUser]] = {}
        for user in self.found:
            at.setdefault(canonical(user.location), []).append(user)
        return at

    def inside(self, path: str) -> list[LocationUser]:
        """The users strictly inside canonical ``path``: locations in [path + "/", path + "0") ('0' follows '/')."""
        keys, ordered = self._sorted
        prefix = path.rstrip("/")
        return ordered[bisect_left(keys, prefix + "/") : bisect_left(keys, prefix + "0")]

    def at(self, path: str) -> list[LocationUser]:
        return self._at.get(path, [])


def _users(metastore_name: str, paths: Sequence[str]) -> Users:
    """Who is at, in or above ``paths`` now, in the metastore (one query per chunk of paths, and one for the
    partitioned tables among them)."""
    if not paths:
        return Users((), frozenset())
    metastore = get_metastore(metastore_name)
    above = sorted({a for path in paths for a in ancestors(path)})
    found = location_users(metastore, sorted(set(paths)), ancestors=above)
    tables = {u.table_id for u in found if u.partition is None}
    partitioned = PartitionKey.objects.using(metastore.alias).filter(table_id__in=tables).values_list("table_id")
    return Users(tuple(found), frozenset(table_id for (table_id,) in partitioned))


def _using(path: str, users: Users) -> list[LocationUser]:
    """The users of canonical ``path``: at or in it, or above it, except a partitioned table's own root above it
    (Hive reads a partitioned table through its partitions, which are found themselves); in location order."""
    above = [u for a in ancestors(path) for u in users.at(a)
             if not (u.partition is None and u.table_id in users.partitioned)]  # fmt: skip
    found = [*above, *users.at(path), *users.inside(path)]
    return sorted(found, key=lambda u: (u.location, u.sd_id))


# Recording -------------------------------------------------------------------------------------------------------


def _unit_files(plan: dict[str, Any], unit: dict[str, Any]) -> dict[str, Files]:
    """Each side's files of one unit as the job left them: the source's as the plan listed them; the destination's
    as copied (a relocation: the same names and sizes) or, for a rewrite, as listed now (what the program wrote)."""
    prefix = normalize_location(unit["source"]).rstrip("/") + "/"
    source = [[f["source"].removeprefix(prefix), f["size"]] for f in unit["files"]]
    if plan.get("program") == "rewrite":
        listed = filesystem_for(unit["destination"], plan["metastore"]).list_files(unit["destination"]) or []
        return {"source": source, "destination": [[entry.relative, entry.size] for entry in listed]}
    return {"source": source, "destination": source}
