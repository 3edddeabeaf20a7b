"""
What the differential tests compare: a table's metastore rows and its directories, normalized so that two copies of
one table in two databases compare equal, and the differences between two such images.

The metastore image is read with plain SQL from the Hive 2.3 schema (not through the console's models, which are
under test). It leaves out ids, the database name and each copy's own location prefixes (its database folder, its
outside and elsewhere folders become ``<db>``, ``<outside>``, ``<elsewhere>``), creation times and the
``transient_lastDdlTime`` parameter (both are the clock); everything else is kept: TBLS, SDS, CDS/COLUMNS_V2, SERDES,
SERDE_PARAMS, SD_PARAMS, bucketing and sort columns, PARTITION_KEYS, PARTITIONS, PARTITION_KEY_VALS, TABLE_PARAMS,
PARTITION_PARAMS, TAB_COL_STATS and PART_COL_STATS. The tree image lists the files and folders under the table's
folder, its outside and elsewhere folders and its console trash, relative to each, with the random part of Spark's
file names (a UUID) masked.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from django.db import connections

from tests.fixtures.spark import TableCopy

__all__ = ("ABSENT", "IGNORED_PARAMS", "differences", "metastore_image", "orphans", "read_rows", "tree_image")

ABSENT = "<absent>"
IGNORED_PARAMS = frozenset({"transient_lastDdlTime"})
TRASH_DIR = ".catalog-admin-trash"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_STATS_FIELDS = (
    "COLUMN_TYPE",
    "DB_NAME",
    "TABLE_NAME",
    "LONG_LOW_VALUE",
    "LONG_HIGH_VALUE",
    "DOUBLE_LOW_VALUE",
    "DOUBLE_HIGH_VALUE",
    "BIG_DECIMAL_LOW_VALUE",
    "BIG_DECIMAL_HIGH_VALUE",
    "NUM_NULLS",
    "NUM_DISTINCTS",
    "AVG_COL_LEN",
    "MAX_COL_LEN",
    "NUM_TRUES",
    "NUM_FALSES",
    "LAST_ANALYZED",
)


# Metastore ------------------------------------------------------------------------------------------------------


def metastore_image(copy: TableCopy, alias: str = "spark_pg") -> dict[str, Any]:
    """The table's rows, normalized (see the module docstring); ``{}`` when the table does not exist."""
    with connections[alias].cursor() as cursor:
        table = _one(
            cursor,
            'SELECT t."TBL_ID", t."TBL_NAME", t."TBL_TYPE", t."OWNER", t."RETENTION", t."LAST_ACCESS_TIME",'
            ' t."SD_ID", t."VIEW_ORIGINAL_TEXT", t."VIEW_EXPANDED_TEXT", d."DB_LOCATION_URI"'
            ' FROM "TBLS" t JOIN "DBS" d ON d."DB_ID" = t."DB_ID" WHERE d."NAME" = %s AND t."TBL_NAME" = %s',
            [copy.database, copy.name],
        )
        if table is None:
            return {}
        reader = _Reader(cursor, copy, table["DB_LOCATION_URI"])
        table_id = table["TBL_ID"]
        return {
            "table": {
                key.lower(): table[key]
                for key in ("TBL_NAME", "TBL_TYPE", "OWNER", "RETENTION", "LAST_ACCESS_TIME")
                + ("VIEW_ORIGINAL_TEXT", "VIEW_EXPANDED_TEXT")
            },
            "storage": reader.storage(table["SD_ID"]),
            "partition_keys": reader.rows(
                'SELECT "PKEY_NAME", "PKEY_TYPE", "PKEY_COMMENT" FROM "PARTITION_KEYS" WHERE "TBL_ID" = %s'
                ' ORDER BY "INTEGER_IDX"',
                table_id,
            ),
            "params": reader.params(
                'SELECT "PARAM_KEY", "PARAM_VALUE" FROM "TABLE_PARAMS" WHERE "TBL_ID" = %s', table_id
            ),
            "column_statistics": reader.statistics('"TAB_COL_STATS" WHERE "TBL_ID" = %s', table_id),
            "partitions": reader.partitions(table_id),
        }


class _Reader:
    def __init__(self, cursor: Any, copy: TableCopy, database_location: str) -> None:
        self.cursor = cursor
        self.copy = copy
        self.prefixes = [
            (database_location, "<db>"),
            (f"file:{copy.outside}", "<outside>"),
            (f"file:{copy.elsewhere}", "<elsewhere>"),
        ]

    def partitions(self, table_id: int) -> dict[str, Any]:
        partitions = {}
        for row in _all(
            self.cursor,
            'SELECT "PART_ID", "PART_NAME", "SD_ID", "LAST_ACCESS_TIME" FROM "PARTITIONS" WHERE "TBL_ID" = %s',
            [table_id],
        ):
            part_id = row["PART_ID"]
            partitions[row["PART_NAME"]] = {
                "values": [
                    value
                    for (value,) in self.rows(
                        'SELECT "PART_KEY_VAL" FROM "PARTITION_KEY_VALS" WHERE "PART_ID" = %s ORDER BY "INTEGER_IDX"',
                        part_id,
                    )
                ],
                "last_access_time": row["LAST_ACCESS_TIME"],
                "storage": self.storage(row["SD_ID"]),
                "params": self.params(
                    'SELECT "PARAM_KEY", "PARAM_VALUE" FROM "PARTITION_PARAMS" WHERE "PART_ID" = %s', part_id
                ),
                "column_statistics": self.statistics('"PART_COL_STATS" WHERE "PART_ID" = %s', part_id),
            }
        return partitions

    def storage(self, sd_id: int | None) -> dict[str, Any] | None:
        sd = _one(self.cursor, 'SELECT * FROM "SDS" WHERE "SD_ID" = %s', [sd_id]) if sd_id else None
        if sd is None:
            return None
        serde = _one(self.cursor, 'SELECT "NAME", "SLIB" FROM "SERDES" WHERE "SERDE_ID" = %s', [sd["SERDE_ID"]])
        serde_params = self.params(
            'SELECT "PARAM_KEY", "PARAM_VALUE" FROM "SERDE_PARAMS" WHERE "SERDE_ID" = %s', sd["SERDE_ID"]
        )
        if serde_params.get("path"):
            serde_params["path"] = self.location(serde_params["path"])  # Spark's copy of a data-source location
        return {
            "location": self.location(sd["LOCATION"]),
            "input_format": sd["INPUT_FORMAT"],
            "output_format": sd["OUTPUT_FORMAT"],
            "compressed": sd["IS_COMPRESSED"],
            "num_buckets": sd["NUM_BUCKETS"],
            "stored_as_subdirectories": sd["IS_STOREDASSUBDIRECTORIES"],
            "columns": self.rows(
                'SELECT "COLUMN_NAME", "TYPE_NAME", "COMMENT" FROM "COLUMNS_V2" WHERE "CD_ID" = %s'
                ' ORDER BY "INTEGER_IDX"',
                sd["CD_ID"],
            ),
            "serde": {"name": serde["NAME"], "lib": serde["SLIB"], "params": serde_params} if serde else None,
            "params": self.params('SELECT "PARAM_KEY", "PARAM_VALUE" FROM "SD_PARAMS" WHERE "SD_ID" = %s', sd_id),
            "bucket_columns": self.rows(
                'SELECT "BUCKET_COL_NAME" FROM "BUCKETING_COLS" WHERE "SD_ID" = %s ORDER BY "INTEGER_IDX"', sd_id
            ),
            "sort_columns": self.rows(
                'SELECT "COLUMN_NAME", "ORDER" FROM "SORT_COLS" WHERE "SD_ID" = %s ORDER BY "INTEGER_IDX"', sd_id
            ),
        }

    def statistics(self, source: str, owner_id: int) -> dict[str, dict[str, Any]]:
        """Column name -> its statistics row (the database name shown as ``<database>`` when it is the copy's)."""
        names = (*_STATS_FIELDS, "PARTITION_NAME") if source.startswith('"PART_COL_STATS"') else _STATS_FIELDS
        fields = ", ".join(f'"{name}"' for name in names)
        stats = {}
        for row in _all(self.cursor, f'SELECT "COLUMN_NAME", {fields} FROM {source}', [owner_id]):
            values = {key.lower(): value for key, value in row.items() if key != "COLUMN_NAME"}
            if values["db_name"] == self.copy.database:
                values["db_name"] = "<database>"
            stats[row["COLUMN_NAME"]] = values
        return stats

    def params(self, sql: str, owner_id: int | None) -> dict[str, str | None]:
        return {key: value for key, value in self.rows(sql, owner_id) if key not in IGNORED_PARAMS}

    def rows(self, sql: str, owner_id: int | None) -> list[tuple[Any, ...]]:
        self.cursor.execute(sql, [owner_id])
        return [tuple(row) for row in self.cursor.fetchall()]

    def location(self, location: str | None) -> str | None:
        for prefix, token in self.prefixes:
            if location == prefix or (location or "").startswith(f"{prefix}/"):
                return token + location[len(prefix) :]
        return location


def _one(cursor: Any, sql: str, params: list[Any]) -> dict[str, Any] | None:
    rows = _all(cursor, sql, params)
    return rows[0] if rows else None


def _all(cursor: Any, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    cursor.execute(sql, params)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


# Table -> (its key, the tables whose same-named column must hold that key): unreferenced or dangling rows.
_ORPHANS = {
    "SDS": ("SD_ID", ("TBLS", "PARTITIONS")),
    "CDS": ("CD_ID", ("SDS",)),
    "SERDES": ("SERDE_ID", ("SDS",)),
    "COLUMNS_V2": ("CD_ID", ("CDS",)),
    "SERDE_PARAMS": ("SERDE_ID", ("SERDES",)),
    "SD_PARAMS": ("SD_ID", ("SDS",)),
    "TABLE_PARAMS": ("TBL_ID", ("TBLS",)),
    "PARTITION_KEYS": ("TBL_ID", ("TBLS",)),
    "PARTITION_PARAMS": ("PART_ID", ("PARTITIONS",)),
    "PARTITION_KEY_VALS": ("PART_ID", ("PARTITIONS",)),
    "PART_COL_STATS": ("PART_ID", ("PARTITIONS",)),
    "TAB_COL_STATS": ("TBL_ID", ("TBLS",)),
}


def orphans(alias: str = "spark_pg") -> dict[str, int]:
    """Rows of the whole metastore that nothing refers to any more (an unused descriptor, a dropped partition's …)."""
    with connections[alias].cursor() as cursor:
        counts = {}
        for table, (key, referrers) in _ORPHANS.items():
            unreferenced = " AND ".join(
                f'NOT EXISTS (SELECT 1 FROM "{other}" o WHERE o."{key}" = x."{key}")' for other in referrers
            )
            cursor.execute(f'SELECT COUNT(*) FROM "{table}" x WHERE {unreferenced}')
            counts[table] = cursor.fetchone()[0]
        return counts


# Directories ----------------------------------------------------------------------------------------------------


def tree_image(copy: TableCopy) -> dict[str, list[str] | None]:
    """
    The copy's folders (None where one does not exist): its table folders (those named after the twins, so a renamed
    table's too), its outside and elsewhere folders and its console trash.
    """
    return {
        "tables": [
            entry
            for folder in sorted(copy.database_dir.glob(f"{copy.twin}*"))
            for entry in [f"{folder.name}/", *(f"{folder.name}/{e}" for e in _tree(folder) or ())]
        ],
        "outside": _tree(copy.outside),
        "elsewhere": _tree(copy.elsewhere),
        "trash": _tree(copy.database_dir / TRASH_DIR / copy.twin),
    }


def _tree(root: Path) -> list[str] | None:
    if not root.exists():
        return None
    entries = []
    for path in sorted(root.rglob("*")):
        relative = _UUID.sub("<uuid>", path.relative_to(root).as_posix())
        entries.append(f"{relative}/" if path.is_dir() else relative)
    return sorted(entries)


# Comparing ------------------------------------------------------------------------------------------------------


def differences(hive: Any, console: Any, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], tuple[Any, Any]]:
    """``path -> (hive, console)`` for every leaf that differs; a key only one side has is one leaf (``ABSENT``)."""
    if isinstance(hive, dict) and isinstance(console, dict):
        found: dict[tuple[str, ...], tuple[Any, Any]] = {}
        for key in sorted(hive.keys() | console.keys(), key=str):
            if key not in hive or key not in console:
                found[(*path, key)] = (hive.get(key, ABSENT), console.get(key, ABSENT))
            else:
                found.update(differences(hive[key], console[key], (*path, key)))
        return found
    return {} if hive == console else {path: (hive, console)}


# Reading back through Spark -------------------------------------------------------------------------------------


def read_rows(spark: Any, copy: TableCopy) -> list[tuple[Any, ...]]:
    """Every row Spark reads from the table after ``REFRESH TABLE``, ordered by id."""
    spark.sql(f"REFRESH TABLE {copy.qualified}")
    return sorted(tuple(row) for row in spark.sql(f"SELECT * FROM {copy.qualified}").collect())
