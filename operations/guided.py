"""
The guided request: an operation picker whose choices are ready-to-edit statements for one table.

Each choice is Hive DDL text built from the table's own columns, partition keys, first partition and location, so a
steward starts from a statement that parses and previews, and still sees (and may edit) the text that runs.
A read: one table state and at most two partition rows (and, for a transactional table, its queued compactions).
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog_admin.errors import ApplicationError
from catalog_admin.hive.partition_names import partition_values
from catalog_admin.models import CompactionQueueEntry, Partition
from catalog_admin.selectors.metastores import Metastore
from operations.guided_create_table import create_table_choices
from operations.specs import TableRef
from operations.table_state import TableState, read_table_state

__all__ = ("GuidedOperation", "guided_operations", "initial_statement", "partition_operations")


@dataclass(frozen=True)
class GuidedOperation:
    """One choice of the picker: its key (``?operation=``), label and the statement it starts from."""

    key: str
    label: str
    statement: str
    hint: str = ""


def guided_operations(metastore: Metastore, qualified: str) -> tuple[GuidedOperation, ...]:
    """The picker's choices for ``db.table`` (empty when the name is not a table of ``metastore``)."""
    database, _, table = qualified.partition(".")
    if database and not table:  # ``db.``: a database page's request, creating a table
        return tuple(GuidedOperation(*choice) for choice in create_table_choices(metastore, database))
    if not database or not table:
        return ()
    try:
        state = read_table_state(metastore, TableRef(database, table))
    except ApplicationError:
        return ()
    return _view_operations(state) if state.is_view else _table_operations(metastore, state)


def partition_operations(metastore: Metastore, qualified: str, name: str) -> tuple[GuidedOperation, ...]:
    """The requests a partition's page offers for partition ``name`` of ``db.table``: drop it, rename it, and (on a
    managed table; a transactional one under Hive's lock) truncate it; empty when the table or partition is not
    there."""
    database, _, table = qualified.partition(".")
    try:
        state = read_table_state(metastore, TableRef(database, table))
    except ApplicationError:
        return ()
    if not state.partition_keys or not name:
        return ()
    ref, spec = f"{_quote(database)}.{_quote(table)}", _as_spec(state, name)
    ops = [
        GuidedOperation(
            "partition_drop", "Drop this partition…", f"ALTER TABLE {ref} DROP IF EXISTS PARTITION ({spec})",
            "Its directory goes to the console's trash; a revert puts both back.",
        ),
        GuidedOperation(
            "partition_rename", "Rename this partition…",
            f"ALTER TABLE {ref} PARTITION ({spec}) RENAME TO PARTITION ({spec})", "Edit the values after RENAME TO.",
        ),
    ]  # fmt: skip
    if state.table_type == "MANAGED_TABLE":
        ops.append(_truncate_operation(ref, spec))
    return tuple(ops)


def initial_statement(operations: tuple[GuidedOperation, ...], key: str) -> str:
    """The statement of the chosen operation (the first one when ``key`` names none)."""
    chosen = next((op for op in operations if op.key == key), operations[0] if operations else None)
    return chosen.statement if chosen else ""


def _table_operations(metastore: Metastore, state: TableState) -> tuple[GuidedOperation, ...]:
    ref = f"{_quote(state.ref.database)}.{_quote(state.ref.table)}"
    last = state.columns[-1] if state.columns else None
    ops = [
        GuidedOperation(
            "properties", "Set table properties", f"ALTER TABLE {ref} SET TBLPROPERTIES ('comment'='…')",
            "Metadata only: the cheapest change.",
        ),
        GuidedOperation("rename", "Rename the table", f"ALTER TABLE {ref} RENAME TO {ref[:-1]}_new`"),
        GuidedOperation("add_columns", "Add columns", f"ALTER TABLE {ref} ADD COLUMNS (new_column string COMMENT '…')"),
    ]  # fmt: skip
    if last is not None:
        columns = ", ".join(f"{_quote(c.name)} {c.type}" for c in state.columns)
        ops += [
            GuidedOperation(
                "change_column", "Change a column",
                f"ALTER TABLE {ref} CHANGE COLUMN {_quote(last.name)} {_quote(last.name)} {last.type} COMMENT '…'",
                "Rename it, change its type or comment, or move it with FIRST / AFTER.",
            ),
            GuidedOperation(
                "replace_columns", "Replace the columns", f"ALTER TABLE {ref} REPLACE COLUMNS ({columns})",
                "Leaving a column out removes it from the schema (its data stays in the files).",
            ),
        ]  # fmt: skip
    if state.location:
        location = f"ALTER TABLE {ref} SET LOCATION '{state.location}'"
        ops.append(GuidedOperation("location", "Set the location", location, "Metadata only: no data moves."))
        if not state.is_transactional:  # rewriting an ACID table's files bypasses Hive's write ids
            ops.append(
                GuidedOperation(
                    "relocate", "Move the data to a new location",
                    f"ALTER TABLE {ref} SET LOCATION '{state.location.rstrip('/')}_relocated' WITH DATA",
                    "A Spark job copies every file and verifies it, then the table is re-pointed; the old data is "
                    "kept for the retention time.",
                ),
            )  # fmt: skip
            ops += [
                GuidedOperation(
                    "concatenate", "Compact small files", f"ALTER TABLE {ref} CONCATENATE",
                    "A Spark job rewrites each partition with many small files into a new directory of fewer files, "
                    "checks the rows, then swaps; the old files are kept for the retention time.",
                ),
                GuidedOperation(
                    "convert", "Convert the data to another format",
                    f"ALTER TABLE {ref} SET FILEFORMAT PARQUET WITH DATA",
                    "A Spark job rewrites the data as PARQUET, ORC or AVRO, then formats, SerDe and locations switch "
                    "together; plain SET FILEFORMAT would leave the files unreadable.",
                ),
            ]  # fmt: skip
    partition = _first_partition(metastore, state)
    if partition:
        ops += [
            GuidedOperation(
                "partition_rename", "Rename a partition",
                f"ALTER TABLE {ref} PARTITION ({partition}) RENAME TO PARTITION ({partition})",
                "Edit the values after RENAME TO.",
            ),
            GuidedOperation(
                "partition_drop", "Drop partitions", f"ALTER TABLE {ref} DROP IF EXISTS PARTITION ({partition})",
                "Comparisons (<, <=, >, >=, <>) drop ranges; the preview lists what goes.",
            ),
        ]  # fmt: skip
    if state.partition_keys:
        ops += _partition_repair_operations(metastore, state, ref)
    if not state.is_transactional:  # the analyze planner refuses transactional tables (Hive's write ids)
        ops += _statistics_operations(ref)
    if state.is_transactional:
        ops.append(_compaction_operation(metastore, state, ref, partition))
    ops.append(_drop_operation(state, ref))
    if state.table_type == "MANAGED_TABLE":  # Hive truncates managed tables only (transactional ones under its lock)
        ops.append(_truncate_operation(ref, partition))
    return tuple(ops)


def _partition_repair_operations(metastore: Metastore, state: TableState, ref: str) -> list[GuidedOperation]:
    """ADD PARTITION (values to edit) and MSCK REPAIR TABLE (SYNC where the version has it; 2.3 only adds)."""
    spec = ", ".join(f"{_quote(k.name)}='…'" for k in state.partition_keys)
    sync = " SYNC PARTITIONS" if metastore.schema.capabilities.msck_drops_partitions else ""
    return [
        GuidedOperation(
            "partition_add", "Add partitions", f"ALTER TABLE {ref} ADD IF NOT EXISTS PARTITION ({spec})",
            "Edit the values; add LOCATION '…' for data elsewhere. A managed partition's directory is created.",
        ),
        GuidedOperation(
            "msck_repair", "Repair partitions from the directories", f"MSCK REPAIR TABLE {ref}{sync}",
            "Adds a partition for each directory found under the table's and (SYNC) drops those whose directory is "
            "missing; the preview lists both with the bytes found.",
        ),
    ]  # fmt: skip


def _statistics_operations(ref: str) -> list[GuidedOperation]:
    """Recompute statistics where stale (the stale-statistics anomaly's action: ``BASIC_STATS`` not marked true) and
    the column statistics where their ``COLUMN_STATS`` flags are not set, both with ``WITH ('only_stale'='true')``."""
    return [
        GuidedOperation(
            "analyze_stale", "Recompute statistics where stale",
            f"ANALYZE TABLE {ref} COMPUTE STATISTICS WITH ('only_stale'='true')",
            "A Spark job counts the rows, files and bytes of each partition whose statistics Hive does not mark "
            "accurate, then they are swapped in one transaction; a revert puts the old ones back.",
        ),
        GuidedOperation(
            "analyze_columns_stale", "Recompute column statistics where stale",
            f"ANALYZE TABLE {ref} COMPUTE STATISTICS FOR COLUMNS WITH ('only_stale'='true')",
            "Every column of each partition whose column statistics are not all marked accurate; name columns after "
            "FOR COLUMNS to narrow it.",
        ),
    ]  # fmt: skip


def _drop_operation(state: TableState, ref: str) -> GuidedOperation:
    """``DROP TABLE`` (``DROP VIEW`` for a view); a revert of the drop undrops it."""
    if state.is_view:
        return GuidedOperation("drop", "Drop the view…", f"DROP VIEW {ref}", "A revert puts the view back.")
    data = (
        "Metadata only: an external table's files stay where they are."
        if state.is_external
        else "Its data goes to the console's trash (PURGE too), never deleted; a revert undrops it while the trash "
        "holds it."
    )
    return GuidedOperation("drop", "Drop table…", f"DROP TABLE {ref}", data)


def _truncate_operation(ref: str, partition: str) -> GuidedOperation:
    """``TRUNCATE TABLE``, of the first partition on a partitioned table (a partial spec selects many)."""
    spec = f" PARTITION ({partition})" if partition else ""
    return GuidedOperation(
        "truncate", "Truncate…", f"TRUNCATE TABLE {ref}{spec}",
        "The data goes to the console's trash and the directories stay, empty; statistics reset to 0. Leave out "
        "keys to truncate many partitions, or the PARTITION clause for the whole table. A revert moves it back.",
    )  # fmt: skip


def _compaction_operation(metastore: Metastore, state: TableState, ref: str, first: str) -> GuidedOperation:
    """``COMPACT 'major'`` for the table or, as Hive requires for a partitioned table, one partition: the first one
    without a request already queued (Hive refuses a second), else the first."""
    partition = _partition_to_compact(metastore, state) or first if state.partition_keys else ""
    spec = f" PARTITION ({partition})" if partition else ""
    return GuidedOperation(
        "compaction", "Request a compaction", f"ALTER TABLE {ref}{spec} COMPACT 'major'",
        "'major' rewrites the deltas and base into a new base; 'minor' merges the deltas only. Hive's Worker runs "
        "the request later.",
    )  # fmt: skip


def _partition_to_compact(metastore: Metastore, state: TableState) -> str:
    queued = CompactionQueueEntry.objects.on(metastore).filter(
        database=state.ref.database, table=state.ref.table, state__in=("i", "w"), partition__isnull=False
    )
    name = (
        Partition.objects.using(metastore.alias)
        .filter(table_id=state.table_id)
        .exclude(name__in=queued.values("partition"))
        .order_by("id")
        .values_list("name", flat=True)
        .first()
    )
    return _as_spec(state, name) if name else ""


def _view_operations(state: TableState) -> tuple[GuidedOperation, ...]:
    ref = f"{_quote(state.ref.database)}.{_quote(state.ref.table)}"
    return (
        GuidedOperation("properties", "Set view properties", f"ALTER VIEW {ref} SET TBLPROPERTIES ('comment'='…')"),
        GuidedOperation("rename", "Rename the view", f"ALTER VIEW {ref} RENAME TO {ref[:-1]}_new`"),
        _drop_operation(state, ref),
    )


def _first_partition(metastore: Metastore, state: TableState) -> str:
    """The table's first partition as a spec (``dt='2024-01-01', hour='0'``), or ``""`` (one indexed row)."""
    if not state.partition_keys:
        return ""
    name = (
        Partition.objects.using(metastore.alias)
        .filter(table_id=state.table_id)
        .order_by("id")
        .values_list("name", flat=True)
        .first()
    )
    return _as_spec(state, name) if name else ""


def _as_spec(state: TableState, name: str) -> str:
    """A partition name (``dt=2024-01-01/hour=0``) as a spec (``dt='2024-01-01', hour='0'``)."""
    values = partition_values(name)
    return ", ".join(f"{_quote(k.name)}='{_escape(v)}'" for k, v in zip(state.partition_keys, values, strict=False))


def _quote(identifier: str) -> str:
    return "`" + identifier.replace("`", "``") + "`"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("'", "\\'")
