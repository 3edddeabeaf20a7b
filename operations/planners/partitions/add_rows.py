"""
The rows Hive writes for partitions it adds (``ObjectStore.addPartitions`` → ``convertToMPart``), as set-based
multi-row inserts: per partition a storage descriptor copied from the table's (its location its own, the table's
column descriptor shared, as ``convertToMStorageDescriptor`` reuses the table's ``MColumnDescriptor``), a SerDe
copied from the table's with its parameters, the descriptor's parameters, bucketing and sort columns, the
``PARTITIONS`` row, its key values and its parameters (``transient_lastDdlTime`` from the database's clock at
execution, ``HMSHandler.initializeAddedPartition``; the quick statistics when the directory existed).

Ids come in three blocks from SEQUENCE_TABLE (:class:`~operations.preview.NewId` with a ``count``), allocated at
execution; each row's id is the block's first id plus its position. Set-based: the per-partition values (names,
locations, key values, parameters) go to the database as one JSON array per column and chunk of
:data:`ROWS_PER_STATEMENT` partitions, unpacked by the database (PostgreSQL ``json_array_elements``, MySQL/MariaDB
``JSON_TABLE``, SQLite ``json_each``), and every copied row is an ``INSERT … SELECT`` from the table's own row joined
with them: a few statements per chunk whatever the number of partitions, none per partition.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connections
from django.db.models import Model

from catalog_admin.models import (
    BucketingColumn,
    Partition,
    SerDe,
    SerDeParam,
    SortColumn,
    StorageDescriptor,
    StorageDescriptorParam,
)
from catalog_admin.selectors.metastores import Metastore
from operations.preview import NewId, Step
from operations.table_state import TableState

__all__ = ("ADDED", "NewPartitionRow", "add_partition_steps", "epoch_seconds_text")

ADDED = "added"  # the NewId slot of the blocks an addition allocates
ROWS_PER_STATEMENT = 10_000  # partitions per statement (a JSON array of ~1 MB per column at most)
# ``(o, v)`` rows from a JSON array of ``[offset, value]`` pairs, per vendor.
JSON_ROWS = {
    "postgresql": "(SELECT CAST(e->>0 AS BIGINT) AS o, e->>1 AS v FROM json_array_elements(CAST(%s AS json)) AS e)",
    "mysql": "(SELECT j.o, j.v FROM JSON_TABLE(%s, '$[*]' COLUMNS (o BIGINT PATH '$[0]', v VARCHAR(4000) PATH '$[1]'))"
    " AS j)",
    "sqlite": "(SELECT CAST(json_extract(value, '$[0]') AS INTEGER) AS o, json_extract(value, '$[1]') AS v "
    "FROM json_each(%s))",
}
# The database's clock in whole seconds, as text (PARTITION_PARAMS.PARAM_VALUE), evaluated by the statement itself at
# execution, so a rebuilt plan is the same plan (Hive: System.currentTimeMillis() / 1000).
EPOCH_TEXT = {
    "postgresql": "CAST(CAST(FLOOR(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP)) AS BIGINT) AS VARCHAR)",
    "mysql": "CAST(UNIX_TIMESTAMP() AS CHAR)",
    "sqlite": "CAST(CAST(strftime('%%s', 'now') AS INTEGER) AS TEXT)",  # '%%': the statement has parameters
}
EPOCH = {
    "postgresql": "CAST(FLOOR(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP)) AS BIGINT)",
    "mysql": "UNIX_TIMESTAMP()",
    "sqlite": "CAST(strftime('%%s', 'now') AS INTEGER)",
}


@dataclass(frozen=True)
class NewPartitionRow:
    """One partition to add: its name, values in key order, location and the parameters Hive gives it."""

    name: str
    values: tuple[str, ...]
    location: str
    params: tuple[tuple[str, str], ...] = ()


def epoch_seconds_text(vendor: str) -> str:
    return EPOCH_TEXT[vendor]


def add_partition_steps(metastore: Metastore, state: TableState, rows: Sequence[NewPartitionRow]) -> list[Step]:
    """The statements adding ``rows`` to the table of ``state`` (none for no rows)."""
    if not rows or state.sd_id is None:
        return []
    ids = {table: NewId(table, ADDED, len(rows)) for table in ("SERDES", "SDS", "PARTITIONS")}
    steps: list[Step] = []
    for start in range(0, len(rows), ROWS_PER_STATEMENT):
        steps += _chunk_steps(metastore, state, rows[start : start + ROWS_PER_STATEMENT], start, ids)
    return sorted(steps, key=lambda step: INSERT_ORDER.index(step.metastore_table))  # parents before children


INSERT_ORDER = ("SERDES", "SERDE_PARAMS", "SDS", "SD_PARAMS", "BUCKETING_COLS", "SORT_COLS", "PARTITIONS",
                "PARTITION_KEY_VALS", "PARTITION_PARAMS")  # fmt: skip


def _chunk_steps(
    metastore: Metastore, state: TableState, rows: Sequence[NewPartitionRow], start: int, ids: dict[str, NewId]
) -> list[Step]:
    alias = metastore.alias
    sd = _template(alias, StorageDescriptor, "id", state.sd_id or 0)[0]
    series = _pairs((i, row.name) for i, row in enumerate(rows))
    copy = _Copier(metastore, series, len(rows), start)
    steps: list[Step] = []
    serde_id = sd.get("SERDE_ID")
    if serde_id is not None:
        steps += copy(SerDe, "id", serde_id, {"SERDE_ID": ids["SERDES"]})
        steps += copy(SerDeParam, "serde", serde_id, {"SERDE_ID": ids["SERDES"]})
    locations = _pairs((i, row.location) for i, row in enumerate(rows))
    sd_ids = {"SD_ID": ids["SDS"], **({"SERDE_ID": ids["SERDES"]} if serde_id is not None else {})}
    steps += _Copier(metastore, locations, len(rows), start)(StorageDescriptor, "id", sd["SD_ID"], sd_ids, "LOCATION")
    for model in (StorageDescriptorParam, BucketingColumn, SortColumn):
        steps += copy(model, "sd", sd["SD_ID"], {"SD_ID": ids["SDS"]})
    return steps + _partition_rows(metastore, state, rows, start, ids)


class _Copier:
    """``INSERT … SELECT`` of an owner's rows once per partition of a chunk (``per_row``: a column from the chunk's
    JSON ``values``)."""

    def __init__(self, metastore: Metastore, values: str, count: int, start: int) -> None:
        self.metastore, self.values, self.count, self.start = metastore, values, count, start

    def __call__(
        self, model: type[Model], field: str, owner: int, ids: dict[str, NewId], per_row: str = ""
    ) -> list[Step]:
        alias = self.metastore.alias
        template = _template(alias, model, field, owner)
        if not template:
            return []
        quote = connections[alias].ops.quote_name
        table = model._meta.db_table
        columns = list(template[0])
        owner_column = str(getattr(model._meta.get_field(field), "column", ""))
        selected, params = [], []
        for column in columns:
            if column in ids:
                selected.append(f"%s + {self.start} + t.o")
                params.append(ids[column])
            elif column == per_row:
                selected.append("t.v")
            else:
                selected.append(f"s.{quote(column)}")
        sql = (
            f"INSERT INTO {quote(table)} ({', '.join(quote(c) for c in columns)}) SELECT {', '.join(selected)} "
            f"FROM {quote(table)} s CROSS JOIN {JSON_ROWS[self.metastore.config.vendor]} t "
            f"WHERE s.{quote(owner_column)} = %s"
        )
        rows = len(template) * self.count
        return [Step(f"Add {rows} {table} rows", table, "insert", sql, (*params, self.values, owner), rows)]


def _partition_rows(
    metastore: Metastore, state: TableState, rows: Sequence[NewPartitionRow], start: int, ids: dict[str, NewId]
) -> list[Step]:
    vendor = metastore.config.vendor
    quote = connections[metastore.alias].ops.quote_name
    source = JSON_ROWS[vendor]
    part_id = f"%s + {start} + t.o"
    columns = ["PART_ID", "CREATE_TIME", "LAST_ACCESS_TIME", "PART_NAME", "SD_ID", "TBL_ID"]
    selected = [part_id, EPOCH[vendor], "0", "t.v", f"%s + {start} + t.o", "%s"]
    params: list[Any] = [ids["PARTITIONS"], ids["SDS"], state.table_id]
    if metastore.schema.has(Partition, "write_id"):
        columns.append("WRITE_ID")  # Msck: partition.setWriteId(table.getWriteId())
        selected.append("%s")
        params.append(_table_write_id(metastore, state.table_id))
    names = _pairs((i, row.name) for i, row in enumerate(rows))
    steps = [_insert_select(quote, "PARTITIONS", columns, selected, source, [*params, names], rows)]
    for position in range(len(state.partition_keys)):
        values = _pairs((i, row.values[position]) for i, row in enumerate(rows))
        steps.append(
            _insert_select(quote, "PARTITION_KEY_VALS", ["PART_ID", "PART_KEY_VAL", "INTEGER_IDX"],
                           [part_id, "t.v", str(position)], source, [ids["PARTITIONS"], values], rows)
        )  # fmt: skip
    by_key: dict[str, list[tuple[int, str]]] = {}
    for i, row in enumerate(rows):
        for key, value in row.params:
            by_key.setdefault(key, []).append((i, value))
    param_columns = ["PART_ID", "PARAM_KEY", "PARAM_VALUE"]
    ddl_time = [part_id, "'transient_lastDdlTime'", EPOCH_TEXT[vendor]]
    steps.append(
        _insert_select(quote, "PARTITION_PARAMS", param_columns, ddl_time, source, [ids["PARTITIONS"], names], rows)
    )
    for key, pairs in sorted(by_key.items()):
        steps.append(
            _insert_select(quote, "PARTITION_PARAMS", param_columns, [part_id, "%s", "t.v"], source,
                           [ids["PARTITIONS"], key, _pairs(pairs)], pairs)
        )  # fmt: skip
    return steps


def _insert_select(
    quote: Any, table: str, columns: list[str], selected: list[str], source: str, params: list[Any], rows: Sequence
) -> Step:
    """``INSERT INTO table (columns) SELECT selected FROM <the JSON rows> t``: parameters in the text's order."""
    sql = (
        f"INSERT INTO {quote(table)} ({', '.join(quote(c) for c in columns)}) "
        f"SELECT {', '.join(selected)} FROM {source} t"
    )
    return Step(f"Add {len(rows)} {table} rows", table, "insert", sql, tuple(params), len(rows))


def _pairs(pairs: Iterable[tuple[int, str | None]]) -> str:
    """A JSON array of ``[offset, value]`` pairs (the statements' per-row values)."""
    return json.dumps(list(pairs), ensure_ascii=False, separators=(",", ":"))  # a tuple is written as an array


def _table_write_id(metastore: Metastore, table_id: int) -> Any:
    quote = connections[metastore.alias].ops.quote_name
    with connections[metastore.alias].cursor() as cursor:
        cursor.execute(f"SELECT {quote('WRITE_ID')} FROM {quote('TBLS')} WHERE {quote('TBL_ID')} = %s", [table_id])
        row = cursor.fetchone()
    return row[0] if row else 0


def _template(alias: str, model: type[Model], field: str, owner: int) -> list[dict[str, Any]]:
    """The rows of ``model`` belonging to ``owner`` (every column, as the database has them), in key order."""
    quote = connections[alias].ops.quote_name
    column = str(getattr(model._meta.get_field(field), "column", ""))
    with connections[alias].cursor() as cursor:
        cursor.execute(f"SELECT * FROM {quote(model._meta.db_table)} WHERE {quote(column)} = %s", [owner])
        names = [c[0] for c in cursor.description]
        found = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    return sorted(found, key=lambda row: tuple(str(row[n]) for n in names))
