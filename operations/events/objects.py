"""
The Thrift ``Table`` and ``Partition`` objects Hive's ``ObjectStore`` builds from the metastore rows
(``convertToTable``, ``convertToPart``, ``convertToStorageDescriptor``, ``convertToSerDeInfo`` in
``metastore/.../ObjectStore.java`` for 2.3, ``standalone-metastore/.../ObjectStore.java`` for 3.1 and 4.0), as
TJSONProtocol text. Partitions are read set-based: a few queries per batch of ids, never one per partition.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

from django.db.models import Model, Q

from catalog_admin.hive.versions import SchemaVersion
from catalog_admin.models import (
    BucketingColumn,
    Column,
    Database,
    DatabaseParam,
    Partition,
    PartitionKey,
    PartitionKeyValue,
    PartitionParam,
    SerDe,
    SerDeParam,
    SkewedColumnName,
    SortColumn,
    StorageDescriptor,
    StorageDescriptorParam,
    Table,
    TableParam,
)
from operations.events.thrift_json import (
    T,
    encode_fields,
    encode_string,
    encode_struct,
    encode_value,
    field,
    java_hash_order,
)

__all__ = (
    "DatabaseObject",
    "MetastoreRows",
    "PartitionObject",
    "TableObject",
    "read_database",
    "read_partitions",
    "read_table",
)

CHUNK = 5000  # partitions read together (an id list only where their ids are sparse; SQLite takes 32,766)
# PrincipalType (hive_metastore.thrift): USER = 1, ROLE = 2, GROUP = 3.
PRINCIPAL_TYPES = {"USER": 1, "ROLE": 2, "GROUP": 3}


@dataclass(frozen=True)
class TableObject:
    """One table as Hive's Thrift ``Table``: its database, name, type, TJSONProtocol text, and the parameters and
    location the listener reads from it (``MetaStoreUtils.isExternalTable``, ``TxnUtils.isTransactionalTable``,
    ``t.getSd().getLocation()``)."""

    database: str
    name: str
    table_type: str
    catalog: str | None
    json: str
    params: dict[str, str] = dataclass_field(default_factory=dict)
    location: str | None = None

    @property
    def is_external(self) -> bool:
        """``MetaStoreUtils.isExternalTable``: ``"TRUE".equalsIgnoreCase(params.get("EXTERNAL"))``."""
        return (self.params.get("EXTERNAL") or "").upper() == "TRUE"

    @property
    def is_transactional(self) -> bool:
        """``TxnUtils.isTransactionalTable``: ``"true".equalsIgnoreCase(params.get("transactional"))``."""
        return (self.params.get("transactional") or "").lower() == "true"


@dataclass(frozen=True)
class PartitionObject:
    """One partition as Hive's Thrift ``Partition``: its id, values (in key order), TJSONProtocol text and location."""

    id: int
    values: list[str]
    json: str
    location: str | None = None


@dataclass(frozen=True)
class DatabaseObject:
    """One database as Hive's Thrift ``Database``: its name, catalog and TJSONProtocol text."""

    name: str
    catalog: str | None
    json: str


# DatabaseType (hive_metastore.thrift, 4.0): NATIVE = 1, REMOTE = 2.
DATABASE_TYPES = {"NATIVE": 1, "REMOTE": 2}


class MetastoreRows:
    """The rows the readers encode, as the metastore ``alias`` holds them (ORM field names). A merge's prebuilt events
    give the readers another source for the rows it has not published yet (``operations.merge.event_rows``); the
    storage descriptors are always read from ``alias``."""

    def __init__(self, alias: str) -> None:
        self.alias = alias

    def database(self, database_id: int, columns: list[str]) -> dict[str, Any]:
        return Database.objects.using(self.alias).values(*columns).get(pk=database_id)

    def database_params(self, database_id: int) -> list[tuple[Any, ...]]:
        return list(DatabaseParam.objects.using(self.alias).filter(database_id=database_id).values_list("key", "value"))

    def table(self, table_id: int, columns: list[str]) -> dict[str, Any]:
        """``columns`` of the table's row, with ``database__name``, ``database__catalog_name`` and ``sd__location``."""
        return Table.objects.using(self.alias).values(*columns).get(pk=table_id)

    def partition_keys(self, table_id: int) -> list[tuple[Any, ...]]:
        """(name, type, comment) in key order."""
        keys = PartitionKey.objects.using(self.alias).filter(table_id=table_id).order_by("position")
        return list(keys.values_list("name", "type", "comment"))

    def table_params(self, table_id: int) -> list[tuple[Any, ...]]:
        return list(TableParam.objects.using(self.alias).filter(table_id=table_id).values_list("key", "value"))

    def partition_ids(self, table_id: int) -> list[int]:
        rows = Partition.objects.using(self.alias).filter(table_id=table_id).order_by("pk")
        return list(rows.values_list("pk", flat=True))

    def partitions(self, ids: list[int], columns: list[str]) -> list[tuple[Any, ...]]:
        """``columns`` of the partitions of ``ids`` (sorted), in id order."""
        wanted = set(ids)
        rows = Partition.objects.using(self.alias).filter(_among("pk", ids)).order_by("pk").values_list(*columns)
        return [row for row in rows if row[0] in wanted]

    def key_values(self, ids: list[int]) -> dict[Any, list[tuple[Any, ...]]]:
        """(value,) in key order, by partition."""
        rows = PartitionKeyValue.objects.using(self.alias).filter(_among("partition_id", ids))
        return _grouped(rows.order_by("partition_id", "position").values_list("partition_id", "value"))

    def partition_params(self, ids: list[int]) -> dict[Any, list[tuple[Any, ...]]]:
        """(key, value), by partition."""
        rows = PartitionParam.objects.using(self.alias).filter(_among("partition_id", ids))
        return _grouped(rows.values_list("partition_id", "key", "value"))


def read_database(
    alias: str, version: SchemaVersion, database_id: int, rows: MetastoreRows | None = None
) -> DatabaseObject:
    """``ObjectStore.getJDODatabase``'s ``Database``: name (1), description (2), location (3), parameters (4), owner
    (6, 7), and from 3.x the catalog (8); from 4.0 the creation time (9), managed location (10, when set) and type
    (11). Privileges (5) are not set by ``getDatabase``."""
    columns = ["name", "description", "location_uri", "owner_name", "owner_type"]
    if version.capabilities.thrift_objects_of_3:
        columns += ["catalog_name"]
    if version.capabilities.thrift_objects_of_4:
        columns += ["create_time", "managed_location_uri", "type"]
    rows = rows or MetastoreRows(alias)
    row = rows.database(database_id, columns)
    params = _params(rows.database_params(database_id))
    owner_type = PRINCIPAL_TYPES.get(row["owner_type"]) if row["owner_type"] else None
    fields: dict[int, T | None] = {
        1: field("str", row["name"]),
        2: field("str", row["description"]),
        3: field("str", row["location_uri"]),
        4: T("map", params),
        6: field("str", row["owner_name"]),
        7: field("i32", owner_type),
    }
    catalog = None
    if version.capabilities.thrift_objects_of_3:
        catalog = row["catalog_name"] or "hive"
        fields[8] = T("str", catalog)
    if version.capabilities.thrift_objects_of_4:
        fields[9] = field("i32", row["create_time"])
        fields[10] = field("str", row["managed_location_uri"])
        fields[11] = field("i32", DATABASE_TYPES.get(row["type"] or "NATIVE"))
    return DatabaseObject(row["name"], catalog, encode_struct(fields))


def read_table(alias: str, version: SchemaVersion, table_id: int, rows: MetastoreRows | None = None) -> TableObject:
    """``convertToTable``: the table's row, storage descriptor, partition keys and parameters."""
    columns = ["name", "owner", "create_time", "last_access_time", "retention", "sd_id", "type",
               "view_original_text", "view_expanded_text", "is_rewrite_enabled", "database__name"]  # fmt: skip
    if version.capabilities.thrift_objects_of_3:
        columns += ["owner_type", "database__catalog_name"]
    if version.capabilities.thrift_objects_of_4:
        columns += ["write_id"]
    rows = rows or MetastoreRows(alias)
    row = rows.table(table_id, [*columns, "sd__location"])
    sd = _storage_descriptors(alias, version, [row["sd_id"]]).get(row["sd_id"])
    keys = rows.partition_keys(table_id)
    params = _params(rows.table_params(table_id))
    fields: dict[int, T | None] = {
        1: field("str", row["name"]),
        2: field("str", row["database__name"]),
        3: field("str", row["owner"]),
        4: T("i32", int(row["create_time"])),
        5: T("i32", int(row["last_access_time"])),
        6: T("i32", int(row["retention"])),
        7: None if sd is None else T("rec", sd, raw=True),
        8: T("lst", [_field_schema(*key) for key in keys], "rec"),
        9: T("map", params),
        10: field("str", row["view_original_text"]),
        11: field("str", row["view_expanded_text"]),
        12: field("str", row["type"]),
        15: T("tf", bool(row["is_rewrite_enabled"])),
    }
    catalog = None
    if version.capabilities.thrift_objects_of_3:
        catalog = row["database__catalog_name"] or "hive"
        fields[17] = T("str", catalog)
        # convertToTable: "Before the ownerType exists in an old Hive schema, USER was the default type for owner."
        fields[18] = T("i32", PRINCIPAL_TYPES.get(row["owner_type"] or "USER", 1))
    if version.capabilities.thrift_objects_of_4:
        fields[19] = field("i64", row["write_id"])
        fields[25] = T("i64", table_id)  # t.setId(mtbl.getId())
    table_type, text = row["type"] or "", encode_struct(fields)
    return TableObject(row["database__name"], row["name"], table_type, catalog, text, params, row["sd__location"])


def read_partitions(
    alias: str, version: SchemaVersion, table: TableObject, ids: Iterable[int], rows: MetastoreRows | None = None
) -> Iterator[PartitionObject]:
    """``convertToPart`` for each partition of ``ids`` (in id order), read in chunks of :data:`CHUNK` partitions with
    one query per metastore table read (eleven), whatever the chunk's size: no query per partition."""
    ordered = sorted(set(ids))
    cache, rows = _EncodingCache(), rows or MetastoreRows(alias)
    for start in range(0, len(ordered), CHUNK):
        yield from _partition_chunk(alias, version, table, ordered[start : start + CHUNK], cache, rows)


def _partition_chunk(
    alias: str,
    version: SchemaVersion,
    table: TableObject,
    ids: list[int],
    cache: _EncodingCache,
    source: MetastoreRows,
) -> Iterator[PartitionObject]:
    """One chunk; each partition's text is the Thrift ``Partition`` fields in id order, as ``encode_struct`` writes
    them: values (1), database and table (2, 3), times (4, 5), storage descriptor (6, when set), parameters (7),
    catalog (9, 3.x) and write id (10, 4.x, when set)."""
    write_ids = ["write_id"] if version.capabilities.thrift_objects_of_4 else []
    rows = source.partitions(ids, ["id", "create_time", "last_access_time", "sd_id", *write_ids])
    sd_rows = _sd_rows(alias, version, [row[3] for row in rows if row[3]], cached_columns=cache.columns)
    sds = _encode_sds(version, sd_rows, cache)
    locations = {sd["id"]: sd["location"] for sd in sd_rows.sds}
    values, params = source.key_values(ids), source.partition_params(ids)
    names = f'"2":{{"str":{encode_string(table.database)}}},"3":{{"str":{encode_string(table.name)}}}'
    with_catalog = version.capabilities.thrift_objects_of_3 and table.catalog is not None
    catalog = f',"9":{{"str":{encode_string(table.catalog)}}}' if with_catalog else ""
    for part_id, create_time, last_access_time, sd_id, *write_id in rows:
        part_values = [v or "" for (v,) in values.get(part_id, [])]
        sd = sds.get(sd_id)
        sd_field = "" if sd is None else f'"6":{{"rec":{sd}}},'
        write_id_field = f',"10":{{"i64":{int(write_id[0])}}}' if write_id and write_id[0] is not None else ""
        text = (
            f'{{"1":{{"lst":{cache.values(part_values)}}},{names},"4":{{"i32":{int(create_time)}}},'
            f'"5":{{"i32":{int(last_access_time)}}},{sd_field}"7":{{"map":{cache.params(params.get(part_id, []))}}}'
            f"{catalog}{write_id_field}}}"
        )
        yield PartitionObject(part_id, part_values, text, locations.get(sd_id))


class _EncodingCache:
    """Encoded fragments partitions share (column lists, SerDes, the storage descriptor's fields after the location,
    parameter maps of the same keys): each encoded once per read, so a partition costs a few string joins."""

    def __init__(self) -> None:
        self.columns: dict[int, str] = {}
        self.serdes: dict[tuple[Any, ...], str] = {}
        self.tails: dict[tuple[Any, ...], str] = {}
        self.key_orders: dict[tuple[str, ...], list[str]] = {}

    def values(self, values: list[str]) -> str:
        return encode_value(T("lst", values, "str"))

    def params(self, rows: Iterable[tuple[Any, ...]]) -> str:
        """``convertMap`` in Java's ``HashMap`` order (the order of a set of keys computed once)."""
        params = _params(rows)
        keys = tuple(params)
        order = self.key_orders.get(keys)
        if order is None:
            order = self.key_orders[keys] = java_hash_order(list(keys))
        entries = ",".join(f"{encode_string(k)}:{encode_string(params[k])}" for k in order)
        return f'["str","str",{len(order)},{{{entries}}}]'


def _among(field_name: str, ids: list[int]) -> Q:
    """``field_name`` is one of ``ids`` (sorted): a range of the index when the ids are dense (Hive allocates a table's
    partitions, descriptors and SerDes in runs), the rows outside ``ids`` dropped by the caller; a list otherwise."""
    if ids and ids[-1] - ids[0] < 2 * len(ids):
        return Q(**{f"{field_name}__gte": ids[0], f"{field_name}__lte": ids[-1]})
    return Q(**{f"{field_name}__in": ids})


@dataclass
class _SdRows:
    """The rows behind some storage descriptors: SDS, their columns, SerDes and the lists and maps they own."""

    sds: list[dict[str, Any]]
    columns: dict[Any, list[tuple[Any, ...]]]
    serdes: dict[int, dict[str, Any]]
    serde_params: dict[Any, list[tuple[Any, ...]]]
    sd_params: dict[Any, list[tuple[Any, ...]]]
    buckets: dict[Any, list[tuple[Any, ...]]]
    sorts: dict[Any, list[tuple[Any, ...]]]
    skewed: dict[Any, list[tuple[Any, ...]]]


def _sd_rows(alias: str, version: SchemaVersion, sd_ids: list[int], cached_columns: Iterable[int] = ()) -> _SdRows:
    """Eight queries for any number of storage descriptors (ids filtered by :func:`_among`)."""
    ids = sorted(set(sd_ids))
    wanted = set(ids)
    sds = [sd for sd in StorageDescriptor.objects.using(alias).filter(_among("pk", ids)).values() if sd["id"] in wanted]
    cds = sorted({sd["cd_id"] for sd in sds if sd["cd_id"]} - set(cached_columns))
    serde_ids = sorted({sd["serde_id"] for sd in sds if sd["serde_id"]})
    wanted_serdes = set(serde_ids)
    by_sd = _among("sd_id", ids)

    def owned(model: type[Model], *fields: str) -> dict[Any, list[tuple[Any, ...]]]:
        rows = model.objects.using(alias).filter(by_sd)
        rows = rows.order_by("sd_id", "position") if "position" in {f.name for f in model._meta.fields} else rows
        return {sd: r for sd, r in _grouped(rows.values_list("sd_id", *fields)).items() if sd in wanted}

    of_3 = version.capabilities.thrift_objects_of_3
    extra = ["description", "serializer_class", "deserializer_class", "serde_type"] if of_3 else []
    serdes = SerDe.objects.using(alias).filter(_among("pk", serde_ids)).values("id", "name", "slib", *extra)
    serde_params = SerDeParam.objects.using(alias).filter(_among("serde_id", serde_ids))
    return _SdRows(
        sds=sds,
        columns=_grouped(
            Column.objects.using(alias)
            .filter(cd_id__in=cds)
            .order_by("cd_id", "position")
            .values_list("cd_id", "name", "type", "comment")
        )
        if cds
        else {},  # fmt: skip
        serdes={row["id"]: row for row in serdes if row["id"] in wanted_serdes},
        serde_params=_grouped(serde_params.values_list("serde_id", "key", "value")),
        sd_params=owned(StorageDescriptorParam, "key", "value"),
        buckets=owned(BucketingColumn, "name"),
        sorts=owned(SortColumn, "name", "order"),
        skewed=owned(SkewedColumnName, "name"),
    )


def _storage_descriptors(alias: str, version: SchemaVersion, sd_ids: list[int]) -> dict[int, str]:
    """``convertToStorageDescriptor`` for each of ``sd_ids``: columns, formats, SerDe, bucketing, sorting, skew."""
    if not sd_ids:
        return {}
    return _encode_sds(version, _sd_rows(alias, version, sd_ids), _EncodingCache())


def _encode_sds(version: SchemaVersion, rows: _SdRows, cache: _EncodingCache) -> dict[int, str]:
    """Each storage descriptor as TJSONProtocol text: the column list (field 1) by descriptor and everything after the
    location (fields 3–12) by content are encoded once and shared."""
    for cd, cols in rows.columns.items():
        cache.columns[cd] = encode_value(T("lst", [_field_schema(*c) for c in cols], "rec"))
    empty_columns = encode_value(T("lst", [], "rec"))
    result = {}
    for sd in rows.sds:
        sid = sd["id"]
        serde = _serde_text(version, rows, sd["serde_id"], cache)
        tail_key = (
            sd["input_format"], sd["output_format"], bool(sd["is_compressed"]), int(sd["num_buckets"]), serde,
            tuple(rows.buckets.get(sid, ())), tuple(rows.sorts.get(sid, ())),
            tuple(sorted(rows.sd_params.get(sid, ()))), tuple(rows.skewed.get(sid, ())),
            bool(sd["is_stored_as_subdirectories"]),
        )  # fmt: skip
        tail = cache.tails.get(tail_key)
        if tail is None:
            tail = cache.tails[tail_key] = _sd_tail(rows, sd, serde)
        columns = cache.columns.get(sd["cd_id"], empty_columns)
        location = f',"2":{{"str":{encode_string(sd["location"])}}}' if sd["location"] is not None else ""
        result[sid] = f'{{"1":{{"lst":{columns}}}{location},{tail}}}'
    return result


def _sd_tail(rows: _SdRows, sd: dict[str, Any], serde: str | None) -> str:
    """Fields 3–12 of a storage descriptor (formats, SerDe, buckets, sort columns, parameters, skew)."""
    sid = sd["id"]
    skewed = [n for (n,) in rows.skewed.get(sid, [])]
    skew = {1: T("lst", skewed, "str"), 2: T("lst", [], "lst"), 3: T("map", {}, "lst")}
    return encode_fields({
        3: field("str", sd["input_format"]),
        4: field("str", sd["output_format"]),
        5: T("tf", bool(sd["is_compressed"])),
        6: T("i32", int(sd["num_buckets"])),
        7: None if serde is None else T("rec", serde, raw=True),
        8: T("lst", [n for (n,) in rows.buckets.get(sid, [])], "str"),
        9: T("lst", [{1: T("str", n), 2: T("i32", int(o))} for n, o in rows.sorts.get(sid, [])], "rec"),
        10: T("map", _params(rows.sd_params.get(sid, []))),
        11: T("rec", skew),
        12: T("tf", bool(sd["is_stored_as_subdirectories"])),
    })  # fmt: skip


def _serde_text(version: SchemaVersion, rows: _SdRows, serde_id: int | None, cache: _EncodingCache) -> str | None:
    """``convertToSerDeInfo``: name, library and parameters (3.x: description, classes and type when set)."""
    row = rows.serdes.get(serde_id) if serde_id else None
    if row is None:
        return None
    params = tuple(sorted(rows.serde_params.get(serde_id, ())))
    key = (*(v for k, v in row.items() if k != "id"), params)
    text = cache.serdes.get(key)
    if text is None:
        fields = {1: field("str", row["name"]), 2: field("str", row["slib"]), 3: T("map", _params(params))}
        if version.capabilities.thrift_objects_of_3:
            fields |= {4: field("str", row["description"]), 5: field("str", row["serializer_class"]),
                       6: field("str", row["deserializer_class"]), 7: field("i32", row["serde_type"])}  # fmt: skip
        text = cache.serdes[key] = encode_struct(fields)
    return text


def _field_schema(name: str, type_: str | None, comment: str | None) -> dict[int, T | None]:
    return {1: T("str", name), 2: field("str", type_), 3: field("str", comment)}


def _params(rows: Iterable[tuple[Any, ...]]) -> dict[str, str]:
    """``convertMap``: parameters with their values (Hive's JDO maps skip nothing; a NULL value becomes "")."""
    return {key: value if value is not None else "" for key, value in sorted(rows)}


def _grouped(rows: Iterable[tuple[Any, ...]]) -> dict[Any, list[tuple[Any, ...]]]:
    grouped: dict[Any, list[tuple[Any, ...]]] = defaultdict(list)
    for owner, *rest in rows:
        grouped[owner].append(tuple(rest))
    return grouped
