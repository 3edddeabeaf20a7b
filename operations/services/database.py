"""
Executing a database plan (issue 27): ``CREATE``, ``ALTER`` and ``DROP DATABASE`` and their reverts.

``database_execute`` runs exactly the plan (bound to the approved one, refused while blocked) in one metastore
transaction: the database's row locked (or, for a new one, its absence checked; the unique name index refuses a racing
insert), its state compared with the plan's, the rows written with each count checked, the notification event written
with them, the directories created, removed, trashed or restored (put back if anything fails before the commit), the
before-image kept for the revert, and the execution audited. ``DROP DATABASE … CASCADE`` first deletes the rows of every
table of the database (the plan's set-based statements, each count checked, every deleted row kept in ``CapturedRows``
as an ALTER's; an older execution's rows, kept in its JSON, are still read), under a check that the database holds
exactly the tables the plan listed; its undrop puts the database back first, then those rows, with the same ids.
"""

from __future__ import annotations

import time
from typing import Any

from django.db import connections, transaction

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.ids import allocate_ids
from catalog_admin.locations import filesystem_for, make_directory
from catalog_admin.models import Database
from catalog_admin.selectors.metastores import Metastore, get_metastore
from operations.events.databases import (
    created_table_rows,
    database_table_ids,
    dropped_table_rows,
    write_database_event,
)
from operations.events.functions import created_function_rows, dropped_function_rows
from operations.events.objects import read_database
from operations.models import DirectoryMoveRecord, Execution
from operations.planners.databases import ABSENT, DATABASE_FIELDS, DatabasePlan, DirectoryAction, read_database_state
from operations.planners.partitions.directories import TRASH_DIR
from operations.preview import Step
from operations.services.commit_markers import new_commit_marker, write_commit_marker
from operations.services.one_transaction import refuse_unexecutable, run_execution
from operations.services.row_capture import DELETED, RowCapture, discard_captured_rows
from operations.staleness import stale_message

__all__ = ("database_execute",)

Undo = list[tuple[DirectoryAction, int]]


def database_execute(
    *, plan: DatabasePlan, actor: str, source: str, reason: str = "", approved: dict[str, Any] | None = None
) -> Execution:
    """Run exactly ``plan`` (rebuilt just before; ``approved``: the plan a change request's approvers saw) and return
    its execution; raises the ``ApplicationError`` that stopped it (``details["execution"]`` once one was recorded)."""
    refuse_unexecutable(plan, approved, compared=DATABASE_FIELDS, subject=f"Database {plan.database}")
    metastore = get_metastore(plan.metastore)
    execution = Execution.objects.create(
        metastore=plan.metastore,
        database_name=plan.database,
        table_name="",
        statement=plan.statement,
        operation=plan.spec.as_dict(),
        preview=plan.as_dict(),
        fingerprint=plan.state_fingerprint[:64],
        actor=actor,
        source=source,
        reason=reason,
        expected_counts=plan.rows,
        reverts_id=plan.reverts,
        commit_marker=new_commit_marker(),
    )
    return run_execution(execution, plan, metastore, lambda: _apply(metastore, plan, execution, _owner(actor)))


def _owner(actor: str) -> str:
    """The new database's owner: the user running the statement, as Hive's Driver takes the session's user (an
    operator's ``operator:<os user>`` is that OS user)."""
    return actor.split(":", 1)[1] if actor.startswith("operator:") else actor


def _apply(metastore: Metastore, plan: DatabasePlan, execution: Execution, owner: str) -> dict[str, dict[str, int]]:
    done: Undo = []
    try:
        with allow_metastore_writes(), transaction.atomic(using=metastore.alias):
            state = read_database_state(metastore, plan.database, for_update=True)
            if (state.fingerprint if state else ABSENT) != plan.state_fingerprint:
                raise ApplicationError(
                    ErrorCode.STALE_PREVIEW,
                    stale_message(
                        f"Database {plan.database}", "preview it again before executing", since="the preview"
                    ),
                    {"database": plan.database},
                )
            write_commit_marker(metastore, execution.commit_marker, execution.pk)  # what reconcile decides by
            if plan.noop:
                execution.before_image = {"name": plan.database, "noop": True}
                execution.save(update_fields=["before_image"])
                return {}
            version = metastore.schema.version
            before = read_database(metastore.alias, version, state.id) if state is not None else None
            now = int(time.time())
            if plan.insert is not None:  # a creation or an undrop: the data is in place before the events list it
                done += [(action, _directory(action, execution)) for action in plan.directories]
            dropped = _dropped_objects(metastore, plan, state.id if state is not None else None, now)
            writer = _Writer(metastore, RowCapture(execution))
            db_id = writer.rows(plan, state.id if state is not None else None, owner)
            after = read_database(metastore.alias, version, db_id) if not plan.delete else None
            tables = _restored_objects(metastore, db_id, now) if _restores(plan) else []
            events = (
                write_database_event(metastore, plan.event, before, after, table_rows=dropped or tables, now=now)
                if plan.event
                else 0
            )
            if events != plan.events:
                raise ApplicationError(
                    ErrorCode.STALE_PREVIEW,
                    f"The change would write {events} notification events, the preview planned {plan.events}; "
                    "nothing was applied.",
                    {"planned_events": plan.events, "events": events},
                )
            if events:
                writer.count("NOTIFICATION_LOG", "insert", events)
            if plan.insert is None:
                for action in plan.directories:
                    done.append((action, _directory(action, execution)))
            _keep_image(metastore, plan, execution, state, db_id, done, writer.capture)
            return writer.counts
    except BaseException:
        _undo(done)
        discard_captured_rows(execution)
        raise


def _dropped_objects(metastore: Metastore, plan: DatabasePlan, db_id: int | None, now: int) -> list[Any]:
    """A CASCADE's tables, under the database row's lock: exactly those the plan lists (or nothing runs); their
    DROP_TABLE events and its functions' DROP_FUNCTION events, read before the deletes, in Hive's order for the
    version."""
    if not (plan.delete and plan.steps) or db_id is None:
        return []
    ids = database_table_ids(metastore, db_id)
    if sorted(ids) != sorted(t.id for t in plan.tables):
        raise ApplicationError(
            ErrorCode.STALE_PREVIEW,
            f"The tables of database {plan.database} changed since the preview; preview it again before executing.",
            {"database": plan.database},
        )
    if not plan.event:
        return []
    tables, functions = dropped_table_rows(metastore, ids, now), dropped_function_rows(metastore, db_id, now)
    first_functions = metastore.schema.capabilities.drop_database_drops_functions_first
    return functions + tables if first_functions else tables + functions


def _restored_objects(metastore: Metastore, db_id: int, now: int) -> list[Any]:
    """An undrop's tables' events (CREATE_TABLE, ADD_PARTITION), then its functions' (CREATE_FUNCTION)."""
    tables = created_table_rows(metastore, database_table_ids(metastore, db_id), now)
    return tables + created_function_rows(metastore, db_id, now)


def _restores(plan: DatabasePlan) -> bool:
    """An undrop of a CASCADE: its tables' events follow the database's."""
    return bool(plan.event and plan.insert is not None and plan.table_events)


class _Writer:
    """The plan's statements on the metastore's connection, each count checked (the rows a delete removes kept)."""

    def __init__(self, metastore: Metastore, capture: RowCapture) -> None:
        self.metastore = metastore
        self.capture = capture
        self.connection = connections[metastore.alias]
        self.quote = self.connection.ops.quote_name
        self.counts: dict[str, dict[str, int]] = {}

    def steps(self, steps: tuple[Step, ...]) -> None:
        """The tables' statements (a CASCADE's deletes, its undrop's inserts), each count checked."""
        for step in steps:
            if step.capture_sql:
                with self.connection.cursor() as cursor:
                    self.capture.capture(cursor, DELETED, step.metastore_table, step.capture_sql, step.params)
            self.execute(step.metastore_table, step.action, step.sql, list(step.params), step.expected_rows)

    def count(self, table: str, action: str, rows: int) -> None:
        self.counts.setdefault(table, {"insert": 0, "update": 0, "delete": 0})[action] += rows

    def execute(self, table: str, action: str, sql: str, params: list[Any], expected: int | None = None) -> None:
        with self.connection.cursor() as cursor:
            cursor.execute(sql, params)
            changed = cursor.rowcount
        if expected is not None and changed != expected:
            raise ApplicationError(
                ErrorCode.STALE_PREVIEW,
                f"{action.title()} on {table} changed {changed} rows, the "
                f"preview expected {expected}; nothing was applied.",
                {"table": table, "expected": expected, "actual": changed},
            )
        self.count(table, action, max(changed, 0))

    def insert(self, table: str, row: dict[str, Any]) -> None:
        columns = ", ".join(self.quote(c) for c in row)
        marks = ", ".join(["%s"] * len(row))
        self.execute(
            table, "insert", f"INSERT INTO {self.quote(table)} ({columns}) VALUES ({marks})", list(row.values()), 1
        )

    def rows(self, plan: DatabasePlan, db_id: int | None, owner: str) -> int:
        """Write the plan's rows; returns the database's id."""
        q = self.quote
        by_id = f"{q('DB_ID')} = %s"
        if plan.delete:
            assert db_id is not None
            self.steps(plan.steps)  # the tables go before the database (TBLS.DB_ID references DBS)
            self.execute("DB_PRIVS", "delete", f"DELETE FROM {q('DB_PRIVS')} WHERE {by_id}", [db_id])
        if plan.params_delete:
            assert db_id is not None
            keys = ", ".join(["%s"] * len(plan.params_delete))
            self.execute(
                "DATABASE_PARAMS",
                "delete",
                f"DELETE FROM {q('DATABASE_PARAMS')} WHERE {by_id} AND {q('PARAM_KEY')} IN ({keys})",
                [db_id, *plan.params_delete],
                len(plan.params_delete),
            )
        if plan.delete:
            self.execute("DBS", "delete", f"DELETE FROM {q('DBS')} WHERE {by_id}", [db_id], 1)
        if plan.insert is not None:
            row = dict(plan.insert)
            if row.get("DB_ID") is None:
                row["DB_ID"] = allocate_ids(self.metastore.alias, Database, 1)
            if row.get("OWNER_NAME") is None:
                row["OWNER_NAME"] = owner
            if "CREATE_TIME" in row and row["CREATE_TIME"] is None:
                row["CREATE_TIME"] = int(time.time())  # HMSHandler.create_database_core, 4.x
            self.insert("DBS", row)
            db_id = int(row["DB_ID"])
        if plan.update:
            assert db_id is not None
            sets = ", ".join(f"{q(column)} = %s" for column, _ in plan.update)
            self.execute(
                "DBS",
                "update",
                f"UPDATE {q('DBS')} SET {sets} WHERE {by_id}",
                [value for _, value in plan.update] + [db_id],
                1,
            )
        for key, value in plan.params_set:
            self.insert("DATABASE_PARAMS", {"DB_ID": db_id, "PARAM_KEY": key, "PARAM_VALUE": value})
        for privilege in plan.privileges:
            self.insert("DB_PRIVS", dict(privilege))
        if not plan.delete:
            self.steps(plan.steps)  # an undrop's tables come back after their database
        assert db_id is not None
        return db_id


def _directory(action: DirectoryAction, execution: Execution) -> int:
    """Do ``action``; returns how many directories it created (for the undo). A move (trash, restore) is journaled
    (``DirectoryMoveRecord``): ``reconcile_executions`` keeps or undoes it after a crash, by the commit marker."""
    filesystem = filesystem_for(action.source)
    if action.action == "create":
        return len(make_directory(action.source))
    if action.action == "remove":
        filesystem.prune_empty_parents(f"{action.source}/_", levels=action.levels)  # empty directories only (rmdir)
        if filesystem.exists(action.source):
            raise ApplicationError(
                ErrorCode.STALE_PREVIEW,
                f"{action.source} is not empty any more; nothing was applied.",
                {"location": action.source},
            )
        return 0
    record = DirectoryMoveRecord.objects.create(
        execution=execution, source=action.source, destination=action.destination
    )
    filesystem.rename(action.source, action.destination)  # trash, restore: refuses an existing destination, a link
    if action.action == "restore":  # the trash's emptied parents go: <name>.db/<fingerprint>[/…]
        filesystem.prune_empty_parents(action.source, levels=_trash_levels(action.source))
    record.state = DirectoryMoveRecord.State.MOVED
    record.save(update_fields=["state", "updated_at"])
    return 0


def _undo(done: Undo) -> None:
    """Put the directories back as they were, last first."""
    for action, created in reversed(done):
        filesystem = filesystem_for(action.source)
        if action.action == "create" and created:
            filesystem.prune_empty_parents(f"{action.source}/_", levels=created)
        elif action.action == "remove":
            make_directory(action.source)
        elif action.action in ("trash", "restore"):
            filesystem.rename(action.destination, action.source)
            if action.action == "trash":  # the parents the move made in the trash: <name>.db/<fingerprint>[/…]
                filesystem.prune_empty_parents(action.destination, levels=_trash_levels(action.destination))
            DirectoryMoveRecord.objects.filter(
                source=action.source, destination=action.destination, state=DirectoryMoveRecord.State.MOVED
            ).update(state=DirectoryMoveRecord.State.RESTORED)


def _trash_levels(location: str) -> int:
    """How many parents of ``location`` (in the console's trash) lie below the trash directory, plus the trash
    directory itself: what a move out of it may leave empty."""
    return location.partition(f"/{TRASH_DIR}/")[2].count("/") + 1


def _keep_image(
    metastore: Metastore,
    plan: DatabasePlan,
    execution: Execution,
    state: Any,
    db_id: int,
    done: Undo,
    capture: RowCapture,
) -> None:
    """What a revert needs, kept before the metastore commits (a CASCADE: every row of its tables, and their
    listing)."""
    image: dict[str, Any] = {"name": plan.database, "database_id": db_id}
    if plan.delete and (plan.tables or plan.steps):
        capture.flush()  # the rows in CapturedRows (as an ALTER's), their counts in the JSON
        image.update(captured=capture.counts, tables=[t.as_dict() for t in plan.tables])
    if state is not None:
        image.update(row=state.row, params=[list(p) for p in state.params], privileges=list(state.privileges))
    image["created_directories"] = [[d.source, created] for d, created in done if d.action == "create" and created]
    image["trashed"] = [[d.source, d.destination] for d in plan.directories if d.action == "trash"]
    image["removed"] = [d.source for d in plan.directories if d.action == "remove"]
    if not plan.delete:
        now = read_database_state(metastore, plan.database)
        image["after_fingerprint"] = now.fingerprint if now is not None else ABSENT
    execution.before_image = image
    execution.save(update_fields=["before_image"])
