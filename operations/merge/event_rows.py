"""
The rows a merge's notification events are built from before its publishing transaction (``operations.merge.events``):
the databases, tables and partitions the merge is about to publish, read from the source and transformed by the copy
plan's own column rules (``operations.spark.programs.merge.target_rows``: ids shifted, databases renamed, locations
and view texts rewritten, constants filled), so they are the rows the publish writes; their storage descriptors are
the target's own, copied (and committed, invisible to Hive) before the publish. The readers of
``operations.events.objects`` encode them exactly as they encode the published rows.

A target column the plan leaves to the target's default (the source's schema has no such column and the plan fills no
value) gets that default, evaluated by the target (``information_schema.columns``); one the target cannot evaluate so
makes the merge build its events in the publishing transaction instead (:class:`NotStaged`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from operator import itemgetter
from typing import Any

from django.db import DatabaseError
from django.db.models import Field, Model

from catalog_admin.models import Database, Partition, StorageDescriptor, Table
from operations.events.objects import MetastoreRows
from operations.merge.reads import MetastoreReader, quoted_for
from operations.models import MergeImport
from operations.spark.programs.merge import target_rows

__all__ = ("NotStaged", "StagedRows")

# The publishing tables the events read whole (a few rows per database and table); partitions are read per table.
WHOLE = ("DBS", "DATABASE_PARAMS", "TBLS", "TABLE_PARAMS", "PARTITION_KEYS")


class NotStaged(Exception):  # noqa: N818 - a condition, not an error: the events are then built in the transaction
    """A value the events need is not known before the publish (a column the target fills with its default)."""


class StagedRows(MetastoreRows):
    """The rows ``merge`` publishes, as the readers of ``operations.events.objects`` read them (target ids)."""

    def __init__(self, merge: MergeImport, plan: dict[str, Any]) -> None:
        super().__init__(merge.target)
        self.plan, self.source = plan, MetastoreReader(merge.source)
        self.offsets = merge.offsets
        self.steps = {s["table"]: s for s in plan["steps"] if s["phase"] == "publish" and s.get("ranges")}
        whole = {name: list(self._rows(name)) for name in WHOLE}
        self.databases = {int(r["DB_ID"]): r for r in whole["DBS"]}
        self.tables = {int(r["TBL_ID"]): r for r in whole["TBLS"]}
        self.database_param_rows = _grouped(whole["DATABASE_PARAMS"], "DB_ID", ("PARAM_KEY", "PARAM_VALUE"))
        self.table_param_rows = _grouped(whole["TABLE_PARAMS"], "TBL_ID", ("PARAM_KEY", "PARAM_VALUE"))
        keys = sorted(whole["PARTITION_KEYS"], key=lambda r: int(r["INTEGER_IDX"]))
        self.keys = _grouped(keys, "TBL_ID", ("PKEY_NAME", "PKEY_TYPE", "PKEY_COMMENT"))
        self._partition_ids: dict[int, list[int]] = {}
        self._defaults: dict[tuple[str, str], Any] = {}
        self._column_names: dict[tuple[type[Model], tuple[str, ...]], tuple[str, ...]] = {}

    def imported(self) -> list[tuple[int, list[tuple[int, int]]]]:
        """(DB_ID, [(TBL_ID, partitions)]) per database, in id order, as ``operations.merge.events`` lists them."""
        by_database: dict[int, list[tuple[int, int]]] = {db_id: [] for db_id in sorted(self.databases)}
        for tbl_id in sorted(self.tables):
            by_database[int(self.tables[tbl_id]["DB_ID"])].append((tbl_id, len(self.partition_ids(tbl_id))))
        return list(by_database.items())

    # MetastoreRows ------------------------------------------------------------------------------------------------

    def database(self, database_id: int, columns: list[str]) -> dict[str, Any]:
        return self._fields(Database, self.databases[database_id], columns)

    def database_params(self, database_id: int) -> list[tuple[Any, ...]]:
        return self.database_param_rows.get(database_id, [])

    def table(self, table_id: int, columns: list[str]) -> dict[str, Any]:
        row = self.tables[table_id]
        own = [c for c in columns if "__" not in c]
        fields = self._fields(Table, row, own)
        database = self.databases[int(row["DB_ID"])]
        for column in columns:
            if column.startswith("database__"):
                fields[column] = self._fields(Database, database, [column.removeprefix("database__")])[
                    column.removeprefix("database__")
                ]
        if "sd__location" in columns:  # the storage descriptor is the target's, copied before the publish
            sds = StorageDescriptor.objects.using(self.alias).filter(pk=row["SD_ID"]).values_list("location", flat=True)
            fields["sd__location"] = next(iter(sds), None)
        return fields

    def partition_keys(self, table_id: int) -> list[tuple[Any, ...]]:
        return self.keys.get(table_id, [])

    def table_params(self, table_id: int) -> list[tuple[Any, ...]]:
        return self.table_param_rows.get(table_id, [])

    def partition_ids(self, table_id: int) -> list[int]:
        if table_id not in self._partition_ids:
            source_table = table_id - self.offsets.get("TBLS", 0)
            rows = self._rows("PARTITIONS", '"TBL_ID" = %s', [source_table])
            self._partition_ids[table_id] = sorted(int(r["PART_ID"]) for r in rows)
        return self._partition_ids[table_id]

    def partitions(self, ids: list[int], columns: list[str]) -> list[tuple[Any, ...]]:
        wanted = set(ids)
        found = [r for r in self._partition_range("PARTITIONS", ids) if int(r["PART_ID"]) in wanted]
        rows = [self._values(Partition, r, columns) for r in found]
        return sorted(rows, key=lambda row: row[0])

    def key_values(self, ids: list[int]) -> dict[Any, list[tuple[Any, ...]]]:
        rows = self._partition_columns("PARTITION_KEY_VALS", ids, ("INTEGER_IDX", "PART_KEY_VAL"))
        rows.sort(key=lambda row: (int(row[0]), int(row[1])))
        return _owned(row[::2] for row in rows)  # (PART_ID, PART_KEY_VAL)

    def partition_params(self, ids: list[int]) -> dict[Any, list[tuple[Any, ...]]]:
        return _owned(self._partition_columns("PARTITION_PARAMS", ids, ("PARAM_KEY", "PARAM_VALUE")))

    # Reading ----------------------------------------------------------------------------------------------------

    def _fields(self, model: type[Model], row: dict[str, Any], names: list[str]) -> dict[str, Any]:
        """``row`` (by target column, upper case) as the ORM's ``values(*names)`` gives it; a column the publish
        leaves out has the target's default."""
        return dict(zip(names, self._values(model, row, names), strict=True))

    def _values(self, model: type[Model], row: dict[str, Any], names: list[str]) -> tuple[Any, ...]:
        """The values of :meth:`_fields`, in the order of ``names``."""
        table = str(model._meta.db_table)
        return tuple(
            row[column] if column in row else self._default(table, column) for column in self._columns(model, names)
        )

    def _columns(self, model: type[Model], names: list[str]) -> tuple[str, ...]:
        """The target columns (upper case) of ``model``'s fields ``names``, looked up once per list."""
        key = (model, tuple(names))
        if key not in self._column_names:
            columns = []
            for name in names:
                field = model._meta.get_field(name)
                assert isinstance(field, Field), f"{name} is a column of {model.__name__}"
                columns.append(str(field.column).upper())
            self._column_names[key] = tuple(columns)
        return self._column_names[key]

    def _default(self, table: str, column: str) -> Any:
        """The value the target gives ``table.column`` when an insert leaves it out (its declared default, or NULL)."""
        key = (table, column)
        if key not in self._defaults:
            target = MetastoreReader(self.alias)
            schema = "current_schema()" if target.vendor == "postgresql" else "DATABASE()"
            rows = target.raw_rows(
                "SELECT column_default FROM information_schema.columns "
                f"WHERE table_schema = {schema} AND UPPER(table_name) = %s AND UPPER(column_name) = %s",
                [table.upper(), column],
            )
            if not rows:
                raise NotStaged(f"{table}.{column}: the target has no such column")
            declared = rows[0][0]
            try:
                value = target.raw_rows(f"SELECT {declared}")[0][0] if declared is not None else None
            except DatabaseError as exc:
                raise NotStaged(f"{table}.{column}: the target's default {declared!r} is not a value") from exc
            self._defaults[key] = any(value) if isinstance(value, bytes | bytearray) else value
        return self._defaults[key]

    def _partition_range(self, name: str, ids: list[int]) -> Iterator[dict[str, Any]]:
        """The rows of ``name`` whose (target) partition ids lie between the least and greatest of ``ids``."""
        return self._rows(name, *self._partition_bounds(name, ids)) if ids else iter(())

    def _partition_columns(self, name: str, ids: list[int], columns: tuple[str, ...]) -> list[tuple[Any, ...]]:
        """``(PART_ID, *columns)`` (target columns, upper case) of the rows of ``name`` that belong to the partitions
        ``ids``: tuples, not a mapping per row (the parameter and key value tables hold most of a merge's rows)."""
        if not ids:
            return []
        wanted, picked = set(ids), ("PART_ID", *columns)
        rows = self._rows(name, *self._partition_bounds(name, ids), columns=picked)
        return [row for row in rows if int(row[0]) in wanted]

    def _partition_bounds(self, name: str, ids: list[int]) -> tuple[str, list[int], tuple[int, int] | None]:
        """The condition keeping ``name``'s rows of the partitions between the least and greatest of ``ids`` (target
        ids), and the span of the step's scope for a table scoped by its partitions, which then reads its scope for
        those partitions only, not for every partition of the step."""
        offset = self.offsets.get("PARTITIONS", 0)
        low, high = ids[0] - offset, ids[-1] - offset
        step = self.steps.get(name)
        scoped_by_partition = step is not None and step["scope"] == quoted_for('"PART_ID"', self.source.vendor)
        return '"PART_ID" BETWEEN %s AND %s', [low, high], (low, high) if scoped_by_partition else None

    def _rows(
        self, name: str, where: str = "", params: Iterable[Any] = (), span: tuple[int, int] | None = None,
        columns: tuple[str, ...] = (),
    ) -> Iterator[Any]:  # fmt: skip
        """The publishing step's rows of ``name`` (all its units, or those of the scope column's ``span``; ``where``:
        a further condition on the source's columns) as the target will hold them: computed by the source's server
        where the step has a SQL form (the pipe's own ``SELECT``, PostgreSQL to PostgreSQL), else transformed here by
        the program's column rules. Each a mapping by target column (upper case), or with ``columns`` a tuple of
        those."""
        step = self.steps.get(name)
        if step is None:
            return iter(())
        low, high = span or (step["ranges"][0][0], step["ranges"][-1][1])
        piped = step.get("pipe_select")
        sql = (piped or step["select"]).replace("%(low)s", str(int(low))).replace("%(high)s", str(int(high)))
        if where:
            sql += " AND " + quoted_for(where, self.source.vendor)
        rows = self.source.raw_rows(sql, list(params))
        names = [column[0].upper() for column in step["columns"]]
        if piped:
            if columns:
                return map(_picker([names.index(column) for column in columns]), rows)
            return (dict(zip(names, row, strict=True)) for row in rows)
        read = [column.upper() for column in step["read"]]
        transformed = target_rows(self.plan, step, (dict(zip(read, row, strict=True)) for row in rows))
        return map(_picker(list(columns)), transformed) if columns else transformed


def _picker(keys: list[Any]) -> Callable[[Any], tuple[Any, ...]]:
    """What takes ``keys`` (indexes or names) of a row, as a tuple (one key too)."""
    pick = itemgetter(*keys)
    return pick if len(keys) > 1 else lambda row: (pick(row),)


def _owned(rows: Iterable[tuple[Any, ...]]) -> dict[int, list[tuple[Any, ...]]]:
    """``(owner id, *values)`` rows as the values of each owner, in order."""
    grouped: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    for row in rows:
        grouped[int(row[0])].append(row[1:])
    return dict(grouped)


def _grouped(rows: Iterable[dict[str, Any]], owner: str, columns: tuple[str, ...]) -> dict[int, list[tuple[Any, ...]]]:
    grouped: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    for row in rows:
        grouped[int(row[owner])].append(tuple(row[c] for c in columns))
    return dict(grouped)
