"""The merge preview: frozen dataclasses, and the fingerprint an approval would bind."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property

from operations.merge.data_plan import DataCopyPlan
from operations.merge.estimate import DurationEstimate
from operations.merge.request import MergeRequest

__all__ = ("Conversion", "DatabaseImport", "MergeBlocker", "MergePreview", "NotCarried", "TableImport", "ViewRewrite")

VIEWS_SHOWN = 20  # rewritten views listed in the stored preview; all of them are counted and fingerprinted


@dataclass(frozen=True)
class TableImport:
    """One Hive table's rows coming in, and the ids they would get in the target now (``first_id`` None: keyed by a
    parent's id, or nothing comes in). A preview reserves nothing: the execution reserves under the target's locks."""

    table: str
    rows: int
    sequence: str | None = None
    first_id: int | None = None
    source_ids: tuple[int, int] | None = None  # the source's lowest and highest id of these rows (id'd tables)
    source_keys: tuple[int, int] | None = None  # ... and of their scope column: what the copy units cut

    @property
    def last_id(self) -> int | None:
        return None if self.first_id is None or not self.rows else self.first_id + self.rows - 1

    def as_dict(self) -> dict:
        return {
            "table": self.table,
            "rows": self.rows,
            "sequence": self.sequence,
            "first_id": self.first_id,
            "last_id": self.last_id,
        }


@dataclass(frozen=True)
class DatabaseImport:
    """A source database as it would arrive: its name and location after the renames and location rules."""

    name: str
    new_name: str
    location: str
    new_location: str
    tables: int

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class MergeBlocker:
    """Why the merge cannot run as asked: a stable code, the object it is about, and a message."""

    code: str  # target_older | database_exists | table_exists | location_overlap | open_transactions |
    # constraint_outside | constraint_exists | aborted_writes | write_ids_exist | unfinished_merge | unsafe_name |
    # unsafe_location | outside_roots | value_too_long (one per kind, counted: operations.merge.validation) |
    # view_reference (views that cannot follow their renamed databases: operations.merge.views) | data_symlink |
    # data_source_outside_roots | data_destination_outside_roots | data_destination_exists | data_unreadable |
    # data_too_large | data_engine_unreachable (the data the location rules move: operations.merge.data_preview)
    subject: str
    message: str

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Conversion:
    """A column that differs between the two schemas, and what the merge does with it."""

    table: str
    column: str
    action: str  # "filled" (the target has it, the source does not) or "dropped"
    value: str

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class NotCarried:
    """A source table the merge leaves behind, its row count and why."""

    table: str
    rows: int
    reason: str

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class ViewRewrite:
    """A view whose texts (or Spark's recorded database) name a renamed database, as it will arrive."""

    view: str  # db.name in the target
    original_text: str | None
    expanded_text: str | None
    database: str | None = None  # the database Spark resolves its unqualified names in (None: not recorded)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class MergePreview:
    """Everything a merge would do, read before anything is written."""

    request: MergeRequest
    source_version: str
    target_version: str
    databases: tuple[DatabaseImport, ...]
    tables: tuple[TableImport, ...]
    blockers: tuple[MergeBlocker, ...]
    conversions: tuple[Conversion, ...]
    not_carried: tuple[NotCarried, ...]
    estimate: DurationEstimate | None = None  # advice from measured throughput: shown, not fingerprinted
    views: tuple[ViewRewrite, ...] = ()  # views rewritten to follow their renamed databases
    data_copy: DataCopyPlan = DataCopyPlan()  # the data the location rules move, copied before publishing

    @property
    def is_executable(self) -> bool:
        return not self.blockers

    def rows_of(self, table: str) -> int:
        return next((t.rows for t in self.tables if t.table == table), 0)

    @cached_property
    def fingerprint(self) -> str:
        """What an approval binds: the request, both versions, every database as it arrives, every table's row count
        and source key spans (the rows the execution copies and the ids it reserves for them), every view as it is
        rewritten, every data unit copied with its files and bytes. The target's next ids are not bound (Hive may
        allocate on a live target; the execution reserves its own ranges under the target's locks), as a Preview's
        risk criteria are not."""
        plan = {
            "request": self.request.as_dict(),
            "versions": (self.source_version, self.target_version),
            "databases": [d.as_dict() for d in self.databases],
            "rows": [(t.table, t.rows, t.source_ids, t.source_keys) for t in self.tables],
            "blockers": [(b.code, b.subject) for b in self.blockers],
            "views": [v.as_dict() for v in self.views],
            "data": self.data_copy.fingerprinted(),
        }
        return hashlib.sha256(json.dumps(plan, sort_keys=True).encode()).hexdigest()

    def as_dict(self) -> dict:
        return {
            **self.request.as_dict(),
            "source_version": self.source_version,
            "target_version": self.target_version,
            "executable": self.is_executable,
            "fingerprint": self.fingerprint,
            "databases": [d.as_dict() for d in self.databases],
            "tables": [t.as_dict() for t in self.tables],
            "blockers": [b.as_dict() for b in self.blockers],
            "conversions": [c.as_dict() for c in self.conversions],
            "not_carried": [n.as_dict() for n in self.not_carried],
            "estimate": self.estimate.as_dict() if self.estimate else None,
            "views": [v.as_dict() for v in self.views[:VIEWS_SHOWN]],
            "views_rewritten": len(self.views),
            "data_copy": self.data_copy.as_dict(),
            "data_files": self.data_copy.files,
            "data_bytes": self.data_copy.bytes,
        }
