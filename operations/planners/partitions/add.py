"""
``ALTER TABLE t ADD [IF NOT EXISTS] PARTITION (…) [LOCATION '…'] …``: Hive's ``add_partitions`` (one call,
``HMSHandler.add_partitions_core``): every spec must name exactly the partition keys with values of their types
(``validatePartColumnType``), each value matches the name whitelist (``validatePartitionNameCharacters``), no
partition twice in the list ("Duplicate partitions in the list"), none that exists ("Partition already exists", or
skipped with ``IF NOT EXISTS``). A partition without LOCATION lives at ``<table location>/<partition name>``; a managed
partition's directory there is created when missing (``createLocationForAddedPartition``), inside the governed roots
only and through no link. Statistics as Hive 2.3's Driver writes them (checked in ``tests/witness``): a partition
without LOCATION gets the client's ``setBasicStatsStateForCreateTable`` (zeros, ``BASIC_STATS`` true;
``DDLSemanticAnalyzer.analyzeAlterTableAddParts`` with ``hive.stats.autogather``), which the metastore then keeps;
one with a LOCATION that exists gets the metastore's quick statistics (``updatePartitionStatsFast``). One difference
on purpose: a default-place directory that already holds files gets its quick statistics, not Hive's zeros marked
accurate (which would answer ``count(*)`` with 0 from statistics).
"""

from __future__ import annotations

from catalog_admin.hive.locations import is_inside
from catalog_admin.hive.partition_names import partition_name
from catalog_admin.locations import filesystem_for, linked_ancestors, normalize_location
from catalog_admin.selectors.locations import governed_roots
from catalog_admin.selectors.metastores import Metastore
from operations.containment import unsafe_path
from operations.planners.common import acid_warnings, build_preview, hive_seconds, snapshot
from operations.planners.partitions.add_rows import NewPartitionRow, add_partition_steps
from operations.planners.partitions.additions import (
    added_listing,
    created_partition_stats,
    existing_partitions,
    quick_stats_params,
    value_type_findings,
)
from operations.preview import HiveComparison, Preview
from operations.rules import Finding, check_partition_name_whitelist
from operations.specs import AddPartitions, NewPartition
from operations.table_state import TableState

__all__ = ("plan_add_partitions",)


def plan_add_partitions(metastore: Metastore, state: TableState, spec: AddPartitions) -> Preview:
    """The plan of an ``ADD PARTITION`` on ``state``: a pure read."""
    blockers: list[Finding] = []
    if not state.partition_keys:
        blockers.append(Finding("not_partitioned", "ddl", f"Table {state.ref} is not partitioned."))
        return build_preview(metastore, state, spec, steps=[], after=snapshot(state), blockers=blockers)
    keys = [k.name.lower() for k in state.partition_keys]
    wanted: list[tuple[NewPartition, tuple[str, ...], str]] = []
    for addition in spec.additions:
        values, findings = _values(state, keys, addition)
        blockers += findings
        if not findings:
            wanted.append((addition, values, partition_name(zip(keys, values, strict=True))))
    blockers += _duplicates([name for _a, _v, name in wanted])
    existing = {p.name for p in existing_partitions(metastore, state)}
    adding = []
    for addition, values, name in wanted:
        if name not in existing:
            adding.append((addition, values, name))
        elif not spec.if_not_exists:
            blockers.append(
                Finding("partition_exists", "ddl", f"Partition already exists: {state.ref} [{', '.join(values)}]")
            )
    rows, created, sizes, findings, warnings = _directories(metastore, state, adding)
    blockers += findings
    steps = add_partition_steps(metastore, state, rows) if rows and not blockers else []
    names = [row.name for row in rows]
    return build_preview(
        metastore,
        state,
        spec,
        steps=steps,
        after=snapshot(state),
        blockers=blockers,
        warnings=acid_warnings(metastore, state) + warnings,
        partitions_touched=len(rows),
        affected=added_listing(rows, sizes, [], state.partition_keys, _data(created, sizes)) if rows else None,
        hive=HiveComparison(str(metastore.schema.version), 1, 0, hive_seconds(len(rows), 0)),
        inverse={"added_names": names, "added_count": len(rows), "created_directories": created},
        directories_created=tuple(created) if steps else (),
    )


def _values(state: TableState, keys: list[str], addition: NewPartition) -> tuple[tuple[str, ...], list[Finding]]:
    """The spec's values in key order, or Hive's refusal of the spec."""
    given = {k.lower(): v for k, v in addition.values}
    if sorted(given) != sorted(keys) or len(given) != len(addition.values):
        spec = ", ".join(f"{k}={v}" for k, v in addition.values)
        return (), [
            Finding(
                "partition_spec",
                "ddl",
                f"Partition spec {{{spec}}} must name exactly the partition keys {', '.join(keys)} of {state.ref}.",
            )
        ]
    values = tuple(given[k] for k in keys)
    empty = [k for k in keys if given[k] == ""]
    if empty:
        return values, [Finding("partition_spec", "ddl", f"Partition value of {empty[0]} is empty.")]
    return values, value_type_findings(state.partition_keys, values)


def _duplicates(names: list[str]) -> list[Finding]:
    seen: set[str] = set()
    twice = [name for name in names if name in seen or seen.add(name)]  # type: ignore[func-returns-value]
    return [Finding("duplicate_partition", "ddl", f"Duplicate partitions in the list: {twice[0]}")] if twice else []


def _directories(
    metastore: Metastore, state: TableState, adding: list[tuple[NewPartition, tuple[str, ...], str]]
) -> tuple[list[NewPartitionRow], list[str], dict[str, tuple[int, int]], list[Finding], list[Finding]]:
    """Each partition's location, the directories to create, sizes found, and the blockers and warnings."""
    roots = governed_roots(metastore)
    rows, created, sizes = [], [], {}
    blockers: list[Finding] = []
    missing: list[str] = []
    whitelist = metastore.config.partition_name_whitelist
    for addition, values, name in adding:
        blockers += check_partition_name_whitelist(list(values), whitelist, metastore.schema.version)
        location = _given_location(state, addition.location)
        if location is None and not state.location:
            blockers.append(Finding("no_table_location", "ddl", f"Table {state.ref} has no location."))
            continue
        location = location or f"{normalize_location(state.location or '')}/{name}"
        blockers += _location_blockers(location, roots.governs(location) or roots.allow_outside, addition)
        filesystem = filesystem_for(location, metastore.name)
        exists = filesystem.exists(location)
        quick = filesystem.quick_stats(location) if exists else None
        files, size = (quick.files, quick.bytes) if quick else (0, 0)
        if exists:
            sizes[name] = (files, size)
        if addition.location is None and not files:  # the client's zeros, then no quick statistics (they are there)
            rows.append(NewPartitionRow(name, values, location, created_partition_stats(metastore)))
        elif exists:  # the metastore's updatePartitionStatsFast on a directory that existed
            rows.append(NewPartitionRow(name, values, location, quick_stats_params(files, size, metastore)))
        else:
            rows.append(NewPartitionRow(name, values, location))
        if exists:
            continue
        if addition.location is None and not state.is_external and location.startswith("file:"):
            if not roots.governs(location) or not is_inside(location, state.location or ""):
                blockers.append(_outside(location))
            created.append(location)
        else:
            missing.append(location)
    blockers += [
        Finding("symlink_in_path", "containment", f"{location} is reached through the symbolic link {link}.")
        for location, link in linked_ancestors([r.location for r in rows]).items()
    ]
    warnings = [
        Finding(
            "directory_not_created",
            "ddl",
            f"{len(missing)} partition director(ies) do not exist and are not created (first: {missing[0]}): the "
            "console creates directories only for managed partitions at their default place.",
            "warning",
        )
    ] if missing else []  # fmt: skip
    return rows, created, sizes, blockers, warnings


def _given_location(state: TableState, given: str | None) -> str | None:
    """The LOCATION as Hive 2.3's client resolves it (``new Path(tbl.getPath(), location)``): a relative one below
    the table's directory."""
    if given is None or not given.strip():
        return None if given is None else given
    if "://" in given or given.startswith(("/", "file:", "s3", "hdfs:")):
        return normalize_location(given)
    return f"{normalize_location(state.location or '')}/{given.strip('/')}"


def _location_blockers(location: str, governed: bool, addition: NewPartition) -> list[Finding]:
    if addition.location is not None and not addition.location.strip():
        return [Finding("unsafe_location", "containment", "The partition's LOCATION is empty.")]
    unsafe = unsafe_path(location)
    if unsafe:
        return [Finding("unsafe_location", "containment", f"The location {location} is refused: {unsafe}.")]
    return [] if governed else [_outside(location)]


def _outside(location: str) -> Finding:
    return Finding(
        "outside_roots", "containment", f"{location} is outside the metastore's governed roots: nothing is added there."
    )


def _data(created: list[str], sizes: dict[str, tuple[int, int]]) -> str:
    found = sum(size for _files, size in sizes.values())
    made = f"{len(created)} new empty director(ies) created; " if created else ""
    return f"{made}{len(sizes)} existing director(ies) with {found} bytes registered as they are; no file is written."
