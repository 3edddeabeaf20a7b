"""
A rewrite's basic statistics, as Hive leaves them after an ``INSERT OVERWRITE`` with ``hive.stats.autogather``: every
rewritten partition's (or an unpartitioned table's) ``numFiles``, ``totalSize`` and ``numRows`` are the new files'
(``Measured`` placeholders the swap fills from the listing of the new directories and the program's verified row
counts), ``rawDataSize`` where Hive's SerDe reports one the console can reproduce (``ParquetHiveSerDe.serialize``
counts each row's fields: rows × columns; the others' are measures of Hive's own writers, so a stale value is
removed), and ``COLUMN_STATS_ACCURATE`` with ``BASIC_STATS`` true (the rows are counted exactly) and its column part
kept (the values are the same).

Set-based, in chunks: one DELETE of those keys (its rows are the before-image a revert puts back) and one INSERT of
the new values, so a key that was missing is written too. The revert first deletes what the INSERT wrote (the
preview's ``inverse["replaced_params"]``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from catalog_admin.models import PartitionParam, TableParam
from operations.preview import Measured, Step
from operations.sql import MetastoreSql

__all__ = ("ACCURATE", "STATS_KEYS", "accurate_after", "replaced_params", "stats_steps")

ACCURATE = "COLUMN_STATS_ACCURATE"
STATS_KEYS = ("numFiles", "totalSize", "numRows", "rawDataSize", ACCURATE)
MEASURED = ("numFiles", "totalSize", "numRows")
RAW_SIZE_FORMATS = ("parquet",)  # ParquetHiveSerDe: rawDataSize = rows × fields


def accurate_after(current: str | None) -> str:
    """``COLUMN_STATS_ACCURATE`` after the rewrite: ``BASIC_STATS`` true, the column part (``COLUMN_STATS``) kept,
    serialized as Hive's Jackson writes it (no spaces)."""
    try:
        parsed = json.loads(current) if current else {}
    except ValueError:
        parsed = {}
    kept = {k: v for k, v in parsed.items() if k != "BASIC_STATS"} if isinstance(parsed, dict) else {}
    return json.dumps({"BASIC_STATS": "true", **kept}, separators=(",", ":"))


def stats_steps(
    sql: MetastoreSql, model: type, owner: str, owners: Sequence[tuple[int, str, str]], current: dict[int, str | None]
) -> list[Step]:
    """``owners``: (owner id, unit key, target format); ``current``: each owner's ``COLUMN_STATS_ACCURATE`` now."""
    table, owner_id, key, value = sql.table(model), sql.col(model, owner), sql.col(model, "key"), sql.col(
        model, "value")  # fmt: skip
    ids = tuple(oid for oid, _unit, _format in owners)
    where = f"{owner_id} IN ({', '.join(['%s'] * len(ids))}) AND {key} IN ({', '.join(['%s'] * len(STATS_KEYS))})"
    rows = [row for oid, unit, fmt in owners for row in _new_rows(oid, unit, fmt, current.get(oid))]
    values = ", ".join(["(%s, %s, %s)"] * len(rows))
    return [
        Step(f"Remove the old statistics of {len(ids)} {owner}(s)", model._meta.db_table, "delete",
             f"DELETE FROM {table} WHERE {where}", (*ids, *STATS_KEYS), -1),
        Step(f"Write the statistics of what was written for {len(ids)} {owner}(s)", model._meta.db_table, "insert",
             f"INSERT INTO {table} ({owner_id}, {key}, {value}) VALUES {values}",
             tuple(v for row in rows for v in row), len(rows)),
    ]  # fmt: skip


def _new_rows(owner_id: int, unit: str, file_format: str, accurate: str | None) -> Iterable[tuple[object, ...]]:
    for stat in MEASURED:
        yield owner_id, stat, Measured(unit, stat)
    if file_format in RAW_SIZE_FORMATS:
        yield owner_id, "rawDataSize", Measured(unit, "rawDataSize")
    yield owner_id, ACCURATE, accurate_after(accurate)


def current_accurate(alias: str, model: type, owner: str, ids: Sequence[int]) -> dict[int, str | None]:
    """Each owner's ``COLUMN_STATS_ACCURATE`` now (one query)."""
    rows = model.objects.using(alias).filter(**{f"{owner}_id__in": list(ids)}, key=ACCURATE)
    return {getattr(row, f"{owner}_id"): row.value for row in rows}


def replaced_params(partition_ids: Sequence[int], table_id: int | None) -> dict[str, dict[str, list]]:
    """What the swap's INSERT writes, for the revert to delete before it puts the old rows back."""
    replaced: dict[str, dict[str, list]] = {}
    if partition_ids:
        replaced[PartitionParam._meta.db_table] = {"owners": sorted(partition_ids), "keys": list(STATS_KEYS)}
    if table_id is not None:
        replaced[TableParam._meta.db_table] = {"owners": [table_id], "keys": list(STATS_KEYS)}
    return replaced
