"""
Risk you can read: the named criteria a plan fires, each with its level and a sentence saying why.

The criteria derive from the plan alone (its moves, counts, before/after snapshots and warnings), so they add nothing
to what approval binds: the same plan fires the same criteria. A preview's risk is the highest level among them, and
the approval policy (``operations.policy``) matches rules on the same names.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings

from operations.preview import DataCopy, DirectoryMove, TableSnapshot
from operations.rules import Finding
from operations.specs import (
    AbortTransactions,
    AlterSpec,
    CompactFiles,
    CompactTable,
    ConvertFormat,
    DropTable,
    PurgeTrash,
    Relocate,
    TruncateTable,
)

__all__ = ("CRITERIA", "LEVELS", "RiskCriterion", "plan_criteria", "risk_of")

LEVELS = ("low", "medium", "high")

# name -> (level, label): every criterion a plan can fire, the names the policy's rules use.
CRITERIA = {
    "data_moved": ("high", "data moved"),
    "data_copied": ("high", "data copied"),
    "data_rewritten": ("high", "data rewritten"),
    "data_deleted": ("high", "old data deleted after the retention"),
    "data_swapped_back": ("high", "data job swapped back"),
    "table_dropped": ("high", "table dropped"),
    "partitions_dropped": ("high", "partitions dropped"),
    "data_truncated": ("high", "table data truncated"),
    "trash_purged": ("high", "trash deleted for good"),
    "statistics_dropped": ("high", "statistics dropped"),
    "views_broken": ("high", "views broken"),
    "columns_removed": ("high", "columns removed"),
    "transactions_aborted": ("high", "cannot be reverted: aborts running writers"),
    "many_partitions": ("high", "many partitions touched"),
    "metastore_merged": ("high", "databases of another metastore imported"),
    "statistics_rewritten": ("medium", "many statistics rewritten"),
    "location_missing": ("medium", "location does not exist"),
    "partitions_changed": ("medium", "partitions changed"),
    "columns_changed": ("medium", "columns changed"),
    "compaction_requested": ("low", "compaction requested"),
    "table_created": ("low", "table created"),  # CREATE TABLE (operations/planners/create_table.py)
    "database_dropped": ("high", "database dropped"),
    "database_location_changed": ("medium", "database location changed"),
    "database_altered": ("low", "database altered"),
    "database_created": ("low", "database created"),
    "access_granted": ("medium", "access granted"),
    "access_revoked": ("medium", "access revoked"),
    "roles_changed": ("medium", "roles or role memberships changed"),
    "grant_option_given": ("high", "grantee may pass the grant on"),
}
_MISSING_LOCATION_FINDINGS = ("location_missing", "source_missing", "directories_missing")


@dataclass(frozen=True)
class RiskCriterion:
    """One reason a plan is risky: its name (what the policy matches), level, label and explanation."""

    name: str
    explanation: str

    @property
    def level(self) -> str:
        return CRITERIA[self.name][0]

    @property
    def label(self) -> str:
        return CRITERIA[self.name][1]

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "level": self.level, "label": self.label, "explanation": self.explanation}


def risk_of(criteria: Iterable[RiskCriterion]) -> str:
    """The highest level among ``criteria``; ``low`` when none fired."""
    return max((c.level for c in criteria), key=LEVELS.index, default="low")


def plan_criteria(
    *,
    before: TableSnapshot,
    after: TableSnapshot,
    moves: tuple[DirectoryMove, ...],
    warnings: Iterable[Finding],
    partitions_touched: int,
    statistics_moved: int,
    statistics_dropped: int,
    drops: int,
    columns_changed: bool,
    spec: AlterSpec | None = None,
    data_copy: DataCopy | None = None,
    swapped_back: int = 0,
) -> tuple[RiskCriterion, ...]:
    """The criteria the plan fires, in :data:`CRITERIA`'s order (``data_copy``: what a data job copies or rewrites;
    ``swapped_back``: the units a data job's revert points back at their kept source)."""
    warnings = tuple(warnings)
    found = {
        "data_moved": _moved(moves) if not isinstance(spec, TruncateTable) else "",
        "data_copied": _copied(spec, data_copy),
        "data_rewritten": _rewritten(spec, data_copy),
        "data_deleted": _deleted_after_retention(spec, data_copy),
        "data_swapped_back": _swapped_back(swapped_back),
        "table_dropped": _table_dropped(spec, moves),
        "partitions_dropped": f"{drops:,} partition(s) are dropped from the metastore." if drops else "",
        "data_truncated": _truncated(spec, moves),
        "trash_purged": (
            "Data in the console's trash is deleted for good: the drops and truncates that put it there can no "
            "longer be reverted."
            if isinstance(spec, PurgeTrash)
            else ""
        ),
        "statistics_dropped": (
            f"{statistics_dropped:,} column statistics row(s) are deleted; queries plan without them until "
            "ANALYZE runs again."
            if statistics_dropped
            else ""
        ),
        "views_broken": " ".join(f.message for f in warnings if f.code == "dependent_views"),
        "columns_removed": _removed_columns(before, after),
        "transactions_aborted": _aborted(spec),
        "many_partitions": _many_partitions(partitions_touched),
        "statistics_rewritten": _statistics_rewritten(statistics_moved),
        "location_missing": " ".join(f.message for f in warnings if f.code in _MISSING_LOCATION_FINDINGS),
        "partitions_changed": f"{partitions_touched:,} partition(s) change." if partitions_touched else "",
        "columns_changed": "The table's columns change." if columns_changed else "",
        "compaction_requested": _compaction(spec),
    }
    return tuple(RiskCriterion(name, why) for name, why in found.items() if why)


def _table_dropped(spec: AlterSpec | None, moves: tuple[DirectoryMove, ...]) -> str:
    if not isinstance(spec, DropTable):
        return ""
    what = "view" if spec.on_view else "table"
    data = f"; its data goes to the console's trash ({_amount_moved(moves)})" if moves else ""
    return f"The {what} {spec.target} is dropped{data}: readers fail until it is undropped (reverted)."


def _amount_moved(moves: tuple[DirectoryMove, ...]) -> str:
    files = sum(m.files or 0 for m in moves)
    size = sum(m.bytes or 0 for m in moves)
    about = "about " if any(m.sampled for m in moves) else ""
    return f"{len(moves):,} director(ies), {about}{files:,} files, {about}{size:,} bytes"


def _moved(moves: tuple[DirectoryMove, ...]) -> str:
    if not moves:
        return ""
    known = [m.bytes for m in moves if m.bytes is not None]
    size = f", {sum(known):,} bytes" if known else ""
    return f"{len(moves):,} data directory move(s){size}: readers of the old paths fail until they follow."


def _copied(spec: AlterSpec | None, data_copy: DataCopy | None) -> str:
    if not isinstance(spec, Relocate):
        return ""
    return (
        f"A Spark job copies {_amount(data_copy)} to {spec.location}; the metastore is re-pointed there once every "
        "file is verified."
    )


def _rewritten(spec: AlterSpec | None, data_copy: DataCopy | None) -> str:
    if not isinstance(spec, CompactFiles | ConvertFormat):
        return ""
    how = "into fewer files" if isinstance(spec, CompactFiles) else f"as {spec.file_format.upper()}"
    return (
        f"A Spark job rewrites {_amount(data_copy)} {how} in new directories; readers switch to the new files when "
        "the metastore is re-pointed."
    )


def _deleted_after_retention(spec: AlterSpec | None, data_copy: DataCopy | None) -> str:
    """A data job keeps the old directories for the retention time only: then the cleanup deletes them."""
    if not isinstance(spec, Relocate | CompactFiles | ConvertFormat):
        return ""
    hours = f"{data_copy.retention_hours:g} hour(s)" if data_copy is not None else "the retention time"
    return (
        f"The cleanup deletes the old directories of {_amount(data_copy)} {hours} after the swap; a revert can swap "
        "back only until then."
    )


def _swapped_back(units: int) -> str:
    if not units:
        return ""
    return (
        f"{units:,} unit(s) of a data job are pointed back at their kept source: readers switch to the old files, "
        "and the cleanup then deletes the job's copy."
    )


def _amount(data_copy: DataCopy | None) -> str:
    """How much a data job reads: its partitions (or the table's root), files and bytes; ``about`` when sampled."""
    if data_copy is None:
        return "the data in scope (not listed: the plan is blocked)"
    partitions = sum(1 for unit in data_copy.units if not unit.is_table_root)
    where = f"{partitions:,} partition(s)" if partitions else "the table's root"
    about = "about " if data_copy.is_sampled else ""
    return f"{where} ({about}{data_copy.files:,} file(s), {about}{data_copy.bytes:,} bytes)"


def _removed_columns(before: TableSnapshot, after: TableSnapshot) -> str:
    if len(after.columns) >= len(before.columns):  # a CHANGE renames a column: it is not removed
        return ""
    kept = {name.lower() for name, *_ in after.columns}
    removed = [name for name, *_ in before.columns if name.lower() not in kept]
    if not removed:
        return ""
    return f"Column(s) {', '.join(removed)} are no longer in the schema: their data can no longer be read."


def _many_partitions(touched: int) -> str:
    limit = getattr(settings, "CATALOG_HIGH_RISK_PARTITIONS", 10_000)
    return f"{touched:,} partitions are touched (more than {limit:,})." if touched > limit else ""


def _statistics_rewritten(moved: int) -> str:
    limit = getattr(settings, "CATALOG_RISK_STATISTICS_ROWS", 100_000)
    return f"{moved:,} statistics rows are rewritten (at least {limit:,})." if moved >= limit else ""


def _truncated(spec: AlterSpec | None, moves: tuple[DirectoryMove, ...]) -> str:
    """Deleting data: every reader sees the table (or partitions) empty; the files wait in the console's trash."""
    if not isinstance(spec, TruncateTable):
        return ""
    files = sum(m.files or 0 for m in moves)
    size = sum(m.bytes or 0 for m in moves)
    return (
        f"{files:,} file(s), {size:,} bytes leave the table for the console's trash: readers see no rows until a "
        "revert moves them back (possible while the trash holds them)."
    )


def _aborted(spec: AlterSpec | None) -> str:
    if not isinstance(spec, AbortTransactions):
        return ""
    return (
        f"{len(spec.txn_ids):,} open transaction(s) are aborted: a writer still running fails at commit and its "
        "writes are discarded. An abort cannot be reverted."
    )


def _compaction(spec: AlterSpec | None) -> str:
    """A request in the queue changes no table row; a major one rewrites the whole table or partition later."""
    if not isinstance(spec, CompactTable):
        return ""
    target = "the partition" if spec.partition else "the table"
    if spec.compaction_type == "major":
        return (
            f"A major compaction is queued: a Worker later rewrites every file of {target} into one base "
            "(cluster time and I/O in proportion to its size); no table row changes now."
        )
    return f"A minor compaction is queued: a Worker later merges {target}'s deltas; no table row changes now."
