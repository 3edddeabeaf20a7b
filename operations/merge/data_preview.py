"""
What data a merge's location rules move, read for the preview (nothing written): every imported partition, and every
unpartitioned table, whose location the rules rewrite to another directory is a copy unit. Its source is listed
through the no-follow file layer (``catalog_admin.locations``) within :data:`LISTED_FILES` files for the whole merge.

Blockers (one per kind, the first :data:`NAMED` subjects named, the rest counted): a symbolic link in the data, a
source outside the *source* metastore's governed roots, a destination not strictly inside the *target's*, a
destination that exists and holds files, a filesystem the console cannot read, a source on an object store the two
metastores are configured to reach differently (the copy uses the target's settings for both ends), more data than a
preview lists. A
source directory that does not exist holds no data: nothing to copy (Hive reads it as empty too); nor do the units
below a missing directory, which are not listed one by one.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.conf import settings

from catalog_admin.hive.locations import is_inside, normalize_location
from catalog_admin.locations import FileEntry, filesystem_for
from catalog_admin.selectors.locations import governed_roots
from catalog_admin.selectors.metastores import Metastore
from operations.choices import JobKind
from operations.containment import ancestors, named_links
from operations.merge.data_plan import DataCopyPlan, DataUnit
from operations.merge.plan import MergeBlocker
from operations.merge.reads import MetastoreReader
from operations.merge.request import MergeRequest
from operations.models import MergeImport
from operations.planners.data_scope import engine_reach_blockers, estimate_duration

__all__ = ("DEFAULT_COPY_BYTES_PER_SECOND", "LISTED_FILES", "data_copy_preview", "moved_locations")

LISTED_FILES = 200_000  # files a preview lists in all; a merge moving more is split (fewer databases at a time)
NAMED = 5  # subjects a data blocker names (the rest counted)
# Below benchmarks/merge_data_copy.py's in-process rate on the shared 2-core machine under load (400–630 MB/s at load
# 16–18; docs/benchmarks.md "Merge data copy against cp -r"), to stay on the safe side until a relocation job on the
# engine has run (then its measured throughput is used: the same verified copy).
DEFAULT_COPY_BYTES_PER_SECOND = 250e6

_UNITS_SQL = (
    'SELECT d."NAME", t."TBL_NAME", NULL, s."LOCATION" FROM "TBLS" t JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
    'JOIN "SDS" s ON s."SD_ID" = t."SD_ID" WHERE t."DB_ID" IN ({ids}) AND s."LOCATION" IS NOT NULL '
    'AND NOT EXISTS (SELECT 1 FROM "PARTITION_KEYS" k WHERE k."TBL_ID" = t."TBL_ID") '
    'UNION ALL SELECT d."NAME", t."TBL_NAME", p."PART_NAME", s."LOCATION" FROM "PARTITIONS" p '
    'JOIN "TBLS" t ON t."TBL_ID" = p."TBL_ID" JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
    'JOIN "SDS" s ON s."SD_ID" = p."SD_ID" WHERE t."DB_ID" IN ({ids}) AND s."LOCATION" IS NOT NULL'
)


@dataclass
class _Findings:
    """Subjects per blocker kind, gathered while listing."""

    found: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def add(self, code: str, subject: str) -> None:
        self.found[code].append(subject)

    def blockers(self, source: Metastore, target: Metastore) -> list[MergeBlocker]:
        return [_blocker(code, subjects, source, target) for code, subjects in sorted(self.found.items()) if subjects]


def data_copy_preview(
    request: MergeRequest, source: Metastore, target: Metastore, src: MetastoreReader, ids: tuple[int, ...]
) -> tuple[DataCopyPlan, list[MergeBlocker]]:
    """The units the merge copies (files and bytes listed now) with the estimate, and what blocks copying them."""
    moved = moved_locations(request, src, ids)
    findings, units, budget = _Findings(), [], LISTED_FILES
    source_roots, target_roots = governed_roots(source), governed_roots(target)
    unfinished = _unfinished_copies(request)
    absent = "\0"  # the last directory found missing (sources in path order): what lies below it is not listed
    for key, origin, destination in moved:
        if origin.startswith(absent):
            continue
        if not any(is_inside(origin, root) for root in source_roots.locations):
            findings.add("data_source_outside_roots", f"{key} ({origin})")
            continue
        if not target_roots.governs(destination):
            findings.add("data_destination_outside_roots", f"{key} ({destination})")
            continue
        listed = _listed(origin, source.alias, budget, findings, key)
        if listed is None:
            absent = _highest_missing(origin, source.alias) + "/"
            continue
        budget -= len(listed)
        if budget < 0:
            findings.add("data_too_large", f"more than {LISTED_FILES:,} files")
            break
        if links := [entry.location for entry in listed if entry.symlink]:
            findings.found["data_symlink"] += links
            continue
        if listed:
            if destination not in unfinished:
                _check_destination(destination, target.alias, findings, key)
            units.append(DataUnit(key, origin, destination, len(listed), sum(entry.size for entry in listed)))
    plan = _with_estimate(tuple(sorted(units, key=lambda unit: unit.key)))
    return plan, [*findings.blockers(source, target), *_reach_blockers(units, source, target)]


def _reach_blockers(units: list[DataUnit], source: Metastore, target: Metastore) -> list[MergeBlocker]:
    """Each filesystem the copy job could not reach, as the data jobs' previews say it (``engine_unreachable``):
    the sources with the source metastore's settings, the destinations with the target's."""
    sides = ((source, [unit.source for unit in units]), (target, [unit.destination for unit in units]))
    return [
        MergeBlocker("data_engine_unreachable", metastore.name, finding.message)
        for metastore, locations in sides
        for finding in engine_reach_blockers(metastore, locations, "merge")
    ]


def moved_locations(request: MergeRequest, src: MetastoreReader, ids: tuple[int, ...]) -> list[tuple[str, str, str]]:
    """(key, source, destination) of every imported partition and unpartitioned table whose location the rules put in
    another directory, each source directory once, in path order (what lies below a missing directory is then
    skipped in one comparison)."""
    if not ids or not request.location_rules:
        return []
    marks = ", ".join(str(int(i)) for i in ids)
    found: dict[str, tuple[str, str, str]] = {}
    for database, table, part_name, location in src.rows(_UNITS_SQL.format(ids=marks)):
        if not location or not location.strip():
            continue
        origin = normalize_location(location)  # (a '.'/'..' location is an unsafe_location blocker of validation)
        if origin in found:
            continue
        destination = request.rewrite(origin) or ""
        if origin == destination:
            continue
        key = f"{request.new_name(database.lower())}.{table.lower()}" + (f"/{part_name}" if part_name else "")
        found[origin] = (key, origin, destination)
    return [found[origin] for origin in sorted(found)]


def _listed(location: str, alias: str, budget: int, findings: _Findings, key: str) -> list[FileEntry] | None:
    """The files under ``location`` (at most ``budget`` + 1); None when there is nothing to copy or it is unreadable
    (a finding)."""
    filesystem = filesystem_for(location, alias)
    listed = filesystem.list_files(location, limit=max(budget, 0) + 1)
    if listed is None and filesystem.exists(location) is None:
        findings.add("data_unreadable", f"{key} ({location})")
    return listed


def _unfinished_copies(request: MergeRequest) -> set[str]:
    """Destinations an unfinished merge from the source into the target copied into: its own, resumed or reverted
    with it (the ``unfinished_merge`` blocker says so), not someone else's files."""
    merges = MergeImport.objects.filter(source=request.source, target=request.target, state__in=MergeImport.UNFINISHED)
    return {unit["destination"] for merge in merges for unit in merge.data_copy.get("units", [])}


def _highest_missing(location: str, alias: str) -> str:
    """The outermost of ``location`` and its parents that does not exist (``location`` is missing), so that the
    partitions of a table whose directory is gone are not listed one by one."""
    filesystem, missing = filesystem_for(location, alias), location
    for parent in ancestors(location):
        if filesystem.exists(parent) is not False:
            break
        missing = parent
    return missing


def _check_destination(destination: str, alias: str, findings: _Findings, key: str) -> None:
    filesystem = filesystem_for(destination, alias)
    if filesystem.exists(destination) is None:
        findings.add("data_unreadable", f"{key} ({destination})")
    elif filesystem.list_files(destination, limit=1):
        findings.add("data_destination_exists", f"{key} ({destination})")


def _with_estimate(units: tuple[DataUnit, ...]) -> DataCopyPlan:
    """The plan with its copy rate: the relocations' measured throughput (the same verified copy), else the
    benchmark's figure."""
    size = sum(unit.bytes for unit in units)
    measured = estimate_duration(JobKind.RELOCATE, size, program="relocate")
    if measured.median_bytes_per_second:
        basis = f"relocation jobs (the same verified copy) {measured.basis}"
        return DataCopyPlan(units, measured.median_bytes_per_second, basis)
    rate = float(getattr(settings, "CATALOG_MERGE_COPY_BYTES_PER_SECOND", DEFAULT_COPY_BYTES_PER_SECOND))
    return DataCopyPlan(units, rate, "the benchmark's figure (CATALOG_MERGE_COPY_BYTES_PER_SECOND)")


_MESSAGES = {
    "data_symlink": "symbolic link(s) in the data the merge would copy: {named}. The console never follows a link: "
    "remove or replace them before merging.",
    "data_source_outside_roots": "location(s) to copy lie outside the directories the source '{source}' governs "
    "({source_roots}): {named}.",
    "data_destination_outside_roots": "copy destination(s) would lie outside the directories the target '{target}' "
    "governs ({target_roots}): {named}. Change the location rule to lead inside one.",
    "data_destination_exists": "copy destination(s) already exist and hold files: {named}. Move them away or change "
    "the location rule.",
    "data_unreadable": "location(s) whose filesystem the console cannot read: {named}.",
    "data_too_large": "the merge moves {named} of data: more than a preview lists; merge fewer databases at a time.",
}


def _blocker(code: str, subjects: list[str], source: Metastore, target: Metastore) -> MergeBlocker:
    named = named_links(subjects) if code == "data_symlink" else _named(subjects)
    message = _MESSAGES[code].format(
        named=named,
        source=source.name,
        target=target.name,
        source_roots=governed_roots(source).describe() if code == "data_source_outside_roots" else "",
        target_roots=governed_roots(target).describe() if code == "data_destination_outside_roots" else "",
    )
    count = len(set(subjects))
    return MergeBlocker(code, subjects[0], message if code == "data_too_large" else f"{count} {message}")


def _named(subjects: list[str]) -> str:
    more = f" and {len(subjects) - NAMED} more" if len(subjects) > NAMED else ""
    return ", ".join(subjects[:NAMED]) + more
