"""
The statements of an ANALYZE's swap (``planners/analyze.py``): the statistics parameters of each partition (or the
table) and the column statistics rows, set-based in chunks, with :class:`Measured` placeholders for what the job
computes.

Column statistics rows are written in the schema version's columns (``catalog_admin/models/statistics.py``, from the
official scripts in ../shared/fixtures/hive-schema: ``CAT_NAME`` since 3.0, ``DB_NAME``/``TABLE_NAME``/
``PARTITION_NAME`` until 4.0, ``BIT_VECTOR`` since 3.0, ``ENGINE`` since 4.0), with which fields each type fills as
``StatObjectConverter.convertToMPartitionColumnStatistics`` does (``setLongStats``, ``setDoubleStats``,
``setDecimalStats``, ``setStringStats``, ``setBinaryStats``, ``setBooleanStats``; dates through ``setLongStats`` as
days since the epoch). CS_IDs come from SEQUENCE_TABLE (``MPartitionColumnStatistics`` /
``MTableColumnStatistics``) at execution.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from django.db.models import Model

from catalog_admin.hive.statistics import COLUMN_STATS_ACCURATE, parse_stats_accurate
from catalog_admin.models import PartitionColumnStatistics, PartitionParam, TableColumnStatistics, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.planners.partitions.chunks import CHUNK
from operations.preview import TABLE_UNIT, CopyUnit, Measured, NewId, Step
from operations.specs import AnalyzeTable
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = (
    "BASIC_KEYS",
    "LAST_ANALYZED",
    "NOSCAN_KEYS",
    "RAW_SIZE_FORMATS",
    "STATS_FIELDS",
    "accurate_with_columns",
    "column_stats_steps",
    "params_steps",
    "replaced_rows",
    "stats_kind",
)

BASIC_KEYS = ("numFiles", "totalSize", "numRows", "rawDataSize")
NOSCAN_KEYS = ("numFiles", "totalSize")
RAW_SIZE_FORMATS = ("parquet", "text")  # ParquetHiveSerDe (rows × fields), LazySimpleSerDe (bytes of each row)
LAST_ANALYZED = Measured("", "last_analyzed")
MAX_PARAMS = 20000  # parameters per statement, well under PostgreSQL's and MySQL's 65,535

# What each kind of column fills (the model's field names); every other statistics column is NULL.
STATS_FIELDS = {
    "long": ("long_low_value", "long_high_value", "num_nulls", "num_distincts"),
    "date": ("long_low_value", "long_high_value", "num_nulls", "num_distincts"),
    "double": ("double_low_value", "double_high_value", "num_nulls", "num_distincts"),
    "decimal": ("big_decimal_low_value", "big_decimal_high_value", "num_nulls", "num_distincts"),
    "string": ("avg_col_len", "max_col_len", "num_nulls", "num_distincts"),
    "binary": ("avg_col_len", "max_col_len", "num_nulls"),
    "boolean": ("num_trues", "num_falses", "num_nulls"),
}
_KINDS = {
    "tinyint": "long", "smallint": "long", "int": "long", "integer": "long", "bigint": "long", "float": "double",
    "double": "double", "decimal": "decimal", "date": "date", "string": "string", "varchar": "string",
    "char": "string", "binary": "binary", "boolean": "boolean",
}  # fmt: skip
_VALUE_FIELDS = ("long_low_value", "long_high_value", "double_low_value", "double_high_value",
                 "big_decimal_low_value", "big_decimal_high_value", "num_nulls", "num_distincts", "avg_col_len",
                 "max_col_len", "num_trues", "num_falses")  # fmt: skip


def stats_kind(column_type: str) -> str | None:
    """The statistics kind of a Hive column type (``long``, ``double``, ``decimal``, ``date``, ``string``,
    ``binary``, ``boolean``); None for complex types and timestamps."""
    return _KINDS.get(column_type.split("(")[0].strip().lower())


def accurate_with_columns(current: str | None, columns: Iterable[str]) -> str:
    """``COLUMN_STATS_ACCURATE`` after column statistics of ``columns`` were written: ``StatsSetupConst.
    setColumnStatsState`` adds each column as true to the ones already marked, the basic part kept; Jackson writes
    ``BASIC_STATS`` first and the columns sorted (a TreeMap), without spaces."""
    flags = parse_stats_accurate(current)
    marked = flags.get("COLUMN_STATS")
    merged = {**(marked if isinstance(marked, dict) else {}), **dict.fromkeys(columns, "true")}
    value: dict[str, Any] = {}
    if str(flags.get("BASIC_STATS", "")).lower() == "true":
        value["BASIC_STATS"] = "true"
    value["COLUMN_STATS"] = dict(sorted(merged.items()))
    return json.dumps(value, separators=(",", ":"))


def _basic_accurate(current: str | None) -> str:
    """After COMPUTE STATISTICS: ``BASIC_STATS`` true, the column part kept (``setBasicStatsState``)."""
    flags = parse_stats_accurate(current)
    value: dict[str, Any] = {"BASIC_STATS": "true"}
    if isinstance(flags.get("COLUMN_STATS"), dict) and flags["COLUMN_STATS"]:
        value["COLUMN_STATS"] = flags["COLUMN_STATS"]
    return json.dumps(value, separators=(",", ":"))


# Parameters ----------------------------------------------------------------------------------------------------------


def params_steps(
    sql: MetastoreSql, state: TableState, spec: AnalyzeTable, units: Sequence[CopyUnit], columns: Sequence[str]
) -> list[Step]:
    """The keys the statement writes, deleted and inserted for every unit (a missing key is written too)."""
    model: type[Model] = TableParam if not state.is_partitioned else PartitionParam
    owner = "table" if not state.is_partitioned else "partition"
    current = _current_accurate(sql, model, owner, state, units)
    keys = _written_keys(spec)
    rows_of = {u.key: list(_param_rows(spec, u, current.get(_owner_id(state, u)), columns)) for u in units}
    steps = []
    for start in range(0, len(units), CHUNK):
        chunk = units[start : start + CHUNK]
        ids = tuple(_owner_id(state, u) for u in chunk)
        rows = [(_owner_id(state, u), key, value) for u in chunk for key, value in rows_of[u.key]]
        steps += _delete_insert(sql, model, owner, ids, keys, rows)
    return steps


def _written_keys(spec: AnalyzeTable) -> tuple[str, ...]:
    if spec.columns is not None:
        return (COLUMN_STATS_ACCURATE,)
    return NOSCAN_KEYS if spec.noscan else (*BASIC_KEYS, COLUMN_STATS_ACCURATE)


def _param_rows(
    spec: AnalyzeTable, unit: CopyUnit, accurate: str | None, columns: Sequence[str]
) -> Iterable[tuple[str, Any]]:
    if spec.columns is not None:
        yield COLUMN_STATS_ACCURATE, accurate_with_columns(accurate, columns)
        return
    for key in NOSCAN_KEYS if spec.noscan else BASIC_KEYS:
        if key != "rawDataSize" or unit.source_format in RAW_SIZE_FORMATS:
            yield key, Measured(unit.key, key)
    if not spec.noscan:
        yield COLUMN_STATS_ACCURATE, _basic_accurate(accurate)


def _delete_insert(
    sql: MetastoreSql, model: type[Model], owner: str, ids: tuple, keys: tuple[str, ...], rows: list[tuple]
) -> list[Step]:
    table, owner_id, key, value = sql.table(model), sql.col(model, owner), sql.col(model, "key"), sql.col(
        model, "value")  # fmt: skip
    where = f"{owner_id} IN ({', '.join(['%s'] * len(ids))}) AND {key} IN ({', '.join(['%s'] * len(keys))})"
    steps = [Step(f"Remove the old statistics of {len(ids)} {owner}(s)", model._meta.db_table, "delete",
                  f"DELETE FROM {table} WHERE {where}", (*ids, *keys), -1)]  # fmt: skip
    if rows:
        values = ", ".join(["(%s, %s, %s)"] * len(rows))
        steps.append(Step(f"Write the statistics computed for {len(ids)} {owner}(s)", model._meta.db_table, "insert",
                          f"INSERT INTO {table} ({owner_id}, {key}, {value}) VALUES {values}",
                          tuple(v for row in rows for v in row), len(rows)))  # fmt: skip
    return steps


def _owner_id(state: TableState, unit: CopyUnit) -> int:
    return state.table_id if unit.partition_id is None else unit.partition_id


def _current_accurate(
    sql: MetastoreSql, model: type[Model], owner: str, state: TableState, units: Sequence[CopyUnit]
) -> dict[int, str | None]:
    if not state.is_partitioned:
        return {state.table_id: state.params.get(COLUMN_STATS_ACCURATE)}
    ids = [u.partition_id for u in units]
    rows = model._default_manager.using(sql.connection.alias).filter(
        **{f"{owner}_id__in": ids}, key=COLUMN_STATS_ACCURATE
    )
    return {getattr(row, f"{owner}_id"): getattr(row, "value") for row in rows}  # noqa: B009 - any *_PARAMS model


# Column statistics ---------------------------------------------------------------------------------------------------


def column_stats_steps(
    metastore: Metastore, sql: MetastoreSql, state: TableState, units: Sequence[CopyUnit],
    columns: Sequence[tuple[str, str]],
) -> list[Step]:  # fmt: skip
    """The old rows of the analyzed columns deleted, one new row per unit and column inserted."""
    if not units or not columns:
        return []
    model: type[Model] = TableColumnStatistics if not state.is_partitioned else PartitionColumnStatistics
    owner = "table" if model is TableColumnStatistics else "partition"
    fields = _insert_fields(metastore, model)
    per_statement = max(1, MAX_PARAMS // (len(fields) * len(columns)))
    steps = []
    for start in range(0, len(units), min(per_statement, 5000)):
        chunk = units[start : start + per_statement]
        ids = tuple(_owner_id(state, u) for u in chunk)
        names = tuple(name for name, _type in columns)
        table, owner_col, name_col = sql.table(model), sql.col(model, owner), sql.col(model, "column_name")
        where = f"{owner_col} IN ({', '.join(['%s'] * len(ids))}) AND {name_col} IN ({', '.join(['%s'] * len(names))})"
        steps.append(Step(f"Remove the old column statistics of {len(ids)} {owner}(s)", model._meta.db_table,
                          "delete", f"DELETE FROM {table} WHERE {where}", (*ids, *names), -1))  # fmt: skip
        rows = [_stats_row(state, u, name, column_type, fields) for u in chunk for name, column_type in columns]
        placeholders = ", ".join(["(" + ", ".join(["%s"] * len(fields)) + ")"] * len(rows))
        quoted = ", ".join(sql.col(model, f) for f in fields)
        steps.append(Step(f"Write the column statistics of {len(names)} column(s) for {len(ids)} {owner}(s)",
                          model._meta.db_table, "insert", f"INSERT INTO {table} ({quoted}) VALUES {placeholders}",
                          tuple(v for row in rows for v in row), len(rows)))  # fmt: skip
    return steps


def _insert_fields(metastore: Metastore, model: type[Model]) -> list[str]:
    """The model's fields the metastore's schema version has, HISTOGRAM aside (NULL by default)."""
    owner = "table" if model is TableColumnStatistics else "partition"
    names = [f.name for f in model._meta.concrete_fields if f.name not in ("histogram",)]
    names = [n if n != owner else owner for n in names]
    return [n for n in names if metastore.schema.has(model, n)]


def _stats_row(state: TableState, unit: CopyUnit, name: str, column_type: str, fields: list[str]) -> tuple:
    kind = stats_kind(column_type)
    assert kind is not None, "only columns of a statistics kind are analyzed"
    filled = set(STATS_FIELDS[kind])
    known: dict[str, Any] = {
        "id": NewId(_sequence(state), f"{unit.key}/{name}"),
        "catalog_name": state.catalog or "hive",
        "db_name": state.ref.database,
        "table_name": state.ref.table,
        "partition_name": unit.key if unit.key != TABLE_UNIT else None,
        "column_name": name,
        "column_type": column_type,
        "partition": unit.partition_id,
        "table": state.table_id,
        "bit_vector": None,
        "last_analyzed": LAST_ANALYZED,
        "engine": "hive",
    }
    for field in _VALUE_FIELDS:
        known[field] = Measured(unit.key, f"{name}|{field}") if field in filled else None
    return tuple(known[f] for f in fields)


def _sequence(state: TableState) -> str:
    return "PART_COL_STATS" if state.is_partitioned else "TAB_COL_STATS"


# Revert --------------------------------------------------------------------------------------------------------------


def replaced_rows(
    state: TableState, spec: AnalyzeTable, units: Sequence[CopyUnit], columns: Sequence[str] = ()
) -> dict[str, dict[str, list]]:
    """What the swap's INSERTs write, by owner and key (or column), for the revert to delete first."""
    owners = sorted(_owner_id(state, u) for u in units)
    params = "PARTITION_PARAMS" if state.is_partitioned else "TABLE_PARAMS"
    replaced: dict[str, dict[str, list]] = {params: {"owners": owners, "keys": list(_written_keys(spec))}}
    if spec.columns is not None and columns:
        stats = "PART_COL_STATS" if state.is_partitioned else "TAB_COL_STATS"
        replaced[stats] = {"owners": owners, "keys": list(columns)}
    return replaced
