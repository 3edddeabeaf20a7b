"""
``MSCK [REPAIR] TABLE t [ADD|DROP|SYNC PARTITIONS]`` as Hive's ``Msck.repair`` and ``HiveMetaStoreChecker`` do it,
from one listing of the table's directory through the no-follow file layer:

- ``checkPartitionDirs``: below the table's directory, each level must be a directory ``key=value`` of the next
  partition key (``split("=")`` in two, the key matched ignoring case); hidden names (``_…``, ``.…``) are skipped with
  what is below them; a file above the last level, or a directory of another shape, is invalid. Invalid paths follow
  ``hive.msck.path.validation`` (``MetastoreConfig.msck_path_validation``): ``throw`` (Hive's default) refuses the
  repair, ``skip`` and ``ignore`` leave them out.
- ``Msck.repair`` (unless ``ignore``): a value whose escaped form is not the directory's own text cannot be added
  ("due to invalid characters in the name"): refused (``throw``) or skipped (``skip``).
- Partitions not in the metastore: directories whose path is no partition's location (``partPaths``) and whose name
  is no partition's (``add_partitions(…, ifNotExists=true)``); they are added at ``<table>/<name>`` with the table's
  storage descriptor (``createMetaPartitionObject``) and their quick statistics, batched for the events.
- Partitions not on the filesystem (DROP, SYNC; 3.x+): partitions whose location does not exist; they have no data to
  trash, so only their rows go (as ``dropPartitionsInBatches`` → ``drop_partitions_req``).

Everything is set-based: the listing is swept once in sorted order and compared with the table's partitions by sets
(never pairwise); the only per-partition filesystem calls are ``exists`` on the locations the listing did not see.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from catalog_admin.hive.partition_names import escape_path_name, partition_name, unescape_path_name
from catalog_admin.locations import FileEntry, filesystem_for, normalize_location
from catalog_admin.selectors.metastores import Metastore
from operations.planners.common import acid_warnings, build_preview, hive_seconds, snapshot
from operations.planners.partitions.add_rows import NewPartitionRow, add_partition_steps
from operations.planners.partitions.additions import Existing, added_listing, existing_partitions, quick_stats_params
from operations.planners.partitions.drop_steps import drop_steps
from operations.preview import HiveComparison, Preview
from operations.rules import Finding
from operations.specs import RepairPartitions
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = ("Sweep", "plan_msck_repair", "sweep_listing")

VALIDATION = ("throw", "skip", "ignore")
# A value FileUtils.escapePathName leaves as it is (and unescapePathName too): no character of its escape set.
_PLAIN = re.compile(r"[^\x00-\x1f\"#%'*/:=?\\\x7f{\[\]^]+")


@dataclass
class Sweep:
    """What one listing of the table's directory holds: partition directories by relative path with their non-hidden
    files and bytes, the invalid paths (Hive's messages), and links found."""

    directories: dict[str, tuple[int, int]] = field(default_factory=dict)
    invalid: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)


def sweep_listing(files: list[FileEntry], keys: list[str], root: str) -> Sweep:
    """``checkPartitionDirs`` over a recursive listing (sorted; no link followed): one pass, no per-directory call."""
    sweep, depth = Sweep(), len(keys)
    checked: dict[str, bool] = {}
    for entry in files:
        if entry.symlink:
            sweep.links.append(entry.location)
            continue
        marked = "/" + entry.relative
        if "/_" in marked or "/." in marked:  # FileUtils.HIDDEN_FILES_PATH_FILTER, at any level
            continue
        parts = entry.relative.split("/")
        if len(parts) <= depth:
            sweep.invalid.append(f"MSCK finds a file rather than a directory when it searches for {entry.location}")
            continue
        path = "/".join(parts[:depth])
        if path not in checked:
            checked[path] = _valid_levels(parts[:depth], keys, root, sweep.invalid)
        if checked[path]:
            files_, size = sweep.directories.get(path, (0, 0))
            sweep.directories[path] = (files_ + 1, size + entry.size)
    return sweep


def _valid_levels(levels: list[str], keys: list[str], root: str, invalid: list[str]) -> bool:
    for position, level in enumerate(levels):
        pieces = level.split("=")
        where = f"{root}/{'/'.join(levels[: position + 1])}"
        if len(pieces) != 2:
            invalid.append(f"Invalid partition name {where}")
            return False
        if pieces[0] != keys[position]:  # Hive ignores case here, then names the partition only from exact keys
            invalid.append(f"Unexpected partition key {pieces[0]} found at {where}")
            return False
    return True


def plan_msck_repair(metastore: Metastore, state: TableState, spec: RepairPartitions) -> Preview:
    """The plan of an ``MSCK REPAIR TABLE`` on ``state``: a pure read of the metastore and one listing."""
    blockers, warnings = _form_blockers(metastore, state, spec), list(acid_warnings(metastore, state))
    if blockers:
        return build_preview(metastore, state, spec, steps=[], after=snapshot(state), blockers=blockers)
    root = normalize_location(state.location or "")
    keys = [k.name.lower() for k in state.partition_keys]
    filesystem = filesystem_for(root, metastore.name)
    listing = filesystem.list_files(root)
    existing = existing_partitions(metastore, state)
    if listing is None:
        warnings.append(
            Finding("table_directory_missing", "msck", f"{root} does not exist: nothing to repair.", "warning")
        )
        listing = []
    sweep = sweep_listing(listing, keys, root)
    blockers += [
        Finding("symlink_in_data", "containment", f"{link} is a symbolic link: the console follows none.")
        for link in sweep.links
    ]
    validation = metastore.config.msck_path_validation
    candidates, rejected = _candidates(metastore, sweep, existing, keys, root, validation)
    invalid = sweep.invalid + rejected
    if invalid and validation == "throw":
        blockers += [Finding("msck_invalid_path", "msck", message) for message in invalid]
    elif invalid:
        warnings.append(
            Finding("msck_paths_skipped", "msck", f"{len(invalid)} path(s) left out (hive.msck.path.validation="
                    f"{validation}); first: {invalid[0]}", "warning")
        )  # fmt: skip
    adds = spec.mode in ("add", "sync") and spec.repair
    rows = [
        NewPartitionRow(name, values, f"{root}/{name}", quick_stats_params(*sweep.directories[path], metastore))
        for path, name, values in candidates
    ] if adds else []  # fmt: skip
    dropped = _missing(existing, sweep, root) if spec.mode in ("drop", "sync") else []
    if not spec.repair:
        dropped = []
    sql = MetastoreSql(metastore.alias)
    steps = [] if blockers else add_partition_steps(metastore, state, rows)
    if dropped and not blockers:
        steps += drop_steps(metastore, sql, [p.id for p in dropped], [p.sd_id for p in dropped if p.sd_id])
    sizes = {name: sweep.directories[path] for path, name, _values in candidates} if adds else {}
    stats = sum(s.expected_rows for s in steps if s.metastore_table == "PART_COL_STATS")
    return build_preview(
        metastore,
        state,
        spec,
        steps=steps,
        after=snapshot(state),
        blockers=blockers,
        warnings=warnings + _report(spec, candidates, dropped),
        partitions_touched=len(rows) + len(dropped),
        statistics_dropped=stats,
        drops=len(dropped),
        affected=added_listing(rows, sizes, dropped, state.partition_keys, _data(rows, sizes, dropped))
        if rows or dropped
        else None,
        hive=HiveComparison(
            str(metastore.schema.version),
            len(rows) + len(dropped),
            stats,
            hive_seconds(len(rows) + len(dropped), stats),
        ),  # fmt: skip
        inverse={
            "added_names": [row.name for row in rows],
            "added_count": len(rows),
            "dropped_ids": sorted(p.id for p in dropped),
            "dropped_partitions": [p.name for p in dropped[:100]],
        },
    )


def _form_blockers(metastore: Metastore, state: TableState, spec: RepairPartitions) -> list[Finding]:
    blockers = []
    if not state.partition_keys:
        blockers.append(Finding("not_partitioned", "msck", f"Table {state.ref} is not partitioned: nothing to repair."))
    if not state.location:
        blockers.append(Finding("no_table_location", "msck", f"Table {state.ref} has no location."))
    if spec.mode != "add" and not metastore.schema.capabilities.msck_drops_partitions:
        blockers.append(
            Finding("msck_mode_unsupported", "msck", f"Hive {metastore.schema.version} has no MSCK REPAIR TABLE … "
                    f"{spec.mode.upper()} PARTITIONS (3.0+): it only adds partitions.")
        )  # fmt: skip
    return blockers


def _candidates(
    metastore: Metastore, sweep: Sweep, existing: list[Existing], keys: list[str], root: str, validation: str
) -> tuple[list[tuple[str, str, tuple[str, ...]]], list[str]]:
    """Directories no partition has (by location, then by name), as ``(path, name, values)``, and the rejected ones."""
    known_locations = {normalize_location(p.location).rstrip("/") for p in existing if p.location}
    known_names = {p.name for p in existing}
    pattern = metastore.config.partition_name_whitelist
    found, rejected = [], []
    for path in sorted(sweep.directories):
        if f"{root}/{path}" in known_locations:
            continue
        raw = [level.split("=", 1)[1] for level in path.split("/")]
        if all(_PLAIN.fullmatch(value) for value in raw):  # nothing to escape: the path is the name (most of them)
            values, name, bad = tuple(raw), path, False
        else:
            values = tuple(unescape_path_name(value) for value in raw)
            name = partition_name(zip(keys, values, strict=True))
            bad = validation != "ignore" and any(escape_path_name(v) != r for v, r in zip(values, raw, strict=True))
        if name in known_names:
            continue
        if bad:
            rejected.append(f"Repair: Cannot add partition {path} due to invalid characters in the name")
            continue
        if pattern and not all(_whitelisted(pattern, v) for v in values):
            rejected.append(f"Partition {path} has a value not matched by the whitelist pattern '{pattern}'")
            continue
        found.append((path, name, values))
    return found, rejected


def _whitelisted(pattern: str, value: str) -> bool:
    return re.fullmatch(pattern, value) is not None


def _missing(existing: list[Existing], sweep: Sweep, root: str) -> list[Existing]:
    """Partitions whose location does not exist: those the listing saw are there; the others are asked one by one."""
    seen = {f"{root}/{path}" for path in sweep.directories}
    missing = []
    for partition in existing:
        if not partition.location:
            continue
        location = normalize_location(partition.location).rstrip("/")
        if location in seen:
            continue
        if filesystem_for(location).exists(location) is False:
            missing.append(partition)
    return missing


def _report(spec: RepairPartitions, candidates: list, dropped: list[Existing]) -> list[Finding]:
    if spec.repair:
        return []
    return [
        Finding("msck_check_only", "msck", f"MSCK without REPAIR only reports: {len(candidates)} partition(s) not in "
                f"the metastore; nothing is written.", "warning")
    ]  # fmt: skip


def _data(rows: list[NewPartitionRow], sizes: dict[str, tuple[int, int]], dropped: list[Existing]) -> str:
    size = sum(bytes_ for _files, bytes_ in sizes.values())
    drop = f"; {len(dropped)} partition(s) dropped whose directory is missing: no data to trash" if dropped else ""
    return f"{len(rows)} partition(s) added over {size} bytes already on disk (no file written){drop}."
