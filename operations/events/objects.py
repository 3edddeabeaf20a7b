"""
The Thrift ``Table`` and ``Partition`` objects Hive's ``ObjectStore`` builds from the metastore rows
(``convertToTable``, ``convertToPart``, ``convertToStorageDescriptor``, ``convertToSerDeInfo`` in
``metastore/.../ObjectStore.java`` for 2.3, ``standalone-metastore/.../ObjectStore.java`` for 3.1 and 4.0), as
TJSONProtocol text. Partitions are read set-based: a few queries per batch of ids, never one per partition.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from catalog_admin.hive.versions import SchemaVersion
from catalog_admin.models import (
    BucketingColumn,
    Column,
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
from operations.events.thrift_json import T, at_least, encode_struct, encode_value, field

__all__ = ("PartitionObject", "TableObject", "read_partitions", "read_table")

BATCH = 900  # ids per IN list (SQLite's limit is 999)
# PrincipalType (hive_metastore.thrift): USER = 1, ROLE = 2, GROUP = 3.
PRINCIPAL_TYPES = {"USER": 1, "ROLE": 2, "GROUP": 3}


class TableObject:
    """One table as Hive's Thrift ``Table``: its database, name, type and TJSONProtocol text."""

    def __init__(self, database: str, name: str, table_type: str, catalog: str | None, json_text: str) -> None:
        self.database, self.name, self.table_type, self.catalog, self.json = (
            database,
            name,
            table_type,
            catalog,
            json_text,
        )


class PartitionObject:
    """One partition as Hive's Thrift ``Partition``: its id, values (in key order) and TJSONProtocol text."""

    def __init__(self, part_id: int, values: list[str], json_text: str) -> None:
        self.id, self.values, self.json = part_id, values, json_text


def read_table(alias: str, version: SchemaVersion, table_id: int) -> TableObject:
    """``convertToTable``: the table's row, storage descriptor, partition keys and parameters."""
    columns = ["name", "owner", "create_time", "last_access_time", "retention", "sd_id", "type",
               "view_original_text", "view_expanded_text", "is_rewrite_enabled", "database__name"]  # fmt: skip
    if at_least(version, 3):
        columns += ["owner_type", "database__catalog_name"]
    if at_least(version, 4):
        columns += ["write_id"]
    row = Table.objects.using(alias).values(*columns).get(pk=table_id)
    sd = _storage_descriptors(alias, version, [row["sd_id"]]).get(row["sd_id"])
    keys = PartitionKey.objects.using(alias).filter(table_id=table_id).order_by("position")
    params = TableParam.objects.using(alias).filter(table_id=table_id).values_list("key", "value")
    fields: dict[int, T | None] = {
        1: field("str", row["name"]),
        2: field("str", row["database__name"]),
        3: field("str", row["owner"]),
        4: T("i32", int(row["create_time"])),
        5: T("i32", int(row["last_access_time"])),
        6: T("i32", int(row["retention"])),
        7: field("rec", sd),
        8: T("lst", [_field_schema(k.name, k.type, k.comment) for k in keys], "rec"),
        9: T("map", _params(params)),
        10: field("str", row["view_original_text"]),
        11: field("str", row["view_expanded_text"]),
        12: field("str", row["type"]),
        15: T("tf", bool(row["is_rewrite_enabled"])),
    }
    catalog = None
    if at_least(version, 3):
        catalog = row["database__catalog_name"] or "hive"
        fields[17] = T("str", catalog)
        # convertToTable: "Before the ownerType exists in an old Hive schema, USER was the default type for owner."
        fields[18] = T("i32", PRINCIPAL_TYPES.get(row["owner_type"] or "USER", 1))
    if at_least(version, 4):
        fields[19] = field("i64", row["write_id"])
        fields[25] = T("i64", table_id)  # t.setId(mtbl.getId())
    return TableObject(row["database__name"], row["name"], row["type"] or "", catalog, encode_struct(fields))


def read_partitions(
    alias: str, version: SchemaVersion, table: TableObject, ids: Iterable[int]
) -> Iterator[PartitionObject]:
    """``convertToPart`` for each partition of ``ids`` (in id order), read in batches."""
    ordered = sorted(set(ids))
    for start in range(0, len(ordered), BATCH):
        yield from _partition_batch(alias, version, table, ordered[start : start + BATCH])


def _partition_batch(
    alias: str, version: SchemaVersion, table: TableObject, ids: list[int]
) -> Iterator[PartitionObject]:
    columns = ["id", "create_time", "last_access_time", "sd_id"] + (["write_id"] if at_least(version, 4) else [])
    rows = list(Partition.objects.using(alias).filter(pk__in=ids).order_by("pk").values(*columns))
    sds = _storage_descriptors(alias, version, [r["sd_id"] for r in rows if r["sd_id"]])
    values = _grouped(PartitionKeyValue.objects.using(alias).filter(partition_id__in=ids).order_by("position")
                      .values_list("partition_id", "value"))  # fmt: skip
    params = _grouped(
        PartitionParam.objects.using(alias).filter(partition_id__in=ids).values_list("partition_id", "key", "value")
    )
    for row in rows:
        part_values = [v or "" for (v,) in values.get(row["id"], [])]
        fields: dict[int, T | None] = {
            1: T("lst", part_values, "str"),
            2: T("str", table.database),
            3: T("str", table.name),
            4: T("i32", int(row["create_time"])),
            5: T("i32", int(row["last_access_time"])),
            6: field("rec", sds.get(row["sd_id"])),
            7: T("map", _params(params.get(row["id"], []))),
        }
        if at_least(version, 3):
            fields[9] = field("str", table.catalog)
        if at_least(version, 4):
            fields[10] = field("i64", row["write_id"])
        yield PartitionObject(row["id"], part_values, encode_struct(fields))


def _storage_descriptors(alias: str, version: SchemaVersion, sd_ids: list[int]) -> dict[int, dict[int, T | None]]:
    """``convertToStorageDescriptor`` for each of ``sd_ids``: columns, formats, SerDe, bucketing, sorting, skew."""
    if not sd_ids:
        return {}
    sds = list(StorageDescriptor.objects.using(alias).filter(pk__in=sd_ids).values())
    cds = {sd["cd_id"] for sd in sds if sd["cd_id"]}
    serde_ids = {sd["serde_id"] for sd in sds if sd["serde_id"]}
    columns = _grouped(Column.objects.using(alias).filter(cd_id__in=cds).order_by("position")
                       .values_list("cd_id", "name", "type", "comment"))  # fmt: skip
    serdes = _serdes(alias, version, serde_ids)
    sd_params = _grouped(
        StorageDescriptorParam.objects.using(alias).filter(sd_id__in=sd_ids).values_list("sd_id", "key", "value")
    )
    buckets = _grouped(BucketingColumn.objects.using(alias).filter(sd_id__in=sd_ids).order_by("position")
                       .values_list("sd_id", "name"))  # fmt: skip
    sorts = _grouped(SortColumn.objects.using(alias).filter(sd_id__in=sd_ids).order_by("position")
                     .values_list("sd_id", "name", "order"))  # fmt: skip
    skewed = _grouped(SkewedColumnName.objects.using(alias).filter(sd_id__in=sd_ids).order_by("position")
                      .values_list("sd_id", "name"))  # fmt: skip
    column_lists = {cd: _raw(T("lst", [_field_schema(*c) for c in cols], "rec")) for cd, cols in columns.items()}
    empty_columns = _raw(T("lst", [], "rec"))
    result = {}
    for sd in sds:
        sid = sd["id"]
        skew = {1: T("lst", [n for (n,) in skewed.get(sid, [])], "str"), 2: T("lst", [], "lst"), 3: T("map", {}, "lst")}
        result[sid] = {
            1: column_lists.get(sd["cd_id"], empty_columns),
            2: field("str", sd["location"]),
            3: field("str", sd["input_format"]),
            4: field("str", sd["output_format"]),
            5: T("tf", bool(sd["is_compressed"])),
            6: T("i32", int(sd["num_buckets"])),
            7: serdes.get(sd["serde_id"]),
            8: T("lst", [n for (n,) in buckets.get(sid, [])], "str"),
            9: T("lst", [{1: T("str", n), 2: T("i32", int(o))} for n, o in sorts.get(sid, [])], "rec"),
            10: T("map", _params(sd_params.get(sid, []))),
            11: T("rec", skew),
            12: T("tf", bool(sd["is_stored_as_subdirectories"])),
        }
    return result


def _raw(value: T) -> T:
    """``value`` encoded once, to be shared by every object that holds it."""
    return T(value.type, encode_value(value), value.element, raw=True)


def _serdes(alias: str, version: SchemaVersion, serde_ids: set[int]) -> dict[int, T]:
    """``convertToSerDeInfo``: name, library and parameters (3.x: description, classes and type when set)."""
    extra = ["description", "serializer_class", "deserializer_class", "serde_type"] if at_least(version, 3) else []
    rows = SerDe.objects.using(alias).filter(pk__in=serde_ids).values("id", "name", "slib", *extra)
    params = _grouped(
        SerDeParam.objects.using(alias).filter(serde_id__in=serde_ids).values_list("serde_id", "key", "value")
    )
    result = {}
    for row in rows:
        fields = {
            1: field("str", row["name"]),
            2: field("str", row["slib"]),
            3: T("map", _params(params.get(row["id"], []))),
        }
        if extra:
            fields |= {4: field("str", row["description"]), 5: field("str", row["serializer_class"]),
                       6: field("str", row["deserializer_class"]), 7: field("i32", row["serde_type"])}  # fmt: skip
        result[row["id"]] = _raw(T("rec", fields))
    return result


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
