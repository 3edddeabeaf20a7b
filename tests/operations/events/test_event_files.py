"""CREATE_TABLE and ADD_PARTITION messages list the data files as DbNotificationListener's FileIterator does, and the
partition objects of many events are read set-based with the same text one partition at a time gives."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connections
from django.test.utils import CaptureQueriesContext

from catalog_admin.hive.locations import normalize_location
from catalog_admin.models import Partition, Table
from catalog_admin.selectors.metastores import Metastore
from operations.events.files import partition_files, table_files
from operations.events.objects import TableObject, _storage_descriptors, read_partitions, read_table
from operations.services.alter import alter_preview_statement
from operations.services.revert import revert_preview
from tests.fixtures.operations import decode_event as decode
from tests.fixtures.operations import execute
from tests.fixtures.operations import notification_events as events

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("warehouse")]


def encoded(metastore: Metastore, location: str, name: str) -> str:
    """``ReplChangeManager.encodeFileUri`` without a checksum (local files have none) and without change management:
    the URI on 2.3, ``uri###`` on 3.1 and 4.0."""
    return f"{normalize_location(location)}/{name}" + ("###" if metastore.schema.version.major >= 3 else "")


def local(location: str) -> Path:
    return Path(normalize_location(location).removeprefix("file:"))


def orders_partitions(metastore: Metastore):
    return Partition.objects.using(metastore.alias).filter(table__name="orders", table__database__name="sales")


def test_a_revert_of_a_drop_lists_each_partitions_visible_files(metastore: Metastore) -> None:
    """ADD_PARTITION's partitionFiles: per partition its name and the files directly in its directory, without
    directories and names starting with '_' or '.' (FileIterator's VALID_FILES_FILTER), in name order."""
    # given
    day = orders_partitions(metastore).filter(name__startswith="dt=2024-01-02/").select_related("sd").order_by("name")
    first = local(day[0].sd.location)
    first.mkdir(parents=True, exist_ok=True)
    for name in ("b.orc", "a.orc", "_SUCCESS", ".a.orc.crc"):
        (first / name).write_bytes(b"x")
    (first / "nested").mkdir(exist_ok=True)
    (first / "nested" / "c.orc").write_bytes(b"x")
    expected = {
        p.name: sorted(encoded(metastore, p.sd.location, f.name) for f in local(p.sd.location).iterdir()
                       if f.is_file() and not f.name.startswith(("_", ".")))
        if local(p.sd.location).is_dir() else []
        for p in day
    }  # fmt: skip
    execution = execute(alter_preview_statement(metastore=metastore, statement=(
        "ALTER TABLE sales.orders DROP PARTITION (dt='2024-01-02')")))  # fmt: skip
    dropped = execution.actual_counts["NOTIFICATION_LOG"]["insert"]

    # when
    execute(revert_preview(execution=execution))

    # then
    message = decode(metastore, events(metastore)[dropped])
    listed = {entry["partitionName"]: entry["files"] for entry in message["partitionFiles"]}
    assert listed == expected
    names = [uri.removesuffix("###").rsplit("/", 1)[1] for uri in listed[day[0].name]]
    assert {"a.orc", "b.orc"} <= set(names) and names == sorted(names)
    assert not {"_SUCCESS", ".a.orc.crc", "nested", "c.orc"} & set(names)


def test_a_table_moved_to_another_database_lists_its_files_in_create_table(metastore: Metastore) -> None:
    """CREATE_TABLE's files: the files in the table's (new) directory, not those of its partition directories."""
    # given
    preview = alter_preview_statement(metastore=metastore, statement="ALTER TABLE sales.orders RENAME TO ops.moved")
    root = Table.objects.using(metastore.alias).get(name="orders", database__name="sales").sd.location
    (local(root) / "stray.txt").write_bytes(b"x")

    # when
    execute(preview)

    # then
    created = [e for e in events(metastore) if e.event_type == "CREATE_TABLE"]
    if metastore.schema.version.major < 3:
        assert created == []  # Hive 2.3 writes one ALTER_TABLE for any rename
        return
    new_root = Table.objects.using(metastore.alias).get(name="moved", database__name="ops").sd.location
    assert decode(metastore, created[0])["files"] == [encoded(metastore, new_root, "stray.txt")]


def test_hive_4_lists_no_files_of_external_tables_nor_of_transactional_partitions(
    metastore: Metastore, tmp_path: Path
) -> None:
    """4.0: ``isExternalTable(t) ? null : FileIterator`` and an empty list per partition of a transactional table;
    2.3 and 3.1 list them all."""
    # given
    (tmp_path / "part-0.orc").write_bytes(b"x")
    location = f"file:{tmp_path}"
    version = metastore.schema.version

    def table(**params: str) -> TableObject:
        return TableObject("db", "t", "MANAGED_TABLE", None, "{}", params, location)

    part = next(read_partitions(metastore.alias, version, read_table(metastore.alias, version, _orders_id(metastore)),
                                [orders_partitions(metastore).order_by("id").first().id]))  # fmt: skip
    part = type(part)(part.id, part.values, part.json, location)

    # when
    external = table_files(metastore.name, version, table(EXTERNAL="TRUE"))
    managed = table_files(metastore.name, version, table())
    acid = partition_files(metastore.name, version, table(transactional="true"), ["dt", "hour"], [part])

    # then
    listed = [encoded(metastore, location, "part-0.orc")]
    assert managed == listed
    if version.major >= 4:
        assert external == [] and acid == [{"partitionName": _name(part.values), "files": []}]
    else:
        assert external == listed and acid == [{"partitionName": _name(part.values), "files": listed}]


def test_partitions_read_together_are_the_objects_read_one_at_a_time(metastore: Metastore) -> None:
    """The chunked reader (id ranges, shared fragments) gives every partition the text it gets alone (an id list of
    one), with its storage descriptor as the table's reader encodes one; one query per table read, not per partition."""
    # given
    version, alias = metastore.schema.version, metastore.alias
    table = read_table(alias, version, _orders_id(metastore))
    rows = list(orders_partitions(metastore).order_by("id").values_list("id", "sd_id"))
    ids = [part_id for part_id, _sd in rows]

    # when
    with CaptureQueriesContext(connections[alias]) as queries:
        together = list(read_partitions(alias, version, table, ids))
    sparse = list(read_partitions(alias, version, table, ids[::3]))
    alone = [next(read_partitions(alias, version, table, [part_id])) for part_id in ids]

    # then
    assert len(together) == len(ids) > 3
    assert [p.json for p in together] == [p.json for p in alone]
    assert [p.json for p in sparse] == [p.json for p in alone[::3]]
    sd_text = _storage_descriptors(alias, version, [rows[0][1]])[rows[0][1]]
    assert f'"6":{{"rec":{sd_text}}}' in together[0].json
    assert len(queries) == 11  # one per metastore table read, whatever the number of partitions


def _orders_id(metastore: Metastore) -> int:
    return Table.objects.using(metastore.alias).get(name="orders", database__name="sales").id


def _name(values: list[str]) -> str:
    return f"dt={values[0]}/hour={values[1]}"
