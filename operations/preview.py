"""
The value a preview returns: what an ALTER will do, computed by a pure read.

A :class:`Preview` carries the exact set-based statements (:class:`Step`) and directory moves
(:class:`DirectoryMove`) that execution will run, the counts it expects, the before/after
snapshots for the diff, Hive's own behaviour for comparison, the risk and the fingerprint of
what was read. Execution runs exactly these steps or nothing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields
from functools import cached_property
from typing import TYPE_CHECKING, Any

from catalog_admin.selectors.partition_charts import Chart
from operations.rules import BoundedFindings, Finding, bound_findings
from operations.specs import AlterSpec

if TYPE_CHECKING:
    from operations.risk import RiskCriterion

__all__ = (
    "TABLE_UNIT",
    "AffectedPartition",
    "CopyUnit",
    "DataCopy",
    "DataScope",
    "DirectoryMove",
    "DurationEstimate",
    "EstimatePhase",
    "HiveComparison",
    "NewId",
    "NewWriteId",
    "PartitionScope",
    "PartitionsAffected",
    "PlannedEvents",
    "Preview",
    "RowChange",
    "Step",
    "TableSnapshot",
    "TrashEntry",
    "TrashPurge",
)


@dataclass(frozen=True)
class NewId:
    """A placeholder in a step's parameters: a fresh id from SEQUENCE_TABLE, allocated at execution; ``count`` > 1:
    the first of a block of that many consecutive ids (a statement adds each row's position to it)."""

    sequence: str
    slot: str = "0"
    count: int = 1


@dataclass(frozen=True)
class NewWriteId:
    """A placeholder in a step's parameters: the write id the execution's Hive transaction allocates for the plan's
    table (``Preview.hive_write``, ``services/hive_writes``)."""


@dataclass(frozen=True)
class Measured:
    """A placeholder in a step's parameters: a statistic of what a data job wrote for ``unit`` (``numFiles`` or
    ``totalSize`` of a rewritten directory), filled at execution from the listing of its new directory."""

    unit: str
    stat: str


@dataclass(frozen=True)
class Step:
    """One set-based statement and the number of rows it must change (-1: not checked, e.g. id bookkeeping).

    Deletes are written ``DELETE FROM <table> WHERE …``: execution first selects the same rows into the
    before-image, so a revert can put them back exactly.
    """

    description: str
    metastore_table: str
    action: str  # insert | update | delete
    sql: str
    params: tuple[Any, ...]
    expected_rows: int
    before_sql: str = ""  # for updates whose old values a revert cannot derive: selects those rows first
    before_params: tuple[Any, ...] = ()

    @property
    def digest(self) -> str:
        """The statement exactly: its text, parameters, action and expected count."""
        return _digest([self.metastore_table, self.action, self.sql, self.params, self.expected_rows,
                        self.before_sql, self.before_params])  # fmt: skip

    @property
    def capture_sql(self) -> str:
        """For a delete, the SELECT of the rows it removes (same parameters)."""
        if self.action != "delete":
            return ""
        return "SELECT * FROM " + self.sql.removeprefix("DELETE FROM ")


@dataclass(frozen=True)
class RowChange:
    """Rows inserted, updated and deleted in one metastore table."""

    table: str
    inserted: int = 0
    updated: int = 0
    deleted: int = 0


@dataclass(frozen=True)
class DirectoryMove:
    """A data directory that moves, with what is known about it before the move."""

    source: str
    destination: str
    partitions_moving: int
    partitions_staying: int
    files: int | None
    bytes: int | None
    source_exists: bool | None
    destination_free: bool | None
    same_filesystem: bool
    prune_source_levels: int = 0  # at most this many emptied parents of the source go too (dt=… folders, a revert)
    # A directory that moves whole for its sub-directories (a dropped day of hourly partitions): the names it must
    # hold, exactly and all directories, when it moves (listed again at execution); empty: no such check.
    entries: tuple[str, ...] = ()
    # ``(counted, found)``: the files and bytes are scaled from that many of the partition directories found inside
    # (evenly spaced, everything else counted in full); None: counted in full.
    sampled: tuple[int, int] | None = None

    def as_dict(self) -> dict[str, Any]:
        """``asdict`` of the move (every field a plain value), without its recursive copy: a plan may hold 100,000."""
        return {name: getattr(self, name) for name in _MOVE_FIELDS}


_MOVE_FIELDS = tuple(f.name for f in fields(DirectoryMove))


@dataclass(frozen=True)
class TableSnapshot:
    """The table as a steward reads it, before or after the change (for the diff)."""

    database: str
    name: str
    type: str
    owner: str | None
    location: str | None
    input_format: str | None
    output_format: str | None
    serde_lib: str | None
    columns: tuple[tuple[str, str, str | None], ...]
    partition_keys: tuple[tuple[str, str], ...]
    params: tuple[tuple[str, str | None], ...]
    serde_params: tuple[tuple[str, str | None], ...]

    def diff(self, other: TableSnapshot) -> list[tuple[str, Any, Any]]:
        """``(field, before, after)`` for every field that differs."""
        return [
            (name, value, getattr(other, name)) for name, value in asdict(self).items() if value != asdict(other)[name]
        ]


@dataclass(frozen=True)
class PartitionScope:
    """The partitions a partition-level plan reads or writes, pinned by a digest of their rows.

    ``selection`` says how to find them again (``{"names": [...]}``, ``{"ids": [...]}`` or ``{"prefixes": [...]}``
    of their locations); ``digest`` covers every selected row's id, name, storage descriptor id and location;
    ``sample`` keeps the first of them readable (``(name, sd_id, location)``) to say what changed.
    """

    table_id: int
    selection: dict[str, Any]
    count: int
    digest: str
    sample: tuple[tuple[str, int | None, str | None], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "digest": self.digest,
            "partitions": [{"name": n, "sd_id": sd, "location": loc} for n, sd, loc in self.sample],
        }


@dataclass(frozen=True)
class PlannedEvents:
    """The notification events execution writes in its transaction (those Hive writes for the same statement).

    ``counts``: ``(event type, how many)``; ``partitions``: which partitions the partition events describe (a scope
    selection, resolved under the table lock before the statements run), ``None`` for table events only;
    ``transactions``: the transactions ``ABORT_TXN`` events describe (events of no table), one event each."""

    table_id: int
    counts: tuple[tuple[str, int], ...]
    message_format: str
    partitions: dict[str, Any] | None = None
    partition_keys: tuple[str, ...] = ()
    transactions: tuple[int, ...] = ()
    truncate: bool = False  # a TRUNCATE's ALTER_TABLE / ALTER_PARTITION events (``isTruncateOp``, 3.x+)

    @property
    def total(self) -> int:
        return sum(count for _type, count in self.counts)

    def as_dict(self) -> dict[str, Any]:
        described = {"transactions": list(self.transactions)} if self.transactions else {}
        described |= {"truncate": True} if self.truncate else {}
        return {"counts": dict(self.counts), "total": self.total, "message_format": self.message_format,
                "partitions": self.partitions, **described}  # fmt: skip


@dataclass(frozen=True)
class AffectedPartition:
    """One partition a partition-level plan drops or renames: its rows (``numRows``), size (files on disk when
    known, else ``totalSize``) and what happens to its data."""

    name: str
    location: str | None
    rows: int | None
    bytes: int | None
    files: int | None
    fate: str
    new_name: str = ""


@dataclass(frozen=True)
class PartitionsAffected:
    """The partitions a plan drops or renames: the count and totals over all of them, the first ``listed`` by name
    (a bounded list on a huge table), and what happens to their data, as the console does it and as Hive would."""

    action: str  # dropped | renamed
    count: int
    rows: int | None
    bytes: int | None
    listed: tuple[AffectedPartition, ...]
    data: str
    hive_data: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "more": max(0, self.count - len(self.listed))}


@dataclass(frozen=True)
class TrashEntry:
    """One entry of the console's trash a purge deletes: where it is, what it holds, the execution that put it there
    and when (ISO time)."""

    location: str
    files: int
    bytes: int
    execution: int
    trashed_at: str


@dataclass(frozen=True)
class TrashPurge:
    """What a purge of the trash deletes (every entry, exactly: approval binds them) and the executions that lose
    their revert with them."""

    entries: tuple[TrashEntry, ...]
    executions: tuple[int, ...]
    retention_days: int | None

    @property
    def files(self) -> int:
        return sum(e.files for e in self.entries)

    @property
    def bytes(self) -> int:
        return sum(e.bytes for e in self.entries)

    @property
    def digest(self) -> str:
        return _digest([[e.location, e.files, e.bytes, e.execution] for e in self.entries])

    def as_dict(self, first: int = 20) -> dict[str, Any]:
        return {"entries": len(self.entries), "files": self.files, "bytes": self.bytes,
                "executions": list(self.executions), "retention_days": self.retention_days,
                "listed": [asdict(e) for e in self.entries[:first]],
                "more": max(0, len(self.entries) - first), "digest": self.digest}  # fmt: skip


TABLE_UNIT = "<table root>"  # the unit key of an unpartitioned table's root (a partition's is its name)


@dataclass(frozen=True)
class CopyUnit:
    """One directory a data job copies as a unit (a partition, or an unpartitioned table's root), verified and
    reported done (``key``) before the next; the metastore is re-pointed only after every unit is done."""

    key: str
    source: str
    destination: str
    source_format: str = ""  # a rewrite (CONCATENATE, SET FILEFORMAT … WITH DATA): parquet | orc | avro | text
    sd_id: int | None = None  # a rewrite: the storage descriptor the swap re-points
    partition_id: int | None = None  # a rewrite of a partition: whose numFiles/totalSize the swap updates
    retained: str = ""  # a rewrite: the trash directory the swap moves the old one to (``planners/rewrite_swap``)

    @property
    def is_table_root(self) -> bool:
        return self.key == TABLE_UNIT


@dataclass(frozen=True)
class DataScope:
    """Files and bytes a data job reads (and writes as much of), exact or estimated from a sample of its units.

    ``histogram`` counts the listed files by size: ``(bucket label, files, bytes)`` in the buckets of
    :data:`~catalog_admin.selectors.partition_charts.FILE_SIZE_BUCKETS` (the sample's files when sampled).
    ``copy_and_delete``: a side lies on an object store, where a "rename" copies every object and deletes the
    original, so removing the source later costs one delete per file."""

    units: int
    sampled_units: int
    files: int
    bytes: int
    sample_files: int
    sample_bytes: int
    histogram: tuple[tuple[str, int, int], ...]
    copy_and_delete: bool = False

    @property
    def is_estimate(self) -> bool:
        return self.sampled_units < self.units

    @property
    def basis(self) -> str:
        if not self.is_estimate:
            return f"listed all {self.units} unit(s): {self.files} files, {self.bytes} bytes"
        return (
            f"estimate: {self.sampled_units} of {self.units} units listed (evenly spaced by name), "
            f"{self.sample_files} files and {self.sample_bytes} bytes, scaled by {self.units / self.sampled_units:.2f}"
        )

    def file_sizes_chart(self) -> Chart:
        """The histogram as a chart for ``static/js/charts.js`` (the table page's small-file chart, per file)."""
        where = f" (sample of {self.sampled_units} of {self.units} units)" if self.is_estimate else ""
        return Chart(
            "Files by size" + where,
            "file size",
            [label for label, _, _ in self.histogram],
            {"files": [files for _, files, _ in self.histogram], "bytes": [size for _, _, size in self.histogram]},
            self.is_estimate,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "units": self.units,
            "sampled_units": self.sampled_units,
            "estimate": self.is_estimate,
            "basis": self.basis,
            "files": self.files,
            "bytes": self.bytes,
            "sample_files": self.sample_files,
            "sample_bytes": self.sample_bytes,
            "copy_and_delete": self.copy_and_delete,
            "file_sizes": self.file_sizes_chart().as_dict(),
        }


@dataclass(frozen=True)
class EstimatePhase:
    """One phase of a data job's estimate: what it covers (``name``: startup, work, swap; ``label`` as the page says
    it), its seconds (None: no basis yet) and what they come from."""

    name: str
    label: str
    seconds: float | None
    basis: str

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "label": self.label, "seconds": self.seconds, "basis": self.basis}


@dataclass(frozen=True)
class DurationEstimate:
    """Seconds a job of ``bytes`` may take, from ``jobs`` earlier jobs (None: no basis).

    With ``phases`` (earlier jobs said when their work began) the seconds are their sum: Spark's start-up on the
    engine, the work (copy or rewrite) and the swap, each with its basis; a phase without a basis yet leaves the total
    None. Without them, ``median_bytes_per_second`` is the earlier runs' whole-run throughput (start-up, work and swap
    together)."""

    seconds: float | None
    jobs: int
    median_bytes_per_second: float | None
    engine: str
    phases: tuple[EstimatePhase, ...] = ()

    @property
    def basis(self) -> str:
        if self.phases:
            covered = " + ".join(p.label for p in self.phases)
            missing = [p.label for p in self.phases if p.seconds is None]
            gap = f" (no basis yet for {', '.join(missing)})" if missing else ""
            return f"{covered}, from {self.jobs} earlier job(s) on {self.engine}{gap}"
        if not self.jobs or not self.median_bytes_per_second:
            return f"no basis yet: no finished job of this kind on {self.engine}"
        rate = self.median_bytes_per_second / 2**20  # IEC units, as every page shows bytes
        return f"from {self.jobs} earlier job(s) on {self.engine}, median {rate:.1f} MiB/s"

    def as_dict(self) -> dict[str, Any]:
        return {
            "seconds": self.seconds,
            "jobs": self.jobs,
            "median_bytes_per_second": self.median_bytes_per_second,
            "engine": self.engine,
            "basis": self.basis,
            "phases": [phase.as_dict() for phase in self.phases],
        }


@dataclass(frozen=True)
class DataCopy:
    """The data a job copies before the swap (relocate): its units and what a listing found of their size.

    ``files``/``bytes`` cover every unit when ``sampled_units`` equals the units' count; otherwise they are
    extrapolated from the ``sampled_units`` listed (``sample_files``/``sample_bytes``), and the page says so.
    ``estimated_seconds`` is from the throughput of earlier copies (None when there were none)."""

    units: tuple[CopyUnit, ...]
    files: int
    bytes: int
    sampled_units: int
    sample_files: int
    sample_bytes: int
    estimated_seconds: float | None = None
    retention_hours: float = 0.0
    scope: DataScope | None = None  # the listing's basis and small-file histogram (planners/data_scope.py)
    duration: DurationEstimate | None = None  # the basis of ``estimated_seconds``

    @property
    def is_sampled(self) -> bool:
        return self.sampled_units < len(self.units)

    @property
    def digest(self) -> str:
        return _digest([(u.key, u.source, u.destination) for u in self.units])

    def as_dict(self, first: int = 20) -> dict[str, Any]:
        return {
            "units": len(self.units),
            "files": self.files,
            "bytes": self.bytes,
            "sampled": self.is_sampled,
            "sampled_units": self.sampled_units,
            "sample_files": self.sample_files,
            "sample_bytes": self.sample_bytes,
            "estimated_seconds": self.estimated_seconds,
            "retention_hours": self.retention_hours,
            "scope": self.scope.as_dict() if self.scope else None,
            "duration": self.duration.as_dict() if self.duration else None,
            "digest": self.digest,
            "first_units": [asdict(u) for u in self.units[:first]],
        }


@dataclass(frozen=True)
class HiveComparison:
    """What Hive itself would do for the same statement on this schema version."""

    version: str
    partition_round_trips: int
    statistics_deleted: int
    estimated_seconds: float
    notes: tuple[str, ...] = ()
    comparable: bool = True  # False: Hive cannot do this work (a relocation, a rewrite), so no ratio to the console's


@dataclass(frozen=True)
class Preview:
    """The full, read-only plan of one ALTER on one metastore."""

    metastore: str
    schema_version: str
    spec: AlterSpec
    statement: str
    state_fingerprint: str  # the table's rows (TableState.fingerprint): execution re-reads them under its lock
    before: TableSnapshot
    after: TableSnapshot
    steps: tuple[Step, ...]
    moves: tuple[DirectoryMove, ...]
    blockers: tuple[Finding, ...]
    warnings: tuple[Finding, ...]
    hive: HiveComparison
    estimated_seconds: float
    risk: str
    partitions_touched: int = 0
    statistics_moved: int = 0
    statistics_dropped: int = 0
    inverse: dict[str, Any] = field(default_factory=dict)
    scope: PartitionScope | None = None
    events: PlannedEvents | None = None
    criteria: tuple[RiskCriterion, ...] = ()  # why the risk is what it is (derived from the plan: not fingerprinted)
    affected: PartitionsAffected | None = None  # the partitions that go or are renamed (a listing: not fingerprinted)
    data_copy: DataCopy | None = None  # a data job (relocate) copies these before the steps re-point the metastore
    databases: tuple[str, ...] = ()  # every database an abort's transactions wrote to or locked (its table's too)
    # Directories execution makes before the statements (CREATE TABLE's location, ADD PARTITION's managed ones; the
    # parents it had to make are kept in the before-image), and removes after the commit while still empty (a revert).
    directories_created: tuple[str, ...] = ()
    directories_removed: tuple[str, ...] = ()
    trash_purge: TrashPurge | None = None  # a purge of the console's trash: the entries it deletes
    # Execution holds Hive's EXCLUSIVE lock on the table (``services/hive_locks``) and re-lists the moves' directories
    # under it first (a transactional table's TRUNCATE and its revert): Hive's readers and writers wait meanwhile.
    table_lock: bool = False
    # Execution records a committed Hive transaction writing the table, with a write id allocated for it (a
    # transactional table's TRUNCATE on Hive 4, and its revert): the steps' ``NewWriteId`` parameters take it.
    hive_write: bool = False

    @cached_property
    def fingerprint(self) -> str:
        """The plan's digest: what approval binds. Every statement (text, parameters, expected rows), every directory
        move, the counts, the partitions in scope and the table's rows; any difference makes another plan. A blocked
        plan binds its blockers by their counts per code and a digest (never the full list, which may be huge)."""
        plan = {
            "metastore": self.metastore,
            "schema_version": self.schema_version,
            "statement": self.statement,
            "state": self.state_fingerprint,
            "scope": self.scope.as_dict() if self.scope else None,
            "steps": [step.digest for step in self.steps],
            "moves": [
                (m.source, m.destination, m.prune_source_levels, *((m.entries,) if m.entries else ()))
                for m in self.moves
            ],
            "counts": (self.partitions_touched, self.statistics_moved, self.statistics_dropped),
        }
        if self.events is not None:
            plan["events"] = self.events.as_dict()
        if self.data_copy is not None:
            plan["data_copy"] = self.data_copy.digest
        if self.databases:
            plan["databases"] = list(self.databases)
        if self.directories_created or self.directories_removed:
            plan["directories"] = [list(self.directories_created), list(self.directories_removed)]
        if self.trash_purge is not None:
            plan["trash_purge"] = self.trash_purge.digest
        if self.table_lock:
            plan["table_lock"] = True
        if self.hive_write:
            plan["hive_write"] = True
        if self.blockers:
            plan["blockers"] = {"counts": self.bounded_blockers.counts, "digest": self.bounded_blockers.digest}
        return _digest(plan)

    @cached_property
    def bounded_blockers(self) -> BoundedFindings:
        """The blockers as stored and shown: a bounded number per code, with every code's count."""
        return bound_findings(self.blockers)

    @cached_property
    def bounded_warnings(self) -> BoundedFindings:
        return bound_findings(self.warnings)

    @property
    def is_executable(self) -> bool:
        return not self.blockers

    @property
    def row_changes(self) -> tuple[RowChange, ...]:
        """Expected counts per metastore table, summed over the steps (the notification events: ``events``)."""
        totals: dict[str, dict[str, int]] = {}
        for step in self.steps:
            if step.expected_rows < 0:
                continue
            counts = totals.setdefault(step.metastore_table, {"insert": 0, "update": 0, "delete": 0})
            counts[step.action] += step.expected_rows
        return tuple(
            RowChange(table=t, inserted=c["insert"], updated=c["update"], deleted=c["delete"])
            for t, c in sorted(totals.items())
        )

    @property
    def diff(self) -> list[tuple[str, Any, Any]]:
        return self.before.diff(self.after)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (steps without parameters) for the API and the audit trail; blockers and warnings are
        bounded per code (``blocker_counts``/``warning_counts``: every code's total)."""
        return {
            "metastore": self.metastore,
            "schema_version": self.schema_version,
            "operation": self.spec.as_dict(),
            "statement": self.statement,
            "fingerprint": self.fingerprint,
            "state_fingerprint": self.state_fingerprint,
            "scope": self.scope.as_dict() if self.scope else None,
            "risk": self.risk,
            "criteria": [criterion.as_dict() for criterion in self.criteria],
            "affected": self.affected.as_dict() if self.affected else None,
            "executable": self.is_executable,
            "diff": [{"field": f, "before": b, "after": a} for f, b, a in self.diff],
            "row_changes": [asdict(r) for r in self.row_changes],
            "moves": [m.as_dict() for m in self.moves],
            "blockers": self.bounded_blockers.as_list(),
            "blocker_counts": dict(self.bounded_blockers.counts),
            "blockers_digest": self.bounded_blockers.digest,
            "warnings": self.bounded_warnings.as_list(),
            "warning_counts": dict(self.bounded_warnings.counts),
            "partitions_touched": self.partitions_touched,
            "statistics_moved": self.statistics_moved,
            "statistics_dropped": self.statistics_dropped,
            "hive": asdict(self.hive),
            "events": self.events.as_dict() if self.events else None,
            "estimated_seconds": self.estimated_seconds,
            "databases": list(self.databases),
            "table_lock": self.table_lock,
            "hive_write": self.hive_write,
            **(
                {
                    "directories_created": list(self.directories_created[:100]),
                    "directories_removed": list(self.directories_removed[:100]),
                }
                if self.directories_created or self.directories_removed
                else {}
            ),
            **({"data_copy": self.data_copy.as_dict()} if self.data_copy is not None else {}),
            **({"trash_purge": self.trash_purge.as_dict()} if self.trash_purge is not None else {}),
            "steps": [
                {
                    "description": s.description,
                    "table": s.metastore_table,
                    "action": s.action,
                    "expected_rows": s.expected_rows,
                    "digest": s.digest,
                }
                for s in self.steps
            ],
        }


def _digest(value: Any) -> str:
    payload = json.dumps(value, sort_keys=True, default=repr)
    return hashlib.sha256(payload.encode()).hexdigest()[:32]
