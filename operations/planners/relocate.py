"""
Relocate: copy a table's or some partitions' data to a new root, then re-point the metastore in one transaction.

Hive's ``SET LOCATION`` changes metadata only (rule 10.5); ``SET LOCATION '…' WITH DATA`` is the console's extension
that also moves the data, as a governed job: the preview lists what a Spark program will copy (:class:`DataCopy`:
one unit per partition, or the root of an unpartitioned table), and its steps re-point the storage descriptors,
set-based. The copies keep every file as it is (same bytes, same names), so statistics and bucketing stay valid.
The source is kept for the retention time (``CATALOG_RELOCATION_RETENTION``); a revert swaps back meanwhile.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace

from django.conf import settings
from django.db.models import F

from catalog_admin.locations import filesystem_for
from catalog_admin.models import Partition, StorageDescriptor
from catalog_admin.selectors.metastores import Metastore
from operations.choices import JobKind
from operations.containment import (
    MoveContext,
    canonical,
    is_inside,
    move_blockers,
    new_location_blockers,
    new_locations_blockers,
)
from operations.planners.common import build_preview, metadata_only_hive, snapshot
from operations.planners.data_scope import (
    data_work_blockers,
    data_work_warnings,
    estimate_duration,
    sampled_listings,
    scope_of,
    symlink_blockers,
)
from operations.planners.locations import _absolute_location_blockers, _replication_blockers
from operations.planners.partitions.chunks import chunks
from operations.planners.partitions.matching import matching_partitions, predicate_blockers
from operations.planners.spark_tables import datasource_move_blockers, path_steps, serde_params_after
from operations.preview import TABLE_UNIT, CopyUnit, DataCopy, DirectoryMove, HiveComparison, Preview, Step
from operations.rules import Finding
from operations.specs import Relocate
from operations.sql import MetastoreSql
from operations.table_state import TableState, read_partition_scope

__all__ = ("moves_in_only", "plan_relocate", "relocated_location", "relocation_staging", "resuming_into")

# The destinations a resumed relocation job copies into: its own partial copy there is expected, not a blocker.
_RESUMING_INTO: ContextVar[frozenset[str]] = ContextVar("resuming_into", default=frozenset())


@contextmanager
def resuming_into(destination: str | Sequence[str]) -> Iterator[None]:
    """While the block runs, previews of a relocation to ``destination`` (or a rewrite's staging directories) do not
    block on it existing: the job that checked it was free before its first copy previews again to resume (its
    verified units are there)."""
    destinations = [destination] if isinstance(destination, str) else destination
    token = _RESUMING_INTO.set(frozenset(canonical(d) for d in destinations))
    try:
        yield
    finally:
        _RESUMING_INTO.reset(token)


RULE = "relocate"


def relocated_location(old_root: str, new_root: str, location: str) -> str:
    """Where a location below ``old_root`` (as stored) lands below ``new_root`` (its path below the root kept)."""
    return new_root.rstrip("/") + location[len(old_root.rstrip("/")) :]


def plan_relocate(metastore: Metastore, state: TableState, spec: Relocate) -> Preview:
    """The copy's units, their blockers and the re-pointing statements. A partitioned table relocated to its own root
    (:func:`moves_in_only`) moves in only its partitions outside the root; the rest stays where it is."""
    sql = MetastoreSql(metastore.alias)
    destination = canonical(spec.location) if spec.location.strip() else ""
    in_place = moves_in_only(state, spec)
    blockers = _table_blockers(metastore, state, spec, destination, in_place=in_place)
    partitions, selection = _partitions_in_scope(metastore, state, spec, blockers)
    outside = _outside_root(state, spec, partitions)
    if outside and selection is not None:  # the root's prefix does not find them
        selection = {"ids": sorted(p["id"] for p in (outside if in_place else partitions))}
    if in_place:
        blockers += _nothing_outside_blockers(state, outside, blockers)
        partitions = outside
    units = _units(state, spec, destination, partitions, blockers, outside) if not blockers else []
    if units and in_place:
        blockers += moving_in_blockers(metastore, state, units, {p["name"]: p["sd_id"] for p in outside})
    elif units:
        by_name = partitions if spec.partitions else outside
        sd_ids = {p["name"]: p["sd_id"] for p in by_name}
        blockers += destination_blockers(metastore, state, destination, units, sd_ids, whole=not spec.partitions)
    data_copy = _data_copy(metastore, units, blockers)
    steps = [] if blockers else _steps(sql, state, spec, destination, partitions, outside, in_place=in_place)
    preview = build_preview(
        metastore,
        state,
        spec,
        steps=steps,
        after=snapshot(state, location=destination, serde_params=serde_params_after(state, destination))
        if not spec.partitions and destination and not in_place
        else snapshot(state),
        blockers=blockers,
        warnings=_warnings(metastore, state, spec, data_copy, outside, destination, in_place=in_place),
        partitions_touched=len(partitions),
        hive=_hive(metastore),
        inverse={"relocate": True},
        data_copy=data_copy,
    )
    scope = read_partition_scope(metastore, state.table_id, selection) if selection else None
    return replace(preview, scope=scope)


def moves_in_only(state: TableState, spec: Relocate) -> bool:
    """``SET LOCATION '<the table's own root>' WITH DATA`` of a whole table: nothing moves but its partitions outside
    the root, each to ``<root>/<partition name>`` (issue 29: "re-point the outside"; the partition list's
    "outside the table root" filter offers it)."""
    if spec.partitions or not state.is_partitioned or not state.location or not spec.location.strip():
        return False
    return canonical(spec.location) == canonical(state.location)


def relocation_staging(preview: Preview) -> str | list[str]:
    """Where a relocation's job writes before its swap, which a cancel removes: the new location, or, for a table
    moving in its outside partitions, each partition's new directory below the (live) root, never the root itself."""
    assert isinstance(preview.spec, Relocate)
    if preview.data_copy is not None and canonical(preview.spec.location) == canonical(preview.before.location or ""):
        return [unit.destination for unit in preview.data_copy.units]
    return preview.spec.location


# Scope ---------------------------------------------------------------------------------------------------------------


def _table_blockers(
    metastore: Metastore, state: TableState, spec: Relocate, destination: str, *, in_place: bool
) -> list[Finding]:
    blockers = _absolute_location_blockers(spec.location) + _replication_blockers(metastore, state)
    if state.is_view:
        blockers.append(Finding("view_location", "ddl", f"{state.ref} is a view and has no data to relocate"))
    elif not state.is_partitioned and destination and destination == canonical(state.location or ""):
        blockers.append(Finding("already_there", RULE, f"{state.ref} already lies at {destination}: nothing to move."))
    if spec.partitions and not state.is_partitioned:
        blockers.append(Finding("not_partitioned", "ddl", f"Table {state.ref} is not partitioned"))
    elif spec.partitions:
        blockers += predicate_blockers(state, spec)  # type: ignore[arg-type]  # it reads only .specs
    # The copies keep every file as it is (same bytes, same names): bucketing stays valid, so this is no rewrite.
    blockers += data_work_blockers(metastore, state, operation=RULE, rewrite=False, locations=[destination])
    if not spec.partitions and not in_place:
        blockers += datasource_move_blockers(state, RULE)
    for side, location in (("source", state.location or ""), ("destination", destination)):
        if location and filesystem_for(location, metastore.name).exists(location) is None:
            blockers.append(
                Finding(
                    "unreachable_filesystem",
                    RULE,
                    f"The console has no client for the {side} {location}: configure it (README, filesystems).",
                )
            )
    return blockers


def _partitions_in_scope(
    metastore: Metastore, state: TableState, spec: Relocate, blockers: list[Finding]
) -> tuple[list[dict], dict | None]:
    """The partitions that move (``{id, name, sd_id, location}``) and how the scope digest finds them again."""
    if blockers or not state.is_partitioned:
        return [], None
    if spec.partitions:
        rows = [
            {"id": r["id"], "name": r["name"], "sd_id": r["sd_id"], "location": r["sd__location"]}
            for r in matching_partitions(metastore, state, spec)  # type: ignore[arg-type]
        ]
        if not rows:
            blockers.append(Finding("nothing_matches", RULE, f"No partition of {state.ref} matches {spec.partitions}"))
        return rows, {"ids": sorted(r["id"] for r in rows)}
    rows = list(
        Partition.objects.using(metastore.alias)
        .filter(table_id=state.table_id)
        .order_by("name")
        .values("id", "name", "sd_id", location=F("sd__location"))
    )
    return rows, {"prefixes": [(state.location or "").rstrip("/") + "/"]} if state.location else None


def _nothing_outside_blockers(state: TableState, outside: list[dict], blockers: list[Finding]) -> list[Finding]:
    if outside or blockers:
        return []
    message = f"Every partition of {state.ref} already lies below its root {state.location}: nothing to move in."
    return [Finding("nothing_outside_root", RULE, message)]


def _outside_root(state: TableState, spec: Relocate, partitions: list[dict]) -> list[dict]:
    """A whole table's partitions whose directory is not below its root (as stored): they move by name, to
    ``<new root>/<partition name>``, as chosen partitions do (issue 29: they blocked the table's relocation, and the
    fix was one hand-written statement per partition)."""
    if spec.partitions or not state.is_partitioned:
        return []
    root = (state.location or "").rstrip("/") + "/"
    return [p for p in partitions if not (p["location"] or "").startswith(root)]


def _units(
    state: TableState,
    spec: Relocate,
    destination: str,
    partitions: list[dict],
    blockers: list[Finding],
    outside: list[dict],
) -> list[CopyUnit]:
    if not destination:
        return []
    if not state.is_partitioned:
        return [CopyUnit(TABLE_UNIT, canonical(state.location or ""), destination)]
    if spec.partitions:
        return [CopyUnit(p["name"], canonical(p["location"]), f"{destination}/{p['name']}") for p in partitions]
    nowhere = [p["name"] for p in outside if not p["location"]]
    if nowhere:
        blockers.append(
            Finding(
                "partition_without_location",
                RULE,
                f"{len(nowhere)} partition(s) have no location (first: {nowhere[0]}): there is no data to copy for "
                "them; give them one (ALTER TABLE … PARTITION (…) SET LOCATION) or drop them first.",
            )
        )
        return []
    root = (state.location or "").rstrip("/")  # as stored: the prefix rewrite compares the stored spelling
    moved_out = {p["name"] for p in outside}
    units = _units_below_root(root, destination, [p for p in partitions if p["name"] not in moved_out])
    units += [CopyUnit(p["name"], canonical(p["location"]), f"{destination}/{p['name']}") for p in outside]
    taken: dict[str, str] = {}
    for unit in units:
        other = taken.setdefault(unit.destination, unit.key)
        if other != unit.key:
            blockers.append(
                Finding(
                    "relocation_collision",
                    RULE,
                    f"Partitions {other} and {unit.key} would both move to {unit.destination}: relocate one of them "
                    "with its own PARTITION (…) clause first.",
                )
            )
            return []
    return sorted(units, key=lambda u: u.key)


def _units_below_root(root: str, destination: str, partitions: list[dict]) -> list[CopyUnit]:
    """Each partition's unit: its canonical location and the same path below the new root (as
    :func:`relocated_location`). The canonical root is computed once and the path below it appended, unless that path
    holds an empty or dot-led segment (then :func:`canonical` in full): 100,000 partitions take a few string joins."""
    canonical_root, new_root = canonical(root), destination.rstrip("/")
    units = []
    for partition in partitions:
        location = partition["location"]
        rest = location[len(root) :]
        odd = "//" in rest or "/." in rest or rest.endswith(("/", " ", "\t", "\n"))
        units.append(
            CopyUnit(partition["name"], canonical(location) if odd else canonical_root + rest, new_root + rest)
        )
    return units


# Destination ---------------------------------------------------------------------------------------------------------


def _unit_context(state: TableState, unit: CopyUnit, sd_ids: dict[str, int]) -> MoveContext:
    """A partition's own directory, below its table's root; or the whole table."""
    if unit.key in sd_ids:
        return MoveContext(sd_ids=frozenset({sd_ids[unit.key]}), enclosing=frozenset({state.sd_id} - {None}))
    return MoveContext(table_id=state.table_id)


def _guarded_moves(
    state: TableState, destination: str, units: list[CopyUnit], sd_ids: dict[str, int], *, whole: bool
) -> tuple[list[DirectoryMove], dict[str, MoveContext]]:
    """The moves the containment guard checks: a whole partitioned table's units below its root are covered by one
    move of the root, as a table rename's are (its own rows left out of the query): a 100,000-partition table is one
    check, not 100,000. Chosen partitions, and a whole table's partitions outside its root (``sd_ids``), are checked
    one by one."""
    moves: list[DirectoryMove] = []
    contexts: dict[str, MoveContext] = {}
    own = [u for u in units if u.key in sd_ids] if state.is_partitioned else units
    below = len(units) - len(own)
    if state.is_partitioned and whole and below:
        root = canonical(state.location or "")
        moves.append(DirectoryMove(root, destination, below, 0, None, None, None, None, True))
        contexts[root] = MoveContext(table_id=state.table_id)
    moves += [DirectoryMove(u.source, u.destination, 1, 0, None, None, None, None, True) for u in own]
    contexts.update({u.source: _unit_context(state, u, sd_ids) for u in own})
    return moves, contexts


def destination_blockers(
    metastore: Metastore,
    state: TableState,
    destination: str,
    units: list[CopyUnit],
    sd_ids: dict[str, int],
    *,
    whole: bool = False,
) -> list[Finding]:
    """Both ends of every unit lie inside the governed roots (whatever SET LOCATION may point at, the console writes
    and later deletes data only there) and are nobody else's; the new root does not overlap the data it copies, and
    nothing is there yet."""
    moves, contexts = _guarded_moves(state, destination, units, sd_ids, whole=whole)
    blockers = move_blockers(metastore, moves, contexts)
    blockers += new_location_blockers(metastore, destination, own=MoveContext(table_id=state.table_id))
    blockers = list(dict.fromkeys(blockers))
    overlapping = next((m for m in moves if is_inside(destination, m.source) or is_inside(m.source, destination)), None)
    if overlapping:
        blockers.append(
            Finding(
                "relocation_overlaps",
                RULE,
                f"{destination} and {overlapping.source} contain one another: the copy would read what it writes.",
            )
        )
        return blockers
    filesystem = filesystem_for(destination, metastore.name)
    if canonical(destination) not in _RESUMING_INTO.get() and filesystem.exists(destination):
        blockers.append(
            Finding("destination_exists", RULE, f"{destination} already exists: relocate into a new directory.")
        )
    return blockers


def moving_in_blockers(
    metastore: Metastore, state: TableState, units: list[CopyUnit], sd_ids: dict[str, int]
) -> list[Finding]:
    """A table's outside partitions moving to ``<root>/<partition name>``: each source is only that partition's, each
    new directory inside the governed roots, nobody else's, and not there yet (the table's own root above them is
    the point)."""
    moves = [DirectoryMove(u.source, u.destination, 1, 0, None, None, None, None, True) for u in units]
    blockers = move_blockers(metastore, moves, {u.source: _unit_context(state, u, sd_ids) for u in units})
    own = MoveContext(table_id=state.table_id)
    blockers += new_locations_blockers(metastore, [u.destination for u in units], own=own)
    resuming = _RESUMING_INTO.get()
    filesystem = filesystem_for(units[0].destination, metastore.name)
    there = [
        u.destination for u in units if canonical(u.destination) not in resuming and filesystem.exists(u.destination)
    ]
    if there:
        more = f" and {len(there) - 1} more" if len(there) > 1 else ""
        blockers.append(
            Finding(
                "destination_exists",
                RULE,
                f"{there[0]}{more} already exist(s): a partition moving in would mix its files with what is there; "
                "move or remove it first.",
            )
        )
    return list(dict.fromkeys(blockers))


# The data copy ---------------------------------------------------------------------------------------------------


def _data_copy(metastore: Metastore, units: list[CopyUnit], blockers: list[Finding]) -> DataCopy | None:
    """The units with their size (every unit listed up to the sample limit, the rest extrapolated from an evenly
    spaced sample) and the copy's duration from earlier relocate jobs on the same engine; a symbolic link in the
    listed units is a blocker (the copy plan, listing every unit, refuses one too)."""
    if not units:
        return None
    sources = [u.source for u in units]
    listings = sampled_listings(metastore, sources)
    blockers += symlink_blockers(listings, RULE)
    scope = scope_of(metastore, listings, units=len(units), ends=[units[0].source, units[0].destination])
    duration = estimate_duration(JobKind.RELOCATE, scope.bytes, units=len(units))  # a relocate job (relocate_jobs.py)
    return DataCopy(
        units=tuple(units),
        files=scope.files,
        bytes=scope.bytes,
        sampled_units=scope.sampled_units,
        sample_files=scope.sample_files,
        sample_bytes=scope.sample_bytes,
        estimated_seconds=duration.seconds,
        retention_hours=settings.CATALOG_RELOCATION_RETENTION.total_seconds() / 3600,
        scope=scope,
        duration=duration,
    )


# Statements ------------------------------------------------------------------------------------------------------


def _steps(
    sql: MetastoreSql,
    state: TableState,
    spec: Relocate,
    destination: str,
    partitions: list[dict],
    outside: list[dict],
    *,
    in_place: bool,
) -> list[Step]:
    """Set-based re-pointing: the table's root and every partition below it by prefix (those outside it by name below
    the new root), or the chosen partitions by name below the new root. Each step first captures the old locations
    (the before-image a revert writes back)."""
    sds, sd_id, location = (
        sql.table(StorageDescriptor),
        sql.col(StorageDescriptor, "id"),
        sql.col(StorageDescriptor, "location"),
    )
    capture = f"SELECT {sd_id}, {location} FROM {sds} WHERE "
    if spec.partitions or in_place:
        return [
            _partitions_by_name_step(sql, capture, destination, chunk)
            for chunk in chunks([p["sd_id"] for p in partitions])
        ]
    steps = []
    if state.sd_id is not None:
        where = f"{sd_id} = %s AND {location} = %s"
        steps.append(
            Step(f"Point the table at {destination}", "SDS", "update",
                 f"UPDATE {sds} SET {location} = %s WHERE {where}", (destination, state.sd_id, state.location), 1,
                 capture + where, (state.sd_id, state.location))
        )  # fmt: skip
        steps += path_steps(sql, state, destination)
    below = len(partitions) - len(outside)
    if below:
        old = (state.location or "").rstrip("/") + "/"
        where = f"{sql.of_table_partitions(sd_id, 'sd')} AND {sql.has_prefix(location)}"
        params = (state.table_id, len(old), old)
        steps.append(
            Step(f"Re-point {below} partitions from {old} to {destination}/", "SDS", "update",
                 f"UPDATE {sds} SET {location} = {sql.replace_prefix(location)} WHERE {where}",
                 (destination + "/", len(old) + 1, *params), below, capture + where, params)
        )  # fmt: skip
    steps += [
        _partitions_by_name_step(sql, capture, destination, chunk) for chunk in chunks([p["sd_id"] for p in outside])
    ]
    return steps


def _partitions_by_name_step(sql: MetastoreSql, capture: str, destination: str, sd_ids: list[int]) -> Step:
    sds, sd_id, location = (
        sql.table(StorageDescriptor),
        sql.col(StorageDescriptor, "id"),
        sql.col(StorageDescriptor, "location"),
    )
    named = (
        f"(SELECT {sql.concat('%s', 'p.' + sql.col(Partition, 'name'))} FROM {sql.table(Partition)} p "
        f"WHERE p.{sql.col(Partition, 'sd')} = {sds}.{sd_id})"
    )
    where = f"{sd_id} IN ({', '.join(['%s'] * len(sd_ids))})"
    return Step(
        f"Point {len(sd_ids)} partitions at {destination}/<partition name>", "SDS", "update",
        f"UPDATE {sds} SET {location} = {named} WHERE {where}", (destination + "/", *sd_ids), len(sd_ids),
        capture + where, tuple(sd_ids),
    )  # fmt: skip


# Findings for the steward --------------------------------------------------------------------------------------------


def _warnings(
    metastore: Metastore,
    state: TableState,
    spec: Relocate,
    data_copy: DataCopy | None,
    outside: list[dict],
    destination: str,
    *,
    in_place: bool,
) -> list[Finding]:
    warnings = data_work_warnings(state, RULE)
    if outside and data_copy is not None:
        more = f" and {len(outside) - 5} more" if len(outside) > 5 else ""
        named = ", ".join(p["name"] for p in outside[:5]) + more
        rest = "nothing else moves" if in_place else "every partition lies below the new root"
        warnings.append(
            Finding(
                "partitions_outside_root_moved",
                RULE,
                f"{len(outside)} partition(s) lie outside the table's root ({named}): they move to "
                f"{destination}/<partition name>, so after the swap {rest}.",
                "warning",
            )
        )
    if data_copy is not None:
        hours = data_copy.retention_hours
        warnings.append(
            Finding(
                "source_retained",
                RULE,
                f"The source data is kept for {hours:g} hour(s) after the swap (revert swaps back meanwhile), then "
                "removed by the relocation cleanup.",
                "warning",
            )
        )
        if data_copy.is_sampled:
            warnings.append(
                Finding(
                    "size_sampled",
                    RULE,
                    f"Size estimated from {data_copy.sampled_units} of {len(data_copy.units)} partitions "
                    f"({data_copy.sample_files} files, {data_copy.sample_bytes} bytes listed; evenly spaced by "
                    "name, scaled up to all).",
                    "warning",
                )
            )
        if data_copy.scope is not None and data_copy.scope.copy_and_delete:
            warnings.append(
                Finding(
                    "object_store_copy",
                    RULE,
                    f"An object store has no rename: the job copies {data_copy.files} files ({data_copy.bytes} "
                    "bytes) object by object, and the cleanup later deletes as many source objects.",
                    "warning",
                )
            )
    if state.is_partitioned and not spec.partitions and not in_place:
        warnings.append(
            Finding(
                "only_partition_data",
                RULE,
                "Only the partitions' directories are copied: other files directly under the old root stay there.",
                "warning",
            )
        )
    return warnings


def _hive(metastore: Metastore) -> HiveComparison:
    base = metadata_only_hive(metastore)
    return HiveComparison(
        base.version, 0, 0, base.estimated_seconds,
        notes=("Hive's SET LOCATION moves no data (rule 10.5): the data would have to be copied by hand (distcp).",),
        comparable=False,
    )  # fmt: skip
