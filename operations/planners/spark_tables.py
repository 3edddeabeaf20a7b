"""
Spark's data-source tables (``CREATE TABLE … USING parquet|orc|csv|json|…``) as the metastore keeps them, and what a
plan must carry or refuse on them.

Spark's ``HiveExternalCatalog`` (sql/hive/.../HiveExternalCatalog.scala, ``createDataSourceTable``) stores such a
table with the TABLE_PARAMS ``spark.sql.sources.provider`` (its format), ``spark.sql.sources.schema`` (or
``….schema.numParts`` and ``….schema.part.N``: Spark's own schema, which Spark reads instead of the metastore's
columns) and, for a bucketed table, ``spark.sql.sources.schema.numBuckets``/``numBucketCols``/``bucketCol.N``; the
directory Spark reads is the SerDe parameter ``path`` (``storage.properties``), not SDS.LOCATION. A provider Hive has
a SerDe for (``HiveSerDe.sourceToSerDe``: parquet, orc) is stored Hive-compatibly, with its real formats and columns;
any other (csv, json, text, avro, …) gets placeholder storage: SequenceFile formats and the one column
``col array<string>``, which no Hive reader can use. Spark reads parquet, orc, avro and json files by column name.
"""

from __future__ import annotations

from catalog_admin.models import SerDeParam
from operations.containment import canonical
from operations.preview import Step
from operations.rules import Finding
from operations.specs import AddColumns, ChangeColumn, ReplaceColumns
from operations.sql import MetastoreSql
from operations.table_state import ColumnInfo, TableState

__all__ = (
    "BY_NAME_PROVIDERS",
    "BY_NAME_SERDES",
    "PATH_KEY",
    "datasource_column_blockers",
    "datasource_move_blockers",
    "datasource_rewrite_blockers",
    "path_steps",
    "provider",
    "renamed_by_name_warnings",
    "serde_params_after",
    "spark_bucketing_blockers",
    "spark_path",
)

PROVIDER_KEY = "spark.sql.sources.provider"
PATH_KEY = "path"
HIVE_COMPATIBLE = ("parquet", "orc")  # HiveSerDe.sourceToSerDe: stored with Hive's own formats and columns
BY_NAME_PROVIDERS = ("parquet", "orc", "avro", "json")  # files whose columns Spark matches by name
KNOWN_PROVIDERS = ("parquet", "orc", "avro", "json", "csv", "text")
BUCKET_KEYS = ("spark.sql.sources.schema.numBuckets", "spark.sql.sources.numBuckets")
PLACEHOLDER = (("col", "array<string>"),)
# Hive SerDes whose files Hive's readers (and Spark's, converting a Hive Parquet table to its own reader) match to the
# table's columns by name: ParquetHiveSerDe (``parquet.column.index.access`` false by default), AvroSerDe (the
# columns make the reader schema, resolved against each file's writer schema by field name).
BY_NAME_SERDES = {
    "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe": "Parquet",
    "org.apache.hadoop.hive.serde2.avro.AvroSerDe": "Avro",
}


def provider(state: TableState) -> str:
    """The data-source format of a Spark data-source table (``parquet``, ``csv``, …, or the provider as written when
    it is none of those); ``""`` for a Hive table (no provider, or Spark's ``hive``)."""
    written = (state.params.get(PROVIDER_KEY) or "").strip().lower()
    if written in ("", "hive"):
        return ""
    # parquet, org.apache.spark.sql.parquet, org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat, …
    short = written.rsplit(".", 1)[-1].removesuffix("fileformat")
    return short if short in KNOWN_PROVIDERS else written


def _has_placeholder_storage(state: TableState) -> bool:
    """Spark's placeholder for a provider Hive cannot read: the metastore's columns say nothing of the data."""
    placeholder = tuple((c.name.lower(), c.type.replace(" ", "").lower()) for c in state.columns) == PLACEHOLDER
    return bool(provider(state)) and (placeholder or provider(state) not in HIVE_COMPATIBLE)


def spark_path(state: TableState) -> str | None:
    """The directory Spark reads a data-source table from (its SerDe's ``path``), or None."""
    return state.serde_params.get(PATH_KEY) if provider(state) else None


def path_steps(sql: MetastoreSql, state: TableState, location: str) -> list[Step]:
    """Spark's ``path`` moved with the table's location (as Spark's own ``ALTER TABLE … SET LOCATION`` moves it), its
    old value captured first: a revert writes it back."""
    if spark_path(state) in (None, location) or state.serde_id is None:
        return []
    table, serde, key, value = (sql.table(SerDeParam), sql.col(SerDeParam, "serde"), sql.col(SerDeParam, "key"),
                                sql.col(SerDeParam, "value"))  # fmt: skip
    where, params = f"{serde} = %s AND {key} = %s", (state.serde_id, PATH_KEY)
    return [
        Step(
            f"Point Spark's path (SerDe parameter) at {location}", "SERDE_PARAMS", "update",
            f"UPDATE {table} SET {value} = %s WHERE {where}", (location, *params), 1,
            f"SELECT {serde}, {key}, {value} FROM {table} WHERE {where}", params,
        )
    ]  # fmt: skip


def serde_params_after(state: TableState, location: str) -> tuple[tuple[str, str | None], ...]:
    """The table's SerDe parameters once :func:`path_steps` ran."""
    moved = {PATH_KEY: location} if spark_path(state) is not None else {}
    return tuple(sorted((state.serde_params | moved).items()))


def _name(state: TableState) -> str:
    return f"{state.ref.database}.{state.ref.table}"


def spark_bucketing_blockers(state: TableState, operation: str) -> list[Finding]:
    """A table Spark bucketed (its bucketing is in TABLE_PARAMS, not BUCKETING_COLS): Spark's bucketed scans expect
    one file per bucket, named by bucket id (``INVALID_BUCKET_FILE`` otherwise), which a rewrite does not keep."""
    key = next((k for k in BUCKET_KEYS if state.params.get(k)), None)
    if key is None:
        return []
    return [
        Finding(
            "spark_bucketed_rewrite",
            operation,
            f"{_name(state)} is bucketed by Spark ({key}={state.params[key]}): Spark's bucketed reads expect one "
            "file per bucket named by its bucket id, which rewriting the files would break (Spark then fails with "
            "INVALID_BUCKET_FILE). Rewrite it with Spark (INSERT OVERWRITE) instead.",
        )
    ]


def datasource_rewrite_blockers(state: TableState, *, convert: bool, operation: str) -> list[Finding]:
    """A convert of a data-source table (Spark keeps reading its provider's format: the converted files would be
    unreadable to it), and any rewrite of one whose metastore storage is Spark's placeholder (the formats there are not
    the files')."""
    found = provider(state)
    if not found:
        return []
    if convert:
        return [
            Finding(
                "spark_datasource_convert",
                operation,
                f"{_name(state)} is a Spark data-source table (spark.sql.sources.provider={found}): Spark reads its "
                f"files as {found} whatever the metastore's formats say, so converted files would be unreadable to "
                "Spark. Convert it with Spark (CREATE TABLE … USING <format> AS SELECT) instead.",
            )
        ]
    if _has_placeholder_storage(state):
        return [
            Finding(
                "spark_placeholder_storage",
                operation,
                f"{_name(state)} is a Spark {found} data-source table: its metastore formats and columns are Spark's "
                "placeholder (SequenceFile, col array<string>), not its files', so the console cannot rewrite them.",
            )
        ]
    return []


def datasource_move_blockers(state: TableState, operation: str) -> list[Finding]:
    """Data moved from a data-source table's location must be where Spark reads it: a ``path`` elsewhere would leave
    Spark reading (and later losing) other files."""
    path = spark_path(state)
    if path is None or not state.location or canonical(path) == canonical(state.location):
        return []
    return [
        Finding(
            "spark_path_elsewhere",
            operation,
            f"Spark reads {_name(state)} from its SerDe parameter path={path}, not from its location "
            f"{state.location}: moving or rewriting the data at the location would not be what Spark reads. Point "
            "both at one directory first (ALTER TABLE … SET LOCATION).",
        )
    ]


def datasource_column_blockers(
    state: TableState, spec: AddColumns | ReplaceColumns | ChangeColumn, rule: str
) -> list[Finding]:
    """Column changes Spark refuses on its data-source tables because its readers would lose data: any change where
    the metastore's columns are Spark's placeholder (Spark's schema copy would be rebuilt from the placeholder), and
    on a by-name format (parquet, orc, avro, json) REPLACE COLUMNS or a CHANGE that renames or retypes a column (the
    existing files keep the old name and type, so Spark and Hive would read NULL)."""
    found = provider(state)
    if not found:
        return []
    if _has_placeholder_storage(state):
        return [
            Finding(
                "spark_placeholder_columns",
                rule,
                f"{_name(state)} is a Spark {found} data-source table: its metastore columns are Spark's placeholder "
                "(col array<string>) and its real schema is Spark's copy in spark.sql.sources.schema, which this "
                "change would rebuild from the placeholder and make the table unreadable. Change its columns with "
                "Spark SQL (ALTER TABLE … ADD COLUMNS).",
            )
        ]
    if found not in BY_NAME_PROVIDERS:
        return []
    if isinstance(spec, ReplaceColumns):
        return [
            Finding(
                "spark_by_name_columns",
                rule,
                f"{_name(state)} is a Spark {found} data-source table: Spark and Hive read its files by column name, "
                "so REPLACE COLUMNS would make every renamed or retyped column read NULL (Spark itself refuses REPLACE "
                "COLUMNS on data-source tables). Add columns instead, or rewrite the table with Spark.",
            )
        ]
    if isinstance(spec, ChangeColumn):
        old = next((c for c in state.columns if c.name.lower() == spec.old_name.lower()), None)
        if old is not None and _renamed_or_retyped(old, spec):
            return [
                Finding(
                    "spark_by_name_columns",
                    rule,
                    f"{_name(state)} is a Spark {found} data-source table: Spark and Hive read its files by column "
                    f"name and type, so changing {old.name} {old.type} to {spec.column.name} {spec.column.type} would "
                    "make it read NULL in every row (Spark itself refuses it). Only its comment or position can "
                    "change; rewrite the table with Spark for the rest.",
                )
            ]
    return []


def _renamed_or_retyped(old: ColumnInfo, spec: ChangeColumn) -> bool:
    same_type = old.type.replace(" ", "").lower() == spec.column.type.replace(" ", "").lower()
    return old.name.lower() != spec.column.name.lower() or not same_type


def renamed_by_name_warnings(state: TableState, renamed: list[tuple[str, str]], rule: str) -> list[Finding]:
    """A Hive table of a by-name format whose columns are renamed: the existing files keep the old names, so their
    values read as NULL under the new ones (Hive allows it; a data-source table is blocked above)."""
    file_format = BY_NAME_SERDES.get(state.serde_lib or "")
    if not renamed or file_format is None or provider(state):
        return []
    names = ", ".join(f"{old} to {new}" for old, new in renamed)
    return [
        Finding(
            "renamed_by_name",
            rule,
            f"{_name(state)} is stored as {file_format}, whose files Hive and Spark read by column name: after "
            f"renaming {names} the existing files' values of those columns read as NULL. Rename back to read them, or "
            "rewrite the data under the new names.",
            "warning",
        )
    ]
