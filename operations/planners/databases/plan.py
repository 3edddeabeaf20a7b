"""
The frozen plan of a database statement (issue 27) and its revert: which DBS row is inserted, updated or deleted (with
its DATABASE_PARAMS and DB_PRIVS rows), which directories are created, trashed, removed or restored, the notification
events, blockers, warnings and named risk criteria, and the fingerprint an approval binds. ``DROP DATABASE … CASCADE``
and its undrop also carry the statements deleting (or putting back) the rows of every table of the database, and the
tables' listing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from operations.database_specs import DatabaseSpec
from operations.preview import Step
from operations.risk import RiskCriterion, risk_of
from operations.rules import Finding, bound_findings
from operations.staleness import ComparedFields

__all__ = ("DATABASE_FIELDS", "DatabasePlan", "DirectoryAction", "DroppedTable")

# What staleness compares of a database plan's summary besides its diff, rows and blockers.
DATABASE_FIELDS = ComparedFields(scalars=(("risk", "Risk"), ("event", "Notification event")))


@dataclass(frozen=True)
class DirectoryAction:
    """One directory the execution changes: ``create`` (made, with missing parents), ``remove`` (an empty directory
    removed, as Hive deletes a dropped database's directory), ``trash`` (moved to ``destination`` in the console's
    trash) or ``restore`` (moved back from the trash at ``source`` to ``destination``)."""

    action: str
    source: str
    destination: str = ""
    files: int | None = None
    bytes: int | None = None
    levels: int = 1  # ``remove``: the directory and its emptied parents the console made with it
    # ``(counted, found)``: the files and bytes are scaled from that many of the partition directories found inside
    # (``CATALOG_DROP_SAMPLE_PARTITIONS``, evenly spaced; everything else counted in full); None: counted in full.
    sampled: tuple[int, int] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "source": self.source,
            "destination": self.destination,
            "files": self.files,
            "bytes": self.bytes,
            "levels": self.levels,
            "sampled": list(self.sampled) if self.sampled else None,
        }


@dataclass(frozen=True)
class DroppedTable:
    """One table a ``DROP DATABASE … CASCADE`` drops (or its undrop puts back), as the preview lists it: its type,
    partitions, and what becomes of its data (``trash``: to the console's trash with the database's directory or its
    own, ``kept``: external data Hive leaves, ``none``: a view)."""

    id: int
    name: str
    type: str
    partitions: int
    data: str
    location: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "type": self.type,
            "partitions": self.partitions,
            "data": self.data,
            "location": self.location,
        }


@dataclass(frozen=True)
class DatabasePlan:
    """What a database statement does on ``metastore``, built by a pure read.

    ``insert``: the DBS row to insert (``DB_ID`` ``None``: a new id from SEQUENCE_TABLE; ``OWNER_NAME`` ``None``: the
    executing actor, as Hive's Driver names the session's user; ``CREATE_TIME`` ``None``: the time of execution, 4.x);
    ``update``: DBS columns set on ``database_id``; ``delete``: the row (with its params and privileges) deleted;
    ``params_set`` / ``params_delete``: DATABASE_PARAMS rows upserted / removed; ``privileges``: DB_PRIVS rows
    inserted (an undrop). ``state_fingerprint``: the database as read (``ABSENT`` for none); ``noop``: IF [NOT]
    EXISTS found nothing to do. ``steps``: the statements of the database's tables (CASCADE: deletes, run before the
    database's row goes; its undrop: inserts, run after the row is back), ``tables`` their listing and
    ``table_events`` the tables' notification events by type (DROP_TABLE; CREATE_TABLE and ADD_PARTITION)."""

    metastore: str
    schema_version: str
    spec: DatabaseSpec
    database: str
    state_fingerprint: str
    database_id: int | None = None
    insert: dict[str, Any] | None = None
    update: tuple[tuple[str, Any], ...] = ()
    delete: bool = False
    params_set: tuple[tuple[str, str], ...] = ()
    params_delete: tuple[str, ...] = ()
    privileges: tuple[dict[str, Any], ...] = ()
    directories: tuple[DirectoryAction, ...] = ()
    event: str = ""
    diff: tuple[tuple[str, Any, Any], ...] = ()
    blockers: tuple[Finding, ...] = ()
    warnings: tuple[Finding, ...] = ()
    criteria: tuple[RiskCriterion, ...] = ()
    noop: bool = False
    reverts: int | None = None
    steps: tuple[Step, ...] = ()
    tables: tuple[DroppedTable, ...] = ()
    table_events: tuple[tuple[str, int], ...] = ()
    inverse: dict[str, Any] = field(default_factory=dict)  # what a revert needs beyond the before-image

    @property
    def statement(self) -> str:
        return self.spec.to_ddl()

    @property
    def risk(self) -> str:
        return risk_of(self.criteria)

    @property
    def databases(self) -> tuple[str, ...]:
        return (self.database,)

    @cached_property
    def rows(self) -> dict[str, dict[str, int]]:
        """Rows per metastore table (insert, update, delete) the plan changes; the privileges a drop deletes are
        counted at execution."""
        rows: dict[str, dict[str, int]] = {}

        def add(table: str, action: str, count: int) -> None:
            if count:
                rows.setdefault(table, {"insert": 0, "update": 0, "delete": 0})[action] += count

        add("DBS", "insert", 1 if self.insert is not None else 0)
        add("DBS", "update", 1 if self.update else 0)
        add("DBS", "delete", 1 if self.delete else 0)
        add("DATABASE_PARAMS", "insert", len(self.params_set))
        add("DATABASE_PARAMS", "delete", len(self.params_delete))
        add("DB_PRIVS", "insert", len(self.privileges))
        for step in self.steps:
            add(step.metastore_table, step.action, step.expected_rows)
        add("NOTIFICATION_LOG", "insert", self.events)
        return rows

    @property
    def events(self) -> int:
        """How many notification events the execution writes (the database's and its tables')."""
        return 1 + sum(count for _, count in self.table_events) if self.event else 0

    @cached_property
    def fingerprint(self) -> str:
        """The plan an approval binds: statement, rows written, directories, event and the database as read."""
        bound = {
            "metastore": self.metastore,
            "statement": self.statement,
            "state": self.state_fingerprint,
            "database_id": self.database_id,
            "insert": self.insert,
            "update": self.update,
            "delete": self.delete,
            "params_set": self.params_set,
            "params_delete": self.params_delete,
            "privileges": self.privileges,
            "directories": [d.as_dict() for d in self.directories],
            "event": self.event,
            "blockers": sorted((b.code, b.message) for b in self.blockers),
            "reverts": self.reverts,
        }
        if self.steps or self.table_events:  # a CASCADE and its undrop (other plans keep their fingerprints)
            bound.update(
                steps=[step.digest for step in self.steps],
                table_events=self.table_events,
                tables=[t.as_dict() for t in self.tables],
            )
        return hashlib.sha256(json.dumps(bound, sort_keys=True, default=str).encode()).hexdigest()

    def as_dict(self) -> dict[str, Any]:
        """The summary a request stores (what approvers read)."""
        blockers, warnings = bound_findings(self.blockers), bound_findings(self.warnings)
        return {
            "kind": "database",
            "metastore": self.metastore,
            "schema_version": self.schema_version,
            "statement": self.statement,
            "operation": self.spec.as_dict(),
            "database": self.database,
            "database_id": self.database_id,
            "state_fingerprint": self.state_fingerprint,
            "fingerprint": self.fingerprint,
            "risk": self.risk,
            "criteria": [c.as_dict() for c in self.criteria],
            "executable": not self.blockers,
            "diff": [{"field": f, "before": b, "after": a} for f, b, a in self.diff],
            "row_changes": [
                {"table": t, "inserted": c["insert"], "updated": c["update"], "deleted": c["delete"]}
                for t, c in sorted(self.rows.items())
            ],
            "directories": [d.as_dict() for d in self.directories],
            "event": self.event,
            "table_events": dict(self.table_events),
            "tables": [t.as_dict() for t in self.tables],
            "noop": self.noop,
            "reverts": self.reverts,
            "databases": [self.database],
            "blockers": blockers.as_list(),
            "blocker_counts": dict(blockers.counts),
            "blockers_digest": blockers.digest,
            "warnings": warnings.as_list(),
            "warning_counts": dict(warnings.counts),
        }
