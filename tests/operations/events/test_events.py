"""Notification events: every execution and revert writes the events Hive writes for the same statement, in the
metastore transaction, with ids from NOTIFICATION_SEQUENCE and SEQUENCE_TABLE, in the version's message format."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from django.db import connections
from django.test.utils import CaptureQueriesContext

from catalog_admin.models import NotificationSequence, Partition, Sequence
from catalog_admin.selectors.metastores import Metastore
from operations.ddl.parser import parse_alter
from operations.services.alter import alter_preview, alter_preview_statement
from operations.services.revert import revert_preview
from tests.fixtures.factories import table_row
from tests.fixtures.operations import decode_event as decode
from tests.fixtures.operations import execute
from tests.fixtures.operations import notification_events as events

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("warehouse")]


def thrift(text: str) -> dict[int, Any]:
    """A TJSONProtocol struct as ``{field id: value}`` (nested structs and lists decoded)."""
    return _struct(json.loads(text))


def _struct(node: dict[str, Any]) -> dict[int, Any]:
    return {int(fid): _value(*typed.items()) for fid, typed in node.items()}


def _value(item: Any) -> Any:
    kind, value = item[0] if isinstance(item, tuple) and isinstance(item[0], tuple) else item
    if kind == "rec":
        return _struct(value)
    if kind == "lst":
        element, _count, *items = value
        return [_struct(i) if element == "rec" else i for i in items]
    if kind == "map":
        return value[3]
    return value


def preview_of(metastore: Metastore, statement: str):
    return alter_preview_statement(metastore=metastore, statement=statement)


def test_a_table_rename_writes_one_alter_table_event_with_both_table_objects(metastore: Metastore) -> None:
    """Hive's alterTable notifies ALTER_TABLE once (its partitions go through msdb directly, without events)."""
    # given
    sequence = NotificationSequence.objects.using(metastore.alias).order_by("pk").first()
    first_event = sequence.next_event_id if sequence else 1
    preview = preview_of(metastore, "ALTER TABLE sales.orders RENAME TO sales.orders_renamed")

    # when
    execution = execute(preview)

    # then
    assert preview.events is not None and preview.events.counts == (("ALTER_TABLE", 1),)
    [event] = events(metastore)
    assert (event.event_id, event.event_type, event.db_name, event.table_name) == (
        first_event, "ALTER_TABLE", "sales", "orders_renamed")  # onAlterTable: named after the new table  # fmt: skip
    assert event.message_format == ("gzip(json-2.0)" if metastore.schema.version.major >= 4 else "json-0.2")
    message = decode(metastore, event)
    before, after = thrift(message["tableObjBeforeJson"]), thrift(message["tableObjAfterJson"])
    renamed = table_row(metastore, "sales", "orders_renamed")
    assert (before[1], before[2], after[1], after[2]) == ("orders", "sales", "orders_renamed", "sales")
    assert after[7][2] == renamed.sd.location != before[7][2]
    assert [c[1] for c in after[8]] == ["dt", "hour"]
    assert message["db"] == "sales" and message["table"] == "orders"
    assert abs(message["timestamp"] - event.event_time) <= 1
    assert execution.actual_counts["NOTIFICATION_LOG"] == {"insert": 1, "update": 0, "delete": 0}
    next_id = NotificationSequence.objects.using(metastore.alias).get().next_event_id
    assert next_id == first_event + 1


def test_event_ids_come_from_the_sequences_under_a_row_lock(metastore: Metastore) -> None:
    """EVENT_ID continues NOTIFICATION_SEQUENCE (read FOR UPDATE); NL_ID comes from SEQUENCE_TABLE's
    MNotificationLog row."""
    # given
    preview = preview_of(metastore, "ALTER TABLE sales.customers SET TBLPROPERTIES ('owner_team'='sales')")
    nl_name = "org.apache.hadoop.hive.metastore.model.MNotificationLog"

    # when
    with CaptureQueriesContext(connections[metastore.alias]) as queries:
        execute(preview)
        execute(preview_of(metastore, "ALTER TABLE sales.customers SET TBLPROPERTIES ('owner_team'='ops')"))

    # then
    first, second = events(metastore)
    assert (second.event_id - first.event_id, second.id - first.id) == (1, 1)
    assert Sequence.objects.using(metastore.alias).get(name=nl_name).next_val > second.id
    reads = [q["sql"] for q in queries if "NEXT_EVENT_ID" in q["sql"] and q["sql"].lstrip().startswith("SELECT")]
    if metastore.vendor != "sqlite":  # SQLite has no row locks: its one writer holds the whole database
        assert reads and all(sql.rstrip().endswith("FOR UPDATE") for sql in reads)
    if metastore.schema.version.major >= 3:
        assert first.catalog_name == "hive"


def test_dropping_partitions_writes_one_drop_partition_event_per_partition(metastore: Metastore) -> None:
    """drop_partitions_req notifies DROP_PARTITION for each partition, with its key values."""
    # given
    preview = preview_of(metastore, "ALTER TABLE sales.orders DROP PARTITION (dt='2024-01-02')")
    dropped = preview.scope.count

    # when
    with CaptureQueriesContext(connections[metastore.alias]) as queries:
        execute(preview)

    # then
    written = events(metastore)
    assert preview.events.counts == (("DROP_PARTITION", dropped),) and len(written) == dropped > 1
    inserts = [q for q in queries if q["sql"].startswith("INSERT INTO") and "NOTIFICATION_LOG" in q["sql"]]
    assert len(inserts) == 1  # set-based: one multi-row INSERT (per 1,000 events), not one per event
    assert {e.event_type for e in written} == {"DROP_PARTITION"}
    partitions = [decode(metastore, e)["partitions"] for e in written]
    assert all(len(p) == 1 and p[0]["dt"] == "2024-01-02" for p in partitions)
    assert len({p[0]["hour"] for p in partitions}) == dropped


def test_a_partition_rename_writes_alter_partition_and_its_revert_writes_it_back(metastore: Metastore) -> None:
    """RENAME TO PARTITION is alter_partition: one ALTER_PARTITION with both partition objects; the revert too."""
    # given
    statement = (
        "ALTER TABLE sales.orders PARTITION (dt='2024-01-01', hour=0) RENAME TO PARTITION (dt='2024-02-01', hour=0)"
    )
    execution = execute(preview_of(metastore, statement))

    # when
    revert = revert_preview(execution=execution)
    execute(revert)

    # then
    forward, back = events(metastore)
    assert (forward.event_type, back.event_type) == ("ALTER_PARTITION", "ALTER_PARTITION")
    message = decode(metastore, forward)
    assert message["keyValues"] == {"dt": "2024-01-01", "hour": "0"}
    before, after = thrift(message["partitionObjBeforeJson"]), thrift(message["partitionObjAfterJson"])
    assert (before[1], after[1]) == (["2024-01-01", "0"], ["2024-02-01", "0"])
    assert thrift(decode(metastore, back)["partitionObjAfterJson"])[1] == ["2024-01-01", "0"]
    assert revert.events.counts == (("ALTER_PARTITION", 1),)


def test_a_revert_of_a_drop_adds_the_partitions_back_in_one_add_partition_event(metastore: Metastore) -> None:
    """Putting dropped partitions back is add_partitions: one ADD_PARTITION carrying all of them."""
    # given
    execution = execute(preview_of(metastore, "ALTER TABLE sales.orders DROP PARTITION (dt='2024-01-02')"))
    dropped = execution.actual_counts["NOTIFICATION_LOG"]["insert"]

    # when
    execute(revert_preview(execution=execution))

    # then
    added = events(metastore)[dropped:]
    assert [e.event_type for e in added] == ["ADD_PARTITION"]
    message = decode(metastore, added[0])
    assert len(message["partitions"]) == len(message["partitionListJson"]) == dropped
    orders = Partition.objects.using(metastore.alias).filter(table__name="orders", table__database__name="sales")
    back = sorted(thrift(p)[1] for p in message["partitionListJson"])
    assert back == sorted([v["dt"], v["hour"]] for v in message["partitions"])
    assert orders.filter(name__startswith="dt=2024-01-02/").count() == dropped


def test_a_rename_into_another_database_writes_drop_create_and_add_partition(metastore: Metastore) -> None:
    """Hive 3.1+ splits it: DROP_TABLE from the old database, CREATE_TABLE in the new, ADD_PARTITION of all; Hive 2.3
    writes one ALTER_TABLE."""
    # given
    partitions = Partition.objects.using(metastore.alias).filter(table__name="orders", table__database__name="sales")
    count = partitions.count()

    # when
    execute(preview_of(metastore, "ALTER TABLE sales.orders RENAME TO ops.orders_moved"))

    # then
    written = events(metastore)
    if metastore.schema.version.major < 3:
        assert [(e.event_type, e.db_name, e.table_name) for e in written] == [("ALTER_TABLE", "ops", "orders_moved")]
        return
    assert [(e.event_type, e.db_name, e.table_name) for e in written] == [
        ("DROP_TABLE", "sales", "orders"),
        ("CREATE_TABLE", "ops", "orders_moved"),
        ("ADD_PARTITION", "ops", "orders_moved"),
    ]
    added = decode(metastore, written[2])
    declared = ["server", "servicePrincipal", "db", "table", "tableType", "tableObjJson", "timestamp", "partitions",
                "partitionListJson", "partitionFiles"]  # fmt: skip
    if metastore.schema.version.major >= 4:
        declared.insert(6, "locOwner")
    assert list(added) == declared
    assert len(added["partitionListJson"]) == count
    assert {thrift(p)[2] for p in added["partitionListJson"]} == {"ops"}


def test_events_are_part_of_the_bound_plan_and_can_be_turned_off(metastore: Metastore) -> None:
    """The preview lists the events (counts per type) and its fingerprint covers them; METASTORE_EVENTS_<NAME>=off
    plans none and writes none."""
    # given
    spec = parse_alter("ALTER TABLE sales.customers SET OWNER ROLE analysts", version=metastore.schema.version)
    quiet = replace(metastore, config=replace(metastore.config, events=False))

    # when
    with_events, without = alter_preview(metastore=metastore, spec=spec), alter_preview(metastore=quiet, spec=spec)
    execute(without)

    # then
    assert with_events.as_dict()["events"]["counts"] == {"ALTER_TABLE": 1}
    assert without.events is None and without.as_dict()["events"] is None
    assert with_events.fingerprint != without.fingerprint
    assert events(metastore) == []


def test_an_unpartitioned_table_moved_to_another_database_writes_no_add_partition(metastore: Metastore) -> None:
    """Hive adds ADD_PARTITION to DROP_TABLE and CREATE_TABLE only for a partitioned table ("if needed")."""
    # given
    preview = preview_of(metastore, "ALTER TABLE sales.customers RENAME TO ops.customers_moved")

    # when
    execute(preview)

    # then
    expected = ["ALTER_TABLE"] if metastore.schema.version.major < 3 else ["DROP_TABLE", "CREATE_TABLE"]
    assert [e.event_type for e in events(metastore)] == expected
    assert [t for t, _count in preview.events.counts] == expected
    if len(expected) == 2:
        created = thrift(decode(metastore, events(metastore)[1])["tableObjJson"])
        assert (created[1], created[2]) == ("customers_moved", "ops")
