"""
``SHOW CREATE TABLE`` as Hive prints it, from a table's metastore rows (model-free: the selector fills
:class:`CreateTableSource`).

Two printers, chosen by ``Capabilities.show_create_table_operation``:

* Hive 2.3 and 3.1: ``ql/.../exec/DDLTask.java``, ``DDLTask.showCreateTable`` (with ``appendSerdeParams``):
  ``ROW FORMAT DELIMITED`` with the SerDe's delimiters when it has any (``serialization.format`` dropped), else
  ``ROW FORMAT SERDE``; every table parameter but the duplicated ones (EXTERNAL, comment, …) in TBLPROPERTIES.
* Hive 4.0: ``ql/.../ddl/table/create/show/ShowCreateTableOperation.java`` (``getCreateTableCommand``,
  ``getRowFormat``, ``getProperties``): always ``ROW FORMAT SERDE``, ``serialization.format`` dropped only when it is
  the default ``1``, the statistics keys (``StatsSetupConst.TABLE_PARAMS_STATS_KEYS``) left out of TBLPROPERTIES,
  and ``SKEWED BY`` printed.

Both name the table as it was asked for; the console always asks for ``db.table``. Views print
``CREATE VIEW `db.view` AS <expanded text>``. As the result reaches a client (Beeline, Hive's ``Driver.getResults``),
the template's empty lines (no comment, no buckets …) are gone, and property values keep their double quotes: Hive
2.3's own Driver, run in the Spark witness (``tests/witness/test_spark_data.py``), prints exactly this.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ("CreateTableSource", "escape_hive_command", "escape_java", "show_create_table")

# serdeConstants: FIELD_DELIM, COLLECTION_DELIM (sic: "colelction"), MAPKEY_DELIM, LINE_DELIM,
# SERIALIZATION_NULL_FORMAT, and DDLTask.DELIMITER_PREFIXES in the same order.
_DELIMITERS = (
    ("field.delim", "FIELDS TERMINATED BY"),
    ("colelction.delim", "COLLECTION ITEMS TERMINATED BY"),
    ("mapkey.delim", "MAP KEYS TERMINATED BY"),
    ("line.delim", "LINES TERMINATED BY"),
    ("serialization.null.format", "NULL DEFINED AS"),
)
SERIALIZATION_FORMAT = "serialization.format"
META_TABLE_STORAGE = "storage_handler"
HBASE_STORAGE_HANDLER = "org.apache.hadoop.hive.hbase.HBaseStorageHandler"
# Parameters printed elsewhere in the statement (DDLTask's duplicateProps; ShowCreateTableOperation's
# PROPERTIES_TO_IGNORE_AT_TBLPROPERTIES), and the statistics keys 4.x leaves out.
_PRINTED_ELSEWHERE = frozenset({"TEMPORARY", "EXTERNAL", "comment", "SORTBUCKETCOLSPREFIX", META_TABLE_STORAGE})
_STATS_KEYS = frozenset(
    {
        "COLUMN_STATS_ACCURATE",
        "numFiles",
        "totalSize",
        "numRows",
        "rawDataSize",
        "numPartitions",
        "numFilesErasureCoded",
    }
)


@dataclass(frozen=True)
class CreateTableSource:
    """The metastore rows SHOW CREATE TABLE reads: names, columns ``(name, type, comment)``, storage, parameters."""

    database: str
    name: str
    table_type: str
    columns: tuple[tuple[str, str, str | None], ...] = ()
    partition_keys: tuple[tuple[str, str, str | None], ...] = ()
    params: dict[str, str | None] = field(default_factory=dict)
    serde_lib: str | None = None
    serde_params: dict[str, str | None] = field(default_factory=dict)
    input_format: str | None = None
    output_format: str | None = None
    location: str | None = None
    bucket_columns: tuple[str, ...] = ()
    num_buckets: int = -1
    sort_columns: tuple[tuple[str, str], ...] = ()  # (column, "ASC" | "DESC")
    view_expanded_text: str | None = None


def escape_hive_command(text: str) -> str:
    """``HiveStringUtils.escapeHiveCommand``: a backslash before every ``'`` and ``;``."""
    return "".join("\\" + c if c in "';" else c for c in text)


def escape_java(text: str) -> str:
    """The escaping of property values in Hive 2.3's output: backslash escapes for control characters and ``\\``,
    ``\\uXXXX`` (upper case) beyond ASCII; double quotes stay as they are (the witness shows JSON values verbatim)."""
    named = {"\b": "\\b", "\n": "\\n", "\t": "\\t", "\f": "\\f", "\r": "\\r", "\\": "\\\\"}
    out = []
    for c in text:
        if c in named:
            out.append(named[c])
        elif ord(c) < 32 or ord(c) > 0x7F:
            out.append(f"\\u{ord(c):04X}")
        else:
            out.append(c)
    return "".join(out)


def _escape_unicode(text: str) -> str:
    """``HiveStringUtils.escapeUnicode``: code points beyond ASCII as ``\\uxxxx``."""
    return "".join(f"\\u{ord(c):04x}" if ord(c) > 0x7F else c for c in text)


def show_create_table(source: CreateTableSource, *, operation: bool) -> str:
    """The statement Hive prints; ``operation`` selects 4.x's ``ShowCreateTableOperation`` over 2.3/3.1's DDLTask."""
    return "\n".join(line for line in _rendered(source, operation=operation).split("\n") if line)


def _rendered(source: CreateTableSource, *, operation: bool) -> str:
    """The template as rendered, with its empty lines."""
    qualified = f"{source.database}.{source.name}"
    if source.table_type == "VIRTUAL_VIEW":
        return f"CREATE VIEW `{qualified}` AS {source.view_expanded_text or ''}"
    external = "EXTERNAL " if source.table_type == "EXTERNAL_TABLE" else ""
    comment = source.params.get("comment")
    parts = [
        f"CREATE {external}TABLE `{qualified}`(\n{_columns(source.columns)})\n",
        (f"COMMENT '{escape_hive_command(comment)}'" if comment is not None else "") + "\n",
        _partitions(source.partition_keys) + "\n",
        _buckets(source) + "\n",
    ]
    if operation:
        parts.append("\n")  # the (empty) SKEWED BY block: the console does not read skew yet
    parts.append((_row_format_operation(source) if operation else _row_format_ddltask(source)) + "\n")
    if _needs_location(source):
        parts.append(f"LOCATION\n  '{escape_hive_command(source.location or '')}'\n")
    parts.append(f"TBLPROPERTIES (\n{_properties(source.params, operation=operation)})\n")
    return "".join(parts)


def _columns(columns: tuple[tuple[str, str, str | None], ...]) -> str:
    rendered = []
    for name, type_, comment in columns:
        text = f"  `{name}` {type_}"
        if comment is not None:
            text += f" COMMENT '{escape_hive_command(comment)}'"
        rendered.append(text)
    return ", \n".join(rendered)


def _partitions(keys: tuple[tuple[str, str, str | None], ...]) -> str:
    return f"PARTITIONED BY ( \n{_columns(keys)})" if keys else ""


def _buckets(source: CreateTableSource) -> str:
    if not source.bucket_columns:
        return ""
    text = "CLUSTERED BY ( \n  " + ", \n  ".join(source.bucket_columns) + ") \n"
    if source.sort_columns:
        text += "SORTED BY ( \n" + ", \n".join(f"  {col} {order}" for col, order in source.sort_columns) + ") \n"
    return text + f"INTO {source.num_buckets} BUCKETS"


def _storage_handler(source: CreateTableSource) -> str | None:
    return source.params.get(META_TABLE_STORAGE)


def _needs_location(source: CreateTableSource) -> bool:
    """``doesTableNeedLocation``: every native table; of the storage-handler tables, all but HBase's."""
    return _storage_handler(source) != HBASE_STORAGE_HANDLER


def _serde_properties(params: dict[str, str | None], escape: Callable[[str], str]) -> str:
    rows = [f"  '{key}'='{escape(value or '')}'" for key, value in sorted(params.items())]
    return "WITH SERDEPROPERTIES ( \n" + ", \n".join(rows) + ")"


def _stored_as(source: CreateTableSource) -> str:
    return (
        f"STORED AS INPUTFORMAT \n  '{escape_hive_command(source.input_format or '')}' \n"
        f"OUTPUTFORMAT \n  '{escape_hive_command(source.output_format or '')}'"
    )


def _row_format_ddltask(source: CreateTableSource) -> str:
    """``DDLTask.showCreateTable``'s row format (Hive 2.3, 3.1)."""
    params = dict(source.serde_params)
    handler = _storage_handler(source)
    serde = f" SERDE \n  '{escape_hive_command(source.serde_lib or '')}' \n"
    if handler is not None:
        text = f"ROW FORMAT{serde}STORED BY \n  '{escape_hive_command(handler)}' \n"
        return text + (_serde_properties(params, _ddltask_escape) if params else "")
    delimiters = [(prefix, params.pop(key, None)) for key, prefix in _DELIMITERS]
    params.pop(SERIALIZATION_FORMAT, None)
    if any(value is not None for _, value in delimiters):
        text = "ROW FORMAT DELIMITED \n" + "".join(
            f"  {prefix} '{_ddltask_escape(value)}' \n" for prefix, value in delimiters if value is not None
        )
    else:
        text = "ROW FORMAT" + serde
    if params:
        text += _serde_properties(params, _ddltask_escape) + " \n"
    return text + _stored_as(source)


def _ddltask_escape(value: str) -> str:
    return escape_hive_command(escape_java(value))


def _operation_escape(value: str) -> str:
    return _escape_unicode(escape_hive_command(value))


def _row_format_operation(source: CreateTableSource) -> str:
    """``ShowCreateTableOperation.getRowFormat`` (Hive 4.0)."""
    params = dict(source.serde_params)
    text = f"ROW FORMAT SERDE \n  '{escape_hive_command(source.serde_lib or '')}' \n"
    handler = _storage_handler(source)
    if handler is not None:
        text += f"STORED BY \n  '{escape_hive_command(handler)}' \n"
        return text + (_serde_properties(params, _operation_escape) if params else "")
    if params.get(SERIALIZATION_FORMAT) == "1":  # Warehouse.DEFAULT_SERIALIZATION_FORMAT
        params.pop(SERIALIZATION_FORMAT)
    if params:
        text += _serde_properties(params, _operation_escape) + " \n"
    return text + _stored_as(source)


def _properties(params: dict[str, str | None], *, operation: bool) -> str:
    """DDLTask: every parameter but those printed elsewhere, ``escapeJava``'d; 4.x (``DDLUtils.propertiesToString``)
    also leaves the statistics keys out."""
    hidden = _PRINTED_ELSEWHERE | (_STATS_KEYS if operation else frozenset())
    escape = _operation_escape if operation else _ddltask_escape
    rows = [
        f"  '{key}'='{escape(value)}'"
        for key, value in sorted(params.items())
        if value is not None and key not in hidden
    ]
    return ", \n".join(rows)
