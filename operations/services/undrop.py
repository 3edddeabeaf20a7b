"""
Undrop: the revert of a ``DROP TABLE`` / ``DROP VIEW``, from the execution's before-image.

Every deleted row goes back with its own ids (parents before children, so Hive's foreign keys hold), in multi-row
``INSERT`` statements; the data directories come back from the console's trash to where they were. The plan is built
on the table's state as the drop read it (kept in the before-image), so its fingerprint and events are the table's;
execution checks that the name is still free under the metastore transaction (``check_name_free``).

Refused, naming what is wrong: the table's name was taken since, its database is gone, a directory is no longer in the
trash, or something was put back where the data is to return.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.locations import filesystem_for
from catalog_admin.models import Database
from catalog_admin.selectors.metastores import Metastore
from operations.containment import MoveContext
from operations.events.planning import plan_events
from operations.models import DirectoryMoveRecord, Execution
from operations.planners.common import build_preview, snapshot
from operations.planners.drop_table_steps import INSERT_ORDER, reinsert_steps
from operations.preview import Preview
from operations.rules import Finding
from operations.services.putting_back import moves_back
from operations.specs import RevertExecution, TableRef
from operations.table_state import ColumnInfo, PartitionSummary, TableState, table_exists

__all__ = ("INSERT_ORDER", "check_name_free", "is_undrop", "undrop_preview")


def is_undrop(execution: Execution) -> bool:
    """Whether reverting ``execution`` undrops a table."""
    return execution.operation.get("kind") == "drop_table"


def undrop_preview(*, metastore: Metastore, execution: Execution) -> Preview:
    """The plan putting back the table ``execution`` dropped: its rows (same ids) and its data from the trash."""
    image = execution.read_before_image()
    state = _state_from(image["table_state"])
    blockers = _name_blockers(metastore, state) + _trash_blockers(execution)
    moves = tuple(moves_back(execution))
    spec = RevertExecution(
        target=state.ref, execution_id=execution.pk, statement=execution.statement, on_view=state.is_view
    )
    deleted = image.get("deleted_rows", {})
    preview = build_preview(
        metastore,
        state,
        spec,
        steps=[] if blockers else reinsert_steps(metastore, deleted),
        after=snapshot(state),
        blockers=blockers,
        moves=moves,
        move_contexts={move.source: MoveContext(table_id=state.table_id) for move in moves},
        partitions_touched=len(deleted.get("PARTITIONS", [])),
        inverse={"reverts": execution.pk, "undrop": True},
    )
    preview = replace(preview, before=snapshot(state, type="(dropped)", location=None))
    return replace(preview, events=plan_events(metastore, state, preview))


def check_name_free(metastore: Metastore, ref: TableRef) -> None:
    """Under the execution's transaction: the name is still free (the insert's unique key catches a race after)."""
    if table_exists(metastore, ref):
        raise ApplicationError(
            ErrorCode.STALE_PREVIEW,
            f"A table {ref.database}.{ref.table} exists again: the dropped table cannot be put back under its name; "
            "nothing was applied.",
            {"table": f"{ref.database}.{ref.table}"},
        )


def _state_from(data: dict[str, Any]) -> TableState:
    """The :class:`TableState` the drop stored (JSON turned its tuples into lists)."""
    values = dict(data)
    values["ref"] = TableRef(**values["ref"])
    values["columns"] = tuple(ColumnInfo(**c) for c in values["columns"])
    values["partition_keys"] = tuple(ColumnInfo(**k) for k in values["partition_keys"])
    values["table_column_statistics"] = tuple(values["table_column_statistics"])
    summary = dict(values["partitions"])
    for name in ("column_descriptors", "descriptor_users"):
        summary[name] = tuple(tuple(v) if isinstance(v, list) else v for v in summary.get(name, ()))
    values["partitions"] = PartitionSummary(**summary)
    known = {f.name for f in fields(TableState)}
    return TableState(**{k: v for k, v in values.items() if k in known})


def _name_blockers(metastore: Metastore, state: TableState) -> list[Finding]:
    """The table goes back into its own database (the same DB_ID) under its own, free, name."""
    ref = state.ref
    database_id = Database.objects.on(metastore).filter(name=ref.database).values_list("id", flat=True).first()
    if database_id is None:
        return [Finding("database_missing", "undrop", f"Database {ref.database} no longer exists: create it first.")]
    if database_id != state.database_id:
        return [
            Finding(
                "database_recreated",
                "undrop",
                f"Database {ref.database} was dropped and created again since "
                "the table was dropped: the table cannot go back into the database it belonged to.",
            )  # fmt: skip
        ]
    if table_exists(metastore, ref):
        return [
            Finding(
                "name_in_use",
                "undrop",
                f"{ref.database}.{ref.table} exists again: drop or rename it before the dropped table can be put back.",
            )  # fmt: skip
        ]
    return []


def _trash_blockers(execution: Execution) -> list[Finding]:
    """Each directory the drop moved must still be in the trash, and its old place free."""
    missing, taken = [], []
    for record in execution.moves.filter(state=DirectoryMoveRecord.State.COMMITTED).order_by("pk"):
        if not filesystem_for(record.destination, execution.metastore).exists(record.destination):
            missing.append(record.destination)
        elif filesystem_for(record.source, execution.metastore).exists(record.source):
            taken.append(record.source)
    findings = []
    if missing:
        findings.append(
            Finding(
                "trash_missing",
                "undrop",
                f"{len(missing)} data director(ies) are no longer in the trash, so "
                f"the data cannot come back: {', '.join(missing[:5])}.",
            )  # fmt: skip
        )
    if taken:
        findings.append(
            Finding(
                "location_taken",
                "undrop",
                f"{len(taken)} of the table's data location(s) exist again; move "
                f"them away before the undrop: {', '.join(taken[:5])}.",
            )  # fmt: skip
        )
    return findings
