"""
``CREATE [EXTERNAL] TABLE`` and ``CREATE TABLE … LIKE``: the plan of a table that does not exist yet.

What Hive writes, per version (checked against Hive 2.3's own Driver in ``tests/witness/test_spark_create_table.py``):

- the storage format of each ``STORED AS`` from ``StorageFormatFactory``'s descriptors
  (``ql/.../io/{TextFile,SequenceFile,RCFile,ORCFile,ParquetFile,Avro}StorageFormatDescriptor.java``, IOConstants);
  no ``STORED AS`` is TEXTFILE (``hive.default.fileformat``), RCFILE's SerDe ``hive.default.rcfile.serde``;
- ``serialization.format`` = ``1`` on every SerDe (``Table.getEmptyTable``), or the field delimiter with ``ROW FORMAT
  DELIMITED FIELDS TERMINATED BY`` (``CreateTableDesc.toTable``: ``field.delim``, ``escape.delim``,
  ``colelction.delim`` — Hive's spelling —, ``mapkey.delim``, ``line.delim``, ``serialization.null.format``);
- ``comment``, ``EXTERNAL``=``TRUE``, ``SORTBUCKETCOLSPREFIX``=``TRUE`` (sort columns starting with the bucket
  columns) and, from 3.0, ``bucketing_version``=``2`` (``Table.getEmptyTable``) in TABLE_PARAMS;
- basic statistics for a new unpartitioned table (``StatsSetupConst.setBasicStatsStateForCreateTable`` /
  ``setStatsStateForCreateTable``: numFiles, numRows, rawDataSize, totalSize ``0`` and ``COLUMN_STATS_ACCURATE``, with
  every column's flag from 3.0) unless it is external with a LOCATION (``CreateTableDesc.toTable``); for LIKE, when
  no LOCATION is given (``DDLTask.createTableLike``). LIKE copies the columns, keys, storage and SerDe, never the
  source's TBLPROPERTIES (``hive.ddl.createtablelike.properties.whitelist`` is empty by default);
- transactional defaults: ``hive.create.as.acid``, ``hive.create.as.insert.only`` and ``hive.strict.managed.tables``
  are off by default in 3.1 and 4.0, so Hive makes no table transactional by itself, and neither does the console;
  ``TBLPROPERTIES ('transactional'='true')`` is checked by ``TransactionalValidationListener``'s rules. 4.0's
  ``MetastoreDefaultTransformer`` (turning a managed non-ACID table external for clients without ACID
  capabilities) is a metastore option the console does not apply: it writes what the Driver asks for;
- the location: the database's directory and the table's name (``Warehouse.getDefaultTablePath``; 4.0's managed
  location when the database has one), or the LOCATION given, qualified with the database's filesystem; the
  directory is created when missing (``HMSHandler.create_table_core``: ``wh.mkdirs``). The console refuses a location
  outside its governed roots, through a symbolic link, used by another table or partition, or — for a managed table
  — holding files (Hive would count them into numFiles; the revert could not tell them from later writes).

The owner is the requester (Hive: the session user); the creation time and ``transient_lastDdlTime`` are the
database's clock at execution. These, the ids and the location prefix are the documented differences from Hive.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from catalog_admin.errors import ApplicationError, NotFound
from catalog_admin.locations import filesystem_for, linked_ancestors
from catalog_admin.models import BucketingColumn, Database, SortColumn, StorageDescriptor, Table
from catalog_admin.selectors.metastores import Metastore
from operations.containment import MoveContext, governed_roots, new_location_blockers
from operations.events.messages import message_format
from operations.events.planning import CREATE_TABLE
from operations.planners.common import console_seconds, metadata_only_hive
from operations.planners.create_table_acid import normalized_transactional
from operations.planners.create_table_checks import definition_blockers
from operations.planners.create_table_rows import TableDefinition, insert_steps
from operations.preview import PlannedEvents, Preview, TableSnapshot
from operations.risk import RiskCriterion, risk_of
from operations.rules import Finding
from operations.specs import CreateTable
from operations.table_state import TableState, read_table_state

__all__ = ("STORAGE_FORMATS", "creation_fingerprint", "plan_create_table")

TEXT_INPUT = "org.apache.hadoop.mapred.TextInputFormat"
TEXT_OUTPUT = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"
LAZY_SIMPLE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
# STORED AS -> (input format, output format, SerDe): StorageFormatFactory's descriptors (2.3, 3.1, 4.0 alike).
STORAGE_FORMATS = {
    "TEXTFILE": (TEXT_INPUT, TEXT_OUTPUT, LAZY_SIMPLE),
    "SEQUENCEFILE": ("org.apache.hadoop.mapred.SequenceFileInputFormat",
                     "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat", LAZY_SIMPLE),
    "RCFILE": ("org.apache.hadoop.hive.ql.io.RCFileInputFormat", "org.apache.hadoop.hive.ql.io.RCFileOutputFormat",
               "org.apache.hadoop.hive.serde2.columnar.LazyBinaryColumnarSerDe"),
    "ORC": ("org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
            "org.apache.hadoop.hive.ql.io.orc.OrcSerde"),
    "PARQUET": ("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
                "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"),
    "AVRO": ("org.apache.hadoop.hive.ql.io.avro.AvroContainerInputFormat",
             "org.apache.hadoop.hive.ql.io.avro.AvroContainerOutputFormat",
             "org.apache.hadoop.hive.serde2.avro.AvroSerDe"),
}  # fmt: skip
# ROW FORMAT DELIMITED clause -> SerDe parameter (serdeConstants; "colelction" is Hive's own spelling).
DELIMITER_PARAMS = {"FIELDS": "field.delim", "ESCAPED": "escape.delim", "COLLECTION": "colelction.delim",
                    "MAPKEYS": "mapkey.delim", "LINES": "line.delim", "NULL": "serialization.null.format"}  # fmt: skip
STATS_KEYS = ("numFiles", "numRows", "rawDataSize", "totalSize")
DEFAULT_OWNER = "hive"


@dataclass(frozen=True)
class Place:
    """Where the table goes: its database row and the table's location, and whether that directory exists."""

    database_id: int
    database_location: str
    location: str
    exists: bool | None
    files: tuple[str, ...]


def plan_create_table(metastore: Metastore, spec: CreateTable) -> Preview:
    """The plan of ``spec``: its rows, the directory it creates, Hive's rules as blockers, one CREATE_TABLE event."""
    database = _database(metastore, spec)
    existing = Table.objects.using(metastore.alias).filter(database_id=database.id, name=spec.target.table)
    source, blockers = _source(metastore, spec)
    if existing.exists():
        if spec.if_not_exists:
            return _preview(metastore, spec, database.location_uri, steps=[], blockers=[], warnings=[
                Finding("table_exists", "ddl", f"Table {spec.target} already exists: IF NOT EXISTS does nothing.",
                        "warning")])  # fmt: skip
        blockers.append(Finding("table_exists", "ddl", f"Table {spec.target.database}.{spec.target.table} already "
                                "exists"))  # fmt: skip
    place = _place(metastore, spec, database)
    definition = _definition(metastore, spec, source, place, database.id)
    blockers += definition_blockers(metastore, spec, definition)
    blockers += _location_blockers(metastore, spec, place)
    steps = [] if blockers else insert_steps(metastore, definition)
    made = (place.location,) if place.exists is False and not blockers else ()
    return _preview(metastore, spec, database.location_uri, steps=steps, blockers=blockers, definition=definition,
                    made=made, source=source)  # fmt: skip


def _database(metastore: Metastore, spec: CreateTable) -> Database:
    database = Database.objects.on(metastore).filter(name=spec.target.database).first()
    if database is None:
        raise NotFound("database", spec.target.database, metastore=metastore.name)
    return database


def _source(metastore: Metastore, spec: CreateTable) -> tuple[TableState | None, list[Finding]]:
    """LIKE's source table (a view is refused: Hive's createViewLikeTable is another statement)."""
    if spec.like is None:
        return None, []
    try:
        source = read_table_state(metastore, spec.like)
    except ApplicationError:
        return None, [Finding("like_not_found", "ddl", f"Table not found {spec.like.database}.{spec.like.table}")]
    if source.is_view:
        return None, [Finding("like_view", "ddl", f"{spec.like} is a view: the console creates tables LIKE a table.")]
    return source, []


def _place(metastore: Metastore, spec: CreateTable, database: Database) -> Place:
    """The table's location (Warehouse.getDefaultTablePath or the LOCATION, qualified) and what is there now."""
    base = database.location_uri
    if not spec.external and metastore.schema.has(Database, "managed_location_uri"):
        base = database.managed_location_uri or base
    location = _qualified(spec.location, base) if spec.location else f"{base.rstrip('/')}/{spec.target.table}"
    filesystem = filesystem_for(location, metastore.name)
    exists = filesystem.exists(location) if not linked_ancestors([location]) else None
    listed = filesystem.list_files(location, limit=6) if exists else None
    return Place(database.id, base, location, exists, tuple(f.location for f in listed or ()))


def _qualified(location: str, base: str) -> str:
    """``CreateTableOperation.makeLocationQualified``: a path without a scheme gets the database's filesystem."""
    location = location.rstrip("/") or "/"
    if "://" in location or location.startswith("file:") or not location.startswith("/"):
        return location
    scheme, _, rest = base.partition(":")
    authority = rest[2:].split("/", 1)[0] if rest.startswith("//") else ""
    return f"{scheme}://{authority}{location}" if authority else f"{scheme}:{location}"


def _location_blockers(metastore: Metastore, spec: CreateTable, place: Place) -> list[Finding]:
    links = linked_ancestors([place.location])
    if links:
        return [Finding("symlink_in_path", "containment", f"{place.location} passes through the symbolic link "
                        f"{links[place.location]}: the console follows no link.")]  # fmt: skip
    blockers = new_location_blockers(metastore, place.location, own=MoveContext())
    roots = governed_roots(metastore)
    if place.exists is False and not roots.governs(place.location) and roots.allow_outside:
        blockers.append(Finding("outside_roots", "containment", f"{place.location} does not exist and is outside the "
                                f"directories this console governs ({roots.describe()}): the console creates no "
                                "directory there."))  # fmt: skip
    if not spec.external and place.files:
        blockers.append(Finding("location_not_empty", "containment", f"{place.location} already holds files (first: "
                                f"{', '.join(place.files[:5])}): the console creates a managed table only in a new "
                                "or empty directory; create it EXTERNAL to use data that is there."))  # fmt: skip
    return blockers


def _definition(
    metastore: Metastore, spec: CreateTable, source: TableState | None, place: Place, database_id: int
) -> TableDefinition:
    if source is not None:
        return _like_definition(metastore, spec, source, place, database_id)
    stored_input, stored_output, stored_serde = STORAGE_FORMATS[spec.stored_as or "TEXTFILE"]
    input_format: str | None = spec.input_format or stored_input
    output_format: str | None = spec.output_format if spec.input_format else stored_output
    serde = spec.serde or stored_serde
    delimiters = [(DELIMITER_PARAMS[clause], value) for clause, value in spec.row_format]
    fields = dict(spec.row_format).get("FIELDS")
    serde_params = dict([*delimiters, *spec.serde_properties])
    serde_params["serialization.format"] = fields if fields is not None else serde_params.get("serialization.format",
                                                                                               "1")  # fmt: skip
    columns = tuple((c.name, c.type, c.comment) for c in spec.columns)
    params = dict(spec.properties)
    if spec.comment is not None:
        params["comment"] = spec.comment
    if _sort_prefixes_buckets(spec.bucket_columns, spec.sort_columns):
        params["SORTBUCKETCOLSPREFIX"] = "TRUE"
    new_location = spec.location is None or not spec.external
    stats = not spec.partition_keys and new_location
    return TableDefinition(
        database_id=database_id, name=spec.target.table, table_type=_table_type(spec),
        owner=spec.owner or DEFAULT_OWNER,
        columns=columns, partition_keys=tuple((k.name, k.type, k.comment) for k in spec.partition_keys),
        location=place.location, input_format=input_format, output_format=output_format, serde_lib=serde,
        serde_params=tuple(sorted(serde_params.items())), buckets=spec.buckets if spec.bucket_columns else -1,
        bucket_columns=spec.bucket_columns, sort_columns=spec.sort_columns,
        params=_with_defaults(metastore, spec, params, [c[0] for c in columns], stats),
    )  # fmt: skip


def _like_definition(
    metastore: Metastore, spec: CreateTable, source: TableState, place: Place, database_id: int
) -> TableDefinition:
    """``DDLTask.createTableLike``: the source's columns, keys, storage and SerDe; none of its parameters."""
    alias = metastore.alias
    buckets = tuple(BucketingColumn.objects.using(alias).filter(sd_id=source.sd_id).order_by("position")
                    .values_list("name", flat=True))  # fmt: skip
    sorts = tuple(SortColumn.objects.using(alias).filter(sd_id=source.sd_id).order_by("position")
                  .values_list("name", "order"))  # fmt: skip
    num_buckets = (
        StorageDescriptor.objects.using(alias).filter(pk=source.sd_id or 0).values_list("num_buckets", flat=True)
    )
    stats = not source.partition_keys and spec.location is None
    columns = tuple((c.name, c.type, c.comment) for c in source.columns)
    return TableDefinition(
        database_id=database_id, name=spec.target.table, table_type=_table_type(spec),
        owner=spec.owner or DEFAULT_OWNER,
        columns=columns, partition_keys=tuple((k.name, k.type, k.comment) for k in source.partition_keys),
        location=place.location, input_format=source.input_format, output_format=source.output_format,
        serde_lib=source.serde_lib, serde_params=tuple(sorted((k, v or "") for k, v in source.serde_params.items())),
        buckets=int(num_buckets.first() or -1), bucket_columns=tuple(b or "" for b in buckets),
        sort_columns=tuple((n or "", int(o)) for n, o in sorts),
        params=_with_defaults(metastore, spec, {}, [c[0] for c in columns], stats),
    )  # fmt: skip


def _table_type(spec: CreateTable) -> str:
    return "EXTERNAL_TABLE" if spec.external else "MANAGED_TABLE"


def _sort_prefixes_buckets(buckets: tuple[str, ...], sorts: tuple[tuple[str, int], ...]) -> bool:
    """``CreateTableDesc.toTable``: every bucket column is among the first len(buckets) sort columns."""
    if not buckets or len(sorts) < len(buckets):
        return False
    first = {name for name, _order in sorts[: len(buckets)]}
    return all(column in first for column in buckets)


def _with_defaults(
    metastore: Metastore, spec: CreateTable, params: dict[str, str], columns: list[str], stats: bool
) -> tuple[tuple[str, str], ...]:
    """The parameters Hive adds: EXTERNAL, bucketing_version (3.0+), the basic statistics of a new table."""
    version = metastore.schema.version
    params = normalized_transactional(params, version)
    if spec.external:
        params["EXTERNAL"] = "TRUE"
    if version.capabilities.writes_bucketing_version:  # Table.getEmptyTable: bucketing_version 2 on every new table
        params.setdefault("bucketing_version", "2")
    if stats:
        accurate: dict[str, Any] = {"BASIC_STATS": "true"}
        if version.capabilities.create_table_flags_column_statistics:
            accurate["COLUMN_STATS"] = dict.fromkeys(columns, "true")
        params.update(dict.fromkeys(STATS_KEYS, "0"))
        params["COLUMN_STATS_ACCURATE"] = json.dumps(accurate, separators=(",", ":"))
    return tuple(sorted(params.items()))


def creation_fingerprint(metastore: Metastore, spec: CreateTable) -> str:
    """What a CREATE TABLE plan depends on: the database's row, whether the name is taken, LIKE's source state."""
    database = Database.objects.on(metastore).filter(name=spec.target.database).values_list("id", "location_uri")
    taken = (
        Table.objects.using(metastore.alias)
        .filter(database__name=spec.target.database, name=spec.target.table)
        .values_list("id", flat=True)
    )
    source = None
    if spec.like is not None:
        try:
            source = read_table_state(metastore, spec.like).fingerprint
        except ApplicationError:
            source = "absent"
    payload = json.dumps([list(database), list(taken), source], default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def _preview(
    metastore: Metastore,
    spec: CreateTable,
    database_location: str,
    *,
    steps: list,
    blockers: list[Finding],
    warnings: list[Finding] = (),  # type: ignore[assignment]
    definition: TableDefinition | None = None,
    made: tuple[str, ...] = (),
    source: TableState | None = None,
) -> Preview:
    before = _absent(spec)
    after = _snapshot(spec, definition) if definition is not None and not blockers else before
    events = None
    if metastore.config.events and steps and not blockers:
        version = metastore.schema.version
        events = PlannedEvents(table_id=0, counts=((CREATE_TABLE, 1),), message_format=message_format(version))
    criteria = (RiskCriterion("table_created", f"{spec.target} is created at {definition.location}."),) if steps and \
        definition else ()  # fmt: skip
    return Preview(
        metastore=metastore.name,
        schema_version=str(metastore.schema.version),
        spec=spec,
        statement=spec.to_ddl(),
        state_fingerprint=creation_fingerprint(metastore, spec),
        before=before,
        after=after,
        steps=tuple(steps),
        moves=(),
        blockers=tuple(blockers),
        warnings=tuple(warnings),
        hive=metadata_only_hive(metastore),
        estimated_seconds=console_seconds(tuple(steps)),
        risk=risk_of(criteria),
        criteria=criteria,
        inverse={"created": {"location": definition.location if definition else None, "made": list(made)}},
        events=events,
        directories_created=made,
    )


def _absent(spec: CreateTable) -> TableSnapshot:
    return TableSnapshot(spec.target.database, spec.target.table, "", None, None, None, None, None, (), (), (), ())


def _snapshot(spec: CreateTable, table: TableDefinition) -> TableSnapshot:
    return TableSnapshot(
        database=spec.target.database, name=spec.target.table, type=table.table_type, owner=table.owner,
        location=table.location, input_format=table.input_format, output_format=table.output_format,
        serde_lib=table.serde_lib, columns=table.columns, partition_keys=tuple((n, t) for n, t, _c in
                                                                                  table.partition_keys),
        params=tuple(table.params), serde_params=tuple(table.serde_params),
    )  # fmt: skip
