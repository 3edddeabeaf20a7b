"""
Structured ALTER operations: the one shape both Hive DDL text and API payloads are turned into.

Every spec is a frozen dataclass naming its target table and what to change; ``to_ddl()``
renders the normalized Hive statement shown in previews.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar

from operations.ddl.render import quote_ident, quote_string, render_partition_spec, render_properties

__all__ = (
    "COMPACT_OPTIONS",
    "REPAIR_MODES",
    "ROW_FORMAT_CLAUSES",
    "SPEC_KINDS",
    "AbortTransactions",
    "AddColumns",
    "AddPartitions",
    "AlterSpec",
    "AnalyzeTable",
    "ChangeColumn",
    "ColumnDef",
    "CompactFiles",
    "CompactTable",
    "ConvertFormat",
    "CreateTable",
    "DropPartitions",
    "DropTable",
    "ExchangePartition",
    "NewPartition",
    "PartitionPredicate",
    "PurgeTrash",
    "Relocate",
    "RenamePartition",
    "RenameTable",
    "RepairPartitions",
    "ReplaceColumns",
    "RevertExecution",
    "RewritePartitionLocations",
    "SetFileFormat",
    "SetLocation",
    "SetOwner",
    "SetSerdeProperties",
    "SetTableProperties",
    "TableRef",
    "TruncateTable",
    "UnsetTableProperties",
    "hive_column_type",
    "spec_from_dict",
)

# Type names Hive's SQL parser reads as another type (HiveLexer: INTEGER is KW_INT, NUMERIC is KW_DECIMAL): the
# metastore only ever receives the second name. A word followed by ':' is a struct field's name, not a type.
_TYPE_SYNONYMS = {"integer": "int", "numeric": "decimal"}
_SYNONYM = re.compile(r"\b(integer|numeric)\b(?!\s*:)", re.IGNORECASE)


def hive_column_type(type_name: str) -> str:
    """``type_name`` as Hive's parser hands it to the metastore: ``integer`` is ``int`` and ``numeric`` is
    ``decimal``, parameters and element types kept (``numeric(10,2)`` → ``decimal(10,2)``, ``array<integer>`` →
    ``array<int>``)."""
    return _SYNONYM.sub(lambda match: _TYPE_SYNONYMS[match.group(1).lower()], type_name)


@dataclass(frozen=True)
class TableRef:
    """``[db.]table``; the database defaults to ``default`` as in Hive."""

    database: str
    table: str

    def __str__(self) -> str:
        return f"{quote_ident(self.database)}.{quote_ident(self.table)}"


@dataclass(frozen=True)
class ColumnDef:
    name: str
    type: str
    comment: str | None = None

    def to_ddl(self) -> str:
        comment = f" COMMENT {quote_string(self.comment)}" if self.comment is not None else ""
        return f"{quote_ident(self.name)} {self.type}{comment}"


@dataclass(frozen=True)
class PartitionPredicate:
    """``key op value`` in a DROP PARTITION spec; ``=`` for exact specs."""

    key: str
    op: str
    value: str


@dataclass(frozen=True)
class AlterSpec:
    """Base of all operations: the table it alters; ``on_view``: written ``ALTER VIEW`` (Hive checks the object is
    a view then, and a table otherwise: ``DDLSemanticAnalyzer.validateAlterTableType``)."""

    kind: ClassVar[str] = ""
    target: TableRef
    on_view: bool = field(default=False, kw_only=True)

    def to_ddl(self) -> str:
        return f"ALTER {'VIEW' if self.on_view else 'TABLE'} {self.target} {self._clause()}"

    def _clause(self) -> str:
        raise NotImplementedError

    def requested_by(self, username: str) -> AlterSpec:
        """The spec as ``username`` requests it (a CREATE TABLE's owner is its requester; an ALTER: unchanged)."""
        return self

    def as_dict(self) -> dict[str, Any]:
        data = {"kind": self.kind, **asdict(self)}
        if not self.on_view:
            del data["on_view"]  # the ALTER TABLE form: the summary every request stored before ALTER VIEW
        return data


@dataclass(frozen=True)
class RenameTable(AlterSpec):
    kind: ClassVar[str] = "rename_table"
    new: TableRef

    def _clause(self) -> str:
        return f"RENAME TO {self.new}"


@dataclass(frozen=True)
class AddColumns(AlterSpec):
    kind: ClassVar[str] = "add_columns"
    columns: tuple[ColumnDef, ...]
    cascade: bool = False

    def _clause(self) -> str:
        return f"ADD COLUMNS ({', '.join(c.to_ddl() for c in self.columns)}){_cascade(self.cascade)}"


@dataclass(frozen=True)
class ReplaceColumns(AlterSpec):
    kind: ClassVar[str] = "replace_columns"
    columns: tuple[ColumnDef, ...]
    cascade: bool = False

    def _clause(self) -> str:
        return f"REPLACE COLUMNS ({', '.join(c.to_ddl() for c in self.columns)}){_cascade(self.cascade)}"


@dataclass(frozen=True)
class ChangeColumn(AlterSpec):
    kind: ClassVar[str] = "change_column"
    old_name: str
    column: ColumnDef
    first: bool = False
    after: str | None = None
    cascade: bool = False

    def _clause(self) -> str:
        position = " FIRST" if self.first else (f" AFTER {quote_ident(self.after)}" if self.after else "")
        return f"CHANGE COLUMN {quote_ident(self.old_name)} {self.column.to_ddl()}{position}{_cascade(self.cascade)}"


@dataclass(frozen=True)
class SetTableProperties(AlterSpec):
    kind: ClassVar[str] = "set_tblproperties"
    properties: tuple[tuple[str, str], ...]

    def _clause(self) -> str:
        return f"SET TBLPROPERTIES {render_properties(self.properties)}"


@dataclass(frozen=True)
class UnsetTableProperties(AlterSpec):
    kind: ClassVar[str] = "unset_tblproperties"
    keys: tuple[str, ...]
    if_exists: bool = False

    def _clause(self) -> str:
        exists = " IF EXISTS" if self.if_exists else ""
        return f"UNSET TBLPROPERTIES{exists} ({', '.join(quote_string(k) for k in self.keys)})"


@dataclass(frozen=True)
class SetSerdeProperties(AlterSpec):
    kind: ClassVar[str] = "set_serdeproperties"
    properties: tuple[tuple[str, str], ...]

    def _clause(self) -> str:
        return f"SET SERDEPROPERTIES {render_properties(self.properties)}"


@dataclass(frozen=True)
class SetOwner(AlterSpec):
    kind: ClassVar[str] = "set_owner"
    principal_type: str  # USER | ROLE | GROUP
    principal: str

    def _clause(self) -> str:
        return f"SET OWNER {self.principal_type} {quote_ident(self.principal)}"


@dataclass(frozen=True)
class SetLocation(AlterSpec):
    """``SET LOCATION`` of the table, or of one partition when ``partition`` is given."""

    kind: ClassVar[str] = "set_location"
    location: str
    partition: tuple[tuple[str, str], ...] = ()

    def _clause(self) -> str:
        spec = f"PARTITION {render_partition_spec(self.partition)} " if self.partition else ""
        return f"{spec}SET LOCATION {quote_string(self.location)}"


@dataclass(frozen=True)
class Relocate(AlterSpec):
    """``[PARTITION (…)] SET LOCATION '…' WITH DATA``, the console's one extension of Hive's syntax: the data is copied
    to the new root (a Spark job, each file verified), then the table and its partitions are re-pointed at once.

    Without ``partitions`` the whole table moves: its root becomes ``location`` and each partition keeps its path
    below the root. With them (``k op v`` as in DROP PARTITION), every matching partition moves to
    ``location/<partition name>``. Plain ``SET LOCATION`` keeps Hive's metadata-only meaning."""

    kind: ClassVar[str] = "relocate"
    location: str
    partitions: tuple[PartitionPredicate, ...] = ()

    @property
    def specs(self) -> tuple[tuple[PartitionPredicate, ...], ...]:
        """The partition predicates as DROP PARTITION's matcher takes them (one spec, or none: the whole table)."""
        return (self.partitions,) if self.partitions else ()

    def _clause(self) -> str:
        predicates = ", ".join(f"{quote_ident(p.key)}{p.op}{quote_string(p.value)}" for p in self.partitions)
        spec = f"PARTITION ({predicates}) " if self.partitions else ""
        return f"{spec}SET LOCATION {quote_string(self.location)} WITH DATA"


@dataclass(frozen=True)
class CompactFiles(AlterSpec):
    """``[PARTITION (…)] CONCATENATE``: each selected partition (or an unpartitioned table's root) is rewritten by a
    Spark job into a new directory of fewer, bigger files (same rows, verified), then re-pointed in one transaction.

    Not Hive's ACID ``COMPACT`` (:class:`CompactTable`). Structured-only criteria narrow the selection to partitions
    with more than ``min_files`` files or an average file smaller than ``max_average_bytes``;
    ``target_file_bytes`` (default ``CATALOG_COMPACT_TARGET_FILE_BYTES``) sizes the new files."""

    kind: ClassVar[str] = "compact_files"
    partitions: tuple[PartitionPredicate, ...] = ()
    min_files: int | None = None
    max_average_bytes: int | None = None
    target_file_bytes: int | None = None

    @property
    def specs(self) -> tuple[tuple[PartitionPredicate, ...], ...]:
        return (self.partitions,) if self.partitions else ()

    def _clause(self) -> str:
        """Hive's ``CONCATENATE``; the structured-only options follow as the console's extension ``WITH ('k'='v',
        …)`` (parsed back by ``parse_alter``)."""
        options = tuple((name, str(value)) for name in COMPACT_OPTIONS if (value := getattr(self, name)) is not None)
        extension = f" WITH {render_properties(options)}" if options else ""
        return f"{_predicates_clause(self.partitions)}CONCATENATE{extension}"


# The options of a compaction beyond Hive's CONCATENATE (CompactFiles' fields of the same names).
COMPACT_OPTIONS = ("min_files", "max_average_bytes", "target_file_bytes")


@dataclass(frozen=True)
class ConvertFormat(AlterSpec):
    """``[PARTITION (…)] SET FILEFORMAT PARQUET|ORC|AVRO WITH DATA`` (console extension, like ``SET LOCATION … WITH
    DATA``): the data is rewritten into the new format in new directories, then each storage descriptor's formats,
    SerDe and location switch together in one transaction. Without ``partitions``: the table and all partitions."""

    kind: ClassVar[str] = "convert_format"
    file_format: str  # PARQUET | ORC | AVRO
    partitions: tuple[PartitionPredicate, ...] = ()

    @property
    def specs(self) -> tuple[tuple[PartitionPredicate, ...], ...]:
        return (self.partitions,) if self.partitions else ()

    def _clause(self) -> str:
        return f"{_predicates_clause(self.partitions)}SET FILEFORMAT {self.file_format.upper()} WITH DATA"


@dataclass(frozen=True)
class SetFileFormat(AlterSpec):
    """Hive's ``[PARTITION (…)] SET FILEFORMAT PARQUET|ORC|AVRO``: metadata only (the formats and SerDe of one
    storage descriptor); its preview blocks it where existing files would become unreadable (``WITH DATA`` converts)."""

    kind: ClassVar[str] = "set_fileformat"
    file_format: str
    partition: tuple[tuple[str, str], ...] = ()

    def _clause(self) -> str:
        spec = f"PARTITION {render_partition_spec(self.partition)} " if self.partition else ""
        return f"{spec}SET FILEFORMAT {self.file_format.upper()}"


@dataclass(frozen=True)
class RewritePartitionLocations(AlterSpec):
    """Console extension: replace a location prefix on every partition (metadata only)."""

    kind: ClassVar[str] = "rewrite_partition_locations"
    old_prefix: str
    new_prefix: str

    def _clause(self) -> str:
        return (
            f"PARTITION LOCATIONS REPLACE PREFIX {quote_string(self.old_prefix)} WITH {quote_string(self.new_prefix)}"
        )


@dataclass(frozen=True)
class RenamePartition(AlterSpec):
    kind: ClassVar[str] = "rename_partition"
    partition: tuple[tuple[str, str], ...]
    new_partition: tuple[tuple[str, str], ...]

    def _clause(self) -> str:
        return (
            f"PARTITION {render_partition_spec(self.partition)} "
            f"RENAME TO PARTITION {render_partition_spec(self.new_partition)}"
        )


@dataclass(frozen=True)
class DropPartitions(AlterSpec):
    """``DROP [IF EXISTS] PARTITION (k op v, …)[, PARTITION (…)]``; data of managed tables goes to trash."""

    kind: ClassVar[str] = "drop_partitions"
    specs: tuple[tuple[PartitionPredicate, ...], ...]
    if_exists: bool = False
    purge: bool = False

    def _clause(self) -> str:
        parts = ", ".join(
            "PARTITION (" + ", ".join(f"{quote_ident(p.key)}{p.op}{quote_string(p.value)}" for p in spec) + ")"
            for spec in self.specs
        )
        exists = " IF EXISTS" if self.if_exists else ""
        return f"DROP{exists} {parts}{' PURGE' if self.purge else ''}"


@dataclass(frozen=True)
class ExchangePartition(AlterSpec):
    """``ALTER TABLE dest EXCHANGE PARTITION (k='v', …) WITH TABLE source``: the source's partitions matching the
    (possibly partial) spec move, with their data directory, to ``target`` (``planners/exchange_partition.py``)."""

    kind: ClassVar[str] = "exchange_partition"
    partition: tuple[tuple[str, str], ...]
    source: TableRef

    def _clause(self) -> str:
        return f"EXCHANGE PARTITION {render_partition_spec(self.partition)} WITH TABLE {self.source}"


@dataclass(frozen=True)
class CompactTable(AlterSpec):
    """``[PARTITION (…)] COMPACT 'major'|'minor'``: a request in Hive's compaction queue (no table row changes)."""

    kind: ClassVar[str] = "compact"
    compaction_type: str  # major | minor
    partition: tuple[tuple[str, str], ...] = ()

    def _clause(self) -> str:
        spec = f"PARTITION {render_partition_spec(self.partition)} " if self.partition else ""
        return f"{spec}COMPACT {quote_string(self.compaction_type)}"


@dataclass(frozen=True)
class AbortTransactions(AlterSpec):
    """Console extension of Hive's ``ABORT TRANSACTIONS id …``, scoped to the table whose writes the transactions
    hold up (so approvers' scopes and the table page apply)."""

    kind: ClassVar[str] = "abort_transactions"
    txn_ids: tuple[int, ...]

    def _clause(self) -> str:
        return f"ABORT TRANSACTIONS {' '.join(str(t) for t in self.txn_ids)}"


@dataclass(frozen=True)
class CreateTable(AlterSpec):
    """``CREATE [EXTERNAL] TABLE [IF NOT EXISTS] t (…) …`` or ``… t LIKE s [LOCATION …]``: ``target`` is the table
    created (``operations/planners/create_table.py`` plans it; ``operations/ddl/create_table.py`` parses it).

    ``row_format``: ``ROW FORMAT DELIMITED``'s clauses as (clause, value): FIELDS, ESCAPED, COLLECTION, MAPKEYS,
    LINES, NULL; ``sort_columns``: (name, 1 for ASC or 0 for DESC), as SORT_COLS.ORDER stores them; ``owner``: the
    table's owner (the requester; Hive's session user), None for the console's default."""

    kind: ClassVar[str] = "create_table"
    columns: tuple[ColumnDef, ...] = ()
    external: bool = False
    if_not_exists: bool = False
    comment: str | None = None
    partition_keys: tuple[ColumnDef, ...] = ()
    bucket_columns: tuple[str, ...] = ()
    sort_columns: tuple[tuple[str, int], ...] = ()
    buckets: int = -1
    row_format: tuple[tuple[str, str], ...] = ()
    serde: str | None = None
    serde_properties: tuple[tuple[str, str], ...] = ()
    stored_as: str | None = None
    input_format: str | None = None
    output_format: str | None = None
    location: str | None = None
    properties: tuple[tuple[str, str], ...] = ()
    like: TableRef | None = None
    owner: str | None = None

    def requested_by(self, username: str) -> CreateTable:
        """Hive makes the session user the owner; the console, the requester (unless the operation names one)."""
        return replace(self, owner=self.owner or username or None)

    def to_ddl(self) -> str:
        head = f"CREATE {'EXTERNAL ' if self.external else ''}TABLE {'IF NOT EXISTS ' if self.if_not_exists else ''}"
        if self.like is not None:
            return f"{head}{self.target} LIKE {self.like}{_location_clause(self.location)}"
        clauses = [f"{head}{self.target} ({', '.join(c.to_ddl() for c in self.columns)})"]
        clauses += [f"COMMENT {quote_string(self.comment)}"] if self.comment is not None else []
        if self.partition_keys:
            clauses.append(f"PARTITIONED BY ({', '.join(c.to_ddl() for c in self.partition_keys)})")
        if self.bucket_columns:
            sort = ", ".join(f"{quote_ident(n)} {'ASC' if order else 'DESC'}" for n, order in self.sort_columns)
            clauses.append(f"CLUSTERED BY ({', '.join(quote_ident(c) for c in self.bucket_columns)})"
                           + (f" SORTED BY ({sort})" if sort else "") + f" INTO {self.buckets} BUCKETS")  # fmt: skip
        clauses += _row_format_clauses(self)
        if self.stored_as:
            clauses.append(f"STORED AS {self.stored_as}")
        elif self.input_format:
            clauses.append(f"STORED AS INPUTFORMAT {quote_string(self.input_format)} "
                           f"OUTPUTFORMAT {quote_string(self.output_format or '')}")  # fmt: skip
        clauses += [_location_clause(self.location).strip()] if self.location else []
        clauses += [f"TBLPROPERTIES {render_properties(self.properties)}"] if self.properties else []
        return " ".join(clauses)


# ROW FORMAT DELIMITED's clauses, in Hive's order (HiveParser.g's rowFormatDelimited).
ROW_FORMAT_CLAUSES = {
    "FIELDS": "FIELDS TERMINATED BY",
    "ESCAPED": "ESCAPED BY",
    "COLLECTION": "COLLECTION ITEMS TERMINATED BY",
    "MAPKEYS": "MAP KEYS TERMINATED BY",
    "LINES": "LINES TERMINATED BY",
    "NULL": "NULL DEFINED AS",
}


def _row_format_clauses(spec: CreateTable) -> list[str]:
    if spec.serde:
        properties = (
            f" WITH SERDEPROPERTIES {render_properties(spec.serde_properties)}" if spec.serde_properties else ""
        )
        return [f"ROW FORMAT SERDE {quote_string(spec.serde)}{properties}"]
    if not spec.row_format:
        return []
    return ["ROW FORMAT DELIMITED " + " ".join(f"{ROW_FORMAT_CLAUSES[c]} {_delimiter(v)}" for c, v in spec.row_format)]


def _delimiter(value: str) -> str:
    """A delimiter literal: control characters (Hive's default ``\\001`` …) as the octal escapes Hive reads."""
    return "".join(f"\\{ord(c):03o}" if ord(c) < 32 and c not in "\n\t\r\0" else c for c in quote_string(value))


def _location_clause(location: str | None) -> str:
    return f" LOCATION {quote_string(location)}" if location else ""


@dataclass(frozen=True)
class NewPartition:
    """One ``PARTITION (k='v', …) [LOCATION '…']`` of an ``ADD PARTITION``."""

    values: tuple[tuple[str, str], ...]
    location: str | None = None

    def to_ddl(self) -> str:
        location = f" LOCATION {quote_string(self.location)}" if self.location is not None else ""
        return f"PARTITION {render_partition_spec(self.values)}{location}"


@dataclass(frozen=True)
class AddPartitions(AlterSpec):
    """``ADD [IF NOT EXISTS] PARTITION (…) [LOCATION '…'] [PARTITION (…) …]`` (Hive's ``add_partitions``)."""

    kind: ClassVar[str] = "add_partitions"
    additions: tuple[NewPartition, ...]
    if_not_exists: bool = False

    def _clause(self) -> str:
        exists = " IF NOT EXISTS" if self.if_not_exists else ""
        return f"ADD{exists} {' '.join(p.to_ddl() for p in self.additions)}"


# MSCK's modes: which side of the repair runs (Hive's ``MsckDesc``: ADD is the default).
REPAIR_MODES = ("add", "drop", "sync")


@dataclass(frozen=True)
class RepairPartitions(AlterSpec):
    """``MSCK [REPAIR] TABLE t [ADD|DROP|SYNC PARTITIONS]``: partitions whose directory exists under the table's are
    added, partitions whose directory is gone are dropped (``Msck.repair``); without REPAIR only a report."""

    kind: ClassVar[str] = "msck_repair"
    mode: str = "add"
    repair: bool = True

    def to_ddl(self) -> str:
        repair = " REPAIR" if self.repair else ""
        mode = f" {self.mode.upper()} PARTITIONS" if self.mode != "add" else ""
        return f"MSCK{repair} TABLE {self.target}{mode}"


@dataclass(frozen=True)
class DropTable(AlterSpec):
    """``DROP TABLE [IF EXISTS] t [PURGE]``, or ``DROP VIEW [IF EXISTS] v`` (``on_view``): the table's rows go (kept in
    the before-image, so a revert undrops it), a managed table's data goes to the console's trash (PURGE too)."""

    kind: ClassVar[str] = "drop_table"
    if_exists: bool = False
    purge: bool = False

    def to_ddl(self) -> str:
        exists = " IF EXISTS" if self.if_exists else ""
        return f"DROP {'VIEW' if self.on_view else 'TABLE'}{exists} {self.target}{' PURGE' if self.purge else ''}"


@dataclass(frozen=True)
class TruncateTable(AlterSpec):
    """``TRUNCATE TABLE t [PARTITION (k='v', …)]``: the data of a managed table (or of the partitions a full or
    partial spec selects) goes to the console's trash, its directories stay, empty; statistics reset as Hive's."""

    kind: ClassVar[str] = "truncate_table"
    partition: tuple[tuple[str, str], ...] = ()

    def to_ddl(self) -> str:
        spec = f" PARTITION {render_partition_spec(self.partition)}" if self.partition else ""
        return f"TRUNCATE TABLE {self.target}{spec}"


@dataclass(frozen=True)
class PurgeTrash(AlterSpec):
    """Console extension: ``PURGE TRASH [OLDER THAN n DAYS]`` deletes the table's entries of the console's trash
    (what its drops and truncates moved there) that are older than ``n`` days (all without it), for good."""

    kind: ClassVar[str] = "purge_trash"
    older_than_days: int | None = None

    def _clause(self) -> str:
        return "PURGE TRASH" + (f" OLDER THAN {self.older_than_days} DAYS" if self.older_than_days is not None else "")


def _predicates_clause(predicates: tuple[PartitionPredicate, ...]) -> str:
    """``PARTITION (k op 'v', …) `` or nothing."""
    if not predicates:
        return ""
    return f"PARTITION ({', '.join(f'{quote_ident(p.key)}{p.op}{quote_string(p.value)}' for p in predicates)}) "


def _cascade(cascade: bool) -> str:
    return " CASCADE" if cascade else ""


@dataclass(frozen=True)
class AnalyzeTable(AlterSpec):
    """``ANALYZE TABLE t [PARTITION (…)] COMPUTE STATISTICS [NOSCAN | FOR COLUMNS [c, …]]``: a Spark job reads the
    partitions' files and the statistics Hive computes are swapped in (``planners/analyze.py``). ``columns``: None
    for basic statistics only, ``()`` for every column. ``only_stale`` (structured only, the stale-statistics
    anomaly's action): only partitions whose statistics Hive does not mark accurate."""

    kind: ClassVar[str] = "analyze"
    partitions: tuple[PartitionPredicate, ...] = ()
    noscan: bool = False
    columns: tuple[str, ...] | None = None
    only_stale: bool = False

    @property
    def specs(self) -> tuple[tuple[PartitionPredicate, ...], ...]:
        return (self.partitions,) if self.partitions else ()

    def to_ddl(self) -> str:
        what = " NOSCAN" if self.noscan else ""
        if self.columns is not None:
            names = ", ".join(quote_ident(c) for c in self.columns)
            what = f" FOR COLUMNS {names}".rstrip()
        extension = " WITH ('only_stale'='true')" if self.only_stale else ""
        return f"ANALYZE TABLE {self.target} {_predicates_clause(self.partitions)}COMPUTE STATISTICS{what}{extension}"


SPEC_KINDS: dict[str, type[AlterSpec]] = {
    cls.kind: cls
    for cls in (
        RenameTable,
        AddColumns,
        ReplaceColumns,
        ChangeColumn,
        SetTableProperties,
        UnsetTableProperties,
        SetSerdeProperties,
        SetOwner,
        SetLocation,
        RewritePartitionLocations,
        RenamePartition,
        DropPartitions,
        CompactTable,
        AbortTransactions,
        Relocate,
        DropTable,
        CompactFiles,
        ConvertFormat,
        SetFileFormat,
        CreateTable,
        ExchangePartition,
        AddPartitions,
        RepairPartitions,
        TruncateTable,
        PurgeTrash,
        AnalyzeTable,
    )
}


@dataclass(frozen=True)
class RevertExecution(AlterSpec):
    """Restore what an earlier execution changed, from its before-image (not a Hive statement)."""

    kind: ClassVar[str] = "revert"
    execution_id: int
    statement: str

    def to_ddl(self) -> str:
        return f"-- Revert execution #{self.execution_id}: {self.statement}"


def spec_from_dict(data: dict[str, Any]) -> AlterSpec:
    """Rebuild a spec from :meth:`AlterSpec.as_dict` output (or an API payload of the same shape)."""
    fields = {k: v for k, v in data.items() if k != "kind"}
    cls = SPEC_KINDS[data["kind"]]
    if cls is CreateTable:
        return _create_table(fields)
    for name in ("target", "new", "source"):
        if name in fields:
            fields[name] = TableRef(**fields[name])
    if "column" in fields:
        fields["column"] = _column_def(fields["column"])
    for name in ("properties", "partition", "new_partition"):
        if name in fields:
            fields[name] = tuple(tuple(pair) for pair in fields[name])
    if fields.get("columns") is not None and cls is AnalyzeTable:
        fields["columns"] = tuple(fields["columns"])
    elif "columns" in fields and fields["columns"] is not None:
        fields["columns"] = tuple(_column_def(c) for c in fields["columns"])
    if "keys" in fields:
        fields["keys"] = tuple(fields["keys"])
    if "txn_ids" in fields:
        fields["txn_ids"] = tuple(fields["txn_ids"])
    if "partitions" in fields:
        fields["partitions"] = tuple(PartitionPredicate(**p) for p in fields["partitions"])
    if "additions" in fields:
        fields["additions"] = tuple(
            NewPartition(tuple(tuple(pair) for pair in p["values"]), p.get("location")) for p in fields["additions"]
        )
    if "specs" in fields:
        fields["specs"] = tuple(tuple(PartitionPredicate(**p) for p in spec) for spec in fields["specs"])
    return cls(**fields)


def _create_table(fields: dict[str, Any]) -> CreateTable:
    """A :class:`CreateTable` from its dict (lists back to tuples)."""
    fields["target"] = TableRef(**fields["target"])
    fields["like"] = TableRef(**fields["like"]) if fields.get("like") else None
    for name in ("columns", "partition_keys"):
        fields[name] = tuple(_column_def(c) for c in fields.get(name, ()))
    for name in ("row_format", "serde_properties", "properties", "sort_columns"):
        fields[name] = tuple(tuple(pair) for pair in fields.get(name, ()))
    fields["bucket_columns"] = tuple(fields.get("bucket_columns", ()))
    return CreateTable(**fields)


def _column_def(data: dict[str, Any]) -> ColumnDef:
    """A column definition from its dict, its type named as a typed statement would name it."""
    column = ColumnDef(**data)
    return replace(column, type=hive_column_type(column.type)) if isinstance(column.type, str) else column
