"""
The rows Hive writes for partitions it adds (``ObjectStore.addPartitions`` → ``convertToMPart``), as set-based
multi-row inserts: per partition a storage descriptor copied from the table's (its location its own, the table's
column descriptor shared, as ``convertToMStorageDescriptor`` reuses the table's ``MColumnDescriptor``), a SerDe
copied from the table's with its parameters, the descriptor's parameters, bucketing and sort columns, the
``PARTITIONS`` row, its key values and its parameters (``transient_lastDdlTime`` from the database's clock at
execution, ``HMSHandler.initializeAddedPartition``; the quick statistics when the directory existed).

Ids come in three blocks from SEQUENCE_TABLE (:class:`~operations.preview.NewId` with a ``count``), allocated at
execution; each row's id is the block's first id plus its position, written in the statement's text.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connections
from django.db.models import Model

from catalog_admin.models import (
    BucketingColumn,
    Partition,
    PartitionKeyValue,
    PartitionParam,
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
ROWS_PER_STATEMENT = 1000
PARAMS_PER_STATEMENT = 30000
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
NOW = object()  # a value written as the database's clock (EPOCH / EPOCH_TEXT) instead of a parameter


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
    alias, count = metastore.alias, len(rows)
    ids = {table: NewId(table, ADDED, count) for table in ("SERDES", "SDS", "PARTITIONS")}
    sd = _template(alias, StorageDescriptor, "id", state.sd_id)[0]
    serde = _template(alias, SerDe, "id", sd["SERDE_ID"]) if sd.get("SERDE_ID") is not None else []
    steps: list[Step] = []
    if serde:
        steps += _copies(metastore, SerDe, serde, {"SERDE_ID": ids["SERDES"]}, count)
        serde_params = _template(alias, SerDeParam, "serde", sd["SERDE_ID"])
        steps += _copies(metastore, SerDeParam, serde_params, {"SERDE_ID": ids["SERDES"]}, count)
    locations = [row.location for row in rows]
    sd_values = {"SD_ID": ids["SDS"], "SERDE_ID": ids["SERDES"] if serde else None}
    steps += _copies(metastore, StorageDescriptor, [sd], sd_values, count, {"LOCATION": locations})
    for model in (StorageDescriptorParam, BucketingColumn, SortColumn):
        steps += _copies(metastore, model, _template(alias, model, "sd", state.sd_id), {"SD_ID": ids["SDS"]}, count)
    steps += _partition_rows(metastore, state, rows, ids)
    return steps


def _partition_rows(
    metastore: Metastore, state: TableState, rows: Sequence[NewPartitionRow], ids: dict[str, NewId]
) -> list[Step]:
    columns = ["PART_ID", "CREATE_TIME", "LAST_ACCESS_TIME", "PART_NAME", "SD_ID", "TBL_ID"]
    extra: list[Any] = []
    if metastore.schema.has(Partition, "write_id"):
        columns.append("WRITE_ID")  # Msck: partition.setWriteId(table.getWriteId())
        extra.append(_table_write_id(metastore, state.table_id))
    partitions = [
        [(ids["PARTITIONS"], i), NOW, 0, row.name, (ids["SDS"], i), state.table_id, *extra]
        for i, row in enumerate(rows)
    ]
    key_values = [[(ids["PARTITIONS"], i), v, k] for i, row in enumerate(rows) for k, v in enumerate(row.values)]
    params = [
        [(ids["PARTITIONS"], i), key, NOW if value is NOW else value]
        for i, row in enumerate(rows)
        for key, value in (("transient_lastDdlTime", NOW), *row.params)
    ]
    vendor = metastore.config.vendor
    return [
        *_inserts(metastore, Partition, columns, partitions, vendor),
        *_inserts(metastore, PartitionKeyValue, ["PART_ID", "PART_KEY_VAL", "INTEGER_IDX"], key_values, vendor),
        *_inserts(metastore, PartitionParam, ["PART_ID", "PARAM_KEY", "PARAM_VALUE"], params, vendor, text=True),
    ]


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


def _copies(
    metastore: Metastore,
    model: type[Model],
    template: list[dict[str, Any]],
    ids: dict[str, NewId | None],
    count: int,
    per_row: dict[str, list[Any]] | None = None,
) -> list[Step]:
    """``template``'s rows once per new owner ``i`` (its id columns ``ids`` + i, ``per_row`` columns their i-th)."""
    if not template:
        return []
    columns = list(template[0])
    per_row = per_row or {}
    values = [
        [(ids[c], i) if c in ids and ids[c] is not None else per_row[c][i] if c in per_row else row[c] for c in columns]
        for i in range(count)
        for row in template
    ]
    return _inserts(metastore, model, columns, values, metastore.config.vendor)


def _inserts(
    metastore: Metastore,
    model: type[Model],
    columns: list[str],
    rows: list[list[Any]],
    vendor: str,
    *,
    text: bool = False,
) -> list[Step]:
    """Multi-row INSERTs of ``rows``: a ``(NewId, offset)`` value is written ``%s + offset``, :data:`NOW` the clock."""
    if not rows:
        return []
    quote = connections[metastore.alias].ops.quote_name
    table = model._meta.db_table
    head = f"INSERT INTO {quote(table)} ({', '.join(quote(c) for c in columns)}) VALUES "
    clock = EPOCH_TEXT[vendor] if text else EPOCH[vendor]
    steps = []
    for chunk in _chunks(rows, len(columns)):
        params: list[Any] = []
        tuples = []
        for row in chunk:
            cells = []
            for value in row:
                if value is NOW:
                    cells.append(clock)
                elif isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], NewId):
                    cells.append(f"%s + {int(value[1])}")
                    params.append(value[0])
                else:
                    cells.append("%s")
                    params.append(value)
            tuples.append(f"({', '.join(cells)})")
        steps.append(
            Step(f"Add {len(chunk)} {table} rows", table, "insert", head + ", ".join(tuples), tuple(params), len(chunk))
        )
    return steps


def _chunks(rows: list[list[Any]], width: int) -> Iterator[list[list[Any]]]:
    size = max(1, min(ROWS_PER_STATEMENT, PARAMS_PER_STATEMENT // max(width, 1)))
    for start in range(0, len(rows), size):
        yield rows[start : start + size]
