"""
Issue 12's witness for notification events: Hive 2.3's own code reads what the console wrote.

For each change on one of the ``spark_twins`` (console copy, ``spark_pg``, official 2.3.0 schema):

* Hive's embedded metastore client (``IMetaStoreClient.getNextNotification``, Spark's Hive 2.3 JVM) returns the
  console's events with their ids, types, database, table and format;
* Hive's own deserializer (``MessageFactory.getInstance().getDeserializer()``: ``JSONMessageDeserializer``) decodes
  each message, and the Thrift ``Table`` / ``Partition`` objects in it *equal* (Thrift ``equals``) those Hive's own
  ObjectStore returns for the same rows (``getTable`` / ``getPartition`` before and after the change), which is
  what ``DbNotificationListener`` would have put in the message;
* Hive's own factory (``buildAlterTableMessage`` …) given those objects builds the same message the console wrote.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from operations.models import Execution
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.revert import revert_preview

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True, databases=["default", "spark_pg"])]


class HiveEvents:
    """Hive 2.3's metastore client and message factory in Spark's JVM."""

    def __init__(self, spark: Any) -> None:
        jvm = spark._jvm
        state = spark._jsparkSession.sharedState().externalCatalog().unwrapped().client().state()
        self.client = jvm.org.apache.hadoop.hive.ql.metadata.Hive.get(state.getConf()).getMSC()
        self.factory = jvm.org.apache.hadoop.hive.metastore.messaging.MessageFactory.getInstance()
        self.deserializer = self.factory.getDeserializer()

    def last_id(self) -> int:
        return self.client.getCurrentNotificationEventId().getEventId()

    def since(self, event_id: int) -> list[Any]:
        return list(self.client.getNextNotification(event_id, 1000, None).getEvents())

    def table(self, database: str, name: str) -> Any:
        return self.client.getTable(database, name)

    def partition(self, database: str, name: str, values: list[str]) -> Any:
        return self.client.getPartition(database, name, values)


@pytest.fixture
def hive_events(spark) -> HiveEvents:
    return HiveEvents(spark)


def execute(metastore, statement: str) -> Execution:
    preview = alter_preview_statement(metastore=metastore, statement=statement)
    assert not preview.blockers, preview.blockers
    execution = alter_execute(preview=preview, actor="spark-witness", source=Execution.Source.CLI, reason="witness")
    assert execution.state == Execution.State.SUCCEEDED
    return execution


def java_items(iterable: Any) -> list[Any]:
    """The items of a Java ``Iterable`` (py4j iterates only Java collections, not Guava's transformed views)."""
    iterator, items = iterable.iterator(), []
    while iterator.hasNext():
        items.append(iterator.next())
    return items


def same_json(a: str, b: str) -> None:
    """Both messages parsed, their Thrift objects too, without the timestamps (written a moment apart). A map's
    entries may come in another order (Java's HashMap order, which the console follows only approximately)."""
    left, right = json.loads(a), json.loads(b)
    for message in (left, right):
        message.pop("timestamp", None)
        for key, value in message.items():
            if key.endswith("Json") and isinstance(value, str):
                message[key] = json.loads(value)
    assert left == right


def test_a_rename_is_one_alter_table_event_hive_decodes_into_its_own_table_objects(
    spark_metastore, spark_twins, hive_events
):
    """Hive reads the console's ALTER_TABLE through getNextNotification and decodes the very objects it stores."""
    # given
    console = spark_twins("events_rename").console
    before, since = hive_events.table(console.database, console.name), hive_events.last_id()

    # when
    execute(spark_metastore, f"ALTER TABLE {console.qualified} RENAME TO {console.database}.events_renamed")

    # then
    [event] = hive_events.since(since)
    assert (event.getEventId(), event.getEventType(), event.getDbName(), event.getTableName()) == (
        since + 1, "ALTER_TABLE", console.database, "events_renamed")  # onAlterTable: the new name  # fmt: skip
    assert event.getMessageFormat() == hive_events.factory.getMessageFormat() == "json-0.2"
    message = hive_events.deserializer.getAlterTableMessage(event.getMessage())
    after = hive_events.table(console.database, "events_renamed")
    assert message.getTableObjBefore().equals(before), f"{message.getTableObjBefore()}\n!=\n{before}"
    assert message.getTableObjAfter().equals(after), f"{message.getTableObjAfter()}\n!=\n{after}"
    hive = hive_events.factory.buildAlterTableMessage(before, after).toString()
    same_json(event.getMessage(), hive)
    assert abs(message.getTimestamp() - event.getEventTime()) <= 1


def test_a_property_change_carries_the_new_parameters(spark_metastore, spark_twins, hive_events):
    """SET TBLPROPERTIES: the decoded after-object has the new parameter, the before-object not."""
    # given
    console = spark_twins("events_props").console
    before, since = hive_events.table(console.database, console.name), hive_events.last_id()

    # when
    execute(spark_metastore, f"ALTER TABLE {console.qualified} SET TBLPROPERTIES ('owner_team'='witness')")

    # then
    [event] = hive_events.since(since)
    message = hive_events.deserializer.getAlterTableMessage(event.getMessage())
    after = hive_events.table(console.database, console.name)
    assert message.getTableObjAfter().equals(after) and message.getTableObjBefore().equals(before)
    assert after.getParameters().get("owner_team") == "witness"
    assert before.getParameters().get("owner_team") is None


def test_a_partition_rename_is_one_alter_partition_event_with_hives_partition_objects(
    spark_metastore, spark_twins, hive_events
):
    """RENAME TO PARTITION: one ALTER_PARTITION; Hive decodes the partition before and after as it stores them."""
    # given
    console = spark_twins("events_part").console
    table = hive_events.table(console.database, console.name)
    before = hive_events.partition(console.database, console.name, ["2024-01-02", "1"])
    since = hive_events.last_id()

    # when
    execute(
        spark_metastore,
        f"ALTER TABLE {console.qualified} PARTITION (dt='2024-01-02', hour=1) "
        "RENAME TO PARTITION (dt='2024-02-02', hour=1)",
    )

    # then
    [event] = hive_events.since(since)
    assert event.getEventType() == "ALTER_PARTITION"
    message = hive_events.deserializer.getAlterPartitionMessage(event.getMessage())
    after = hive_events.partition(console.database, console.name, ["2024-02-02", "1"])
    assert dict(message.getKeyValues()) == {"dt": "2024-01-02", "hour": "1"}
    assert message.getPtnObjBefore().equals(before), f"{message.getPtnObjBefore()}\n!=\n{before}"
    assert message.getPtnObjAfter().equals(after), f"{message.getPtnObjAfter()}\n!=\n{after}"
    assert message.getTableObj().equals(hive_events.table(console.database, console.name))
    hive = hive_events.factory.buildAlterPartitionMessage(table, before, after).toString()
    same_json(event.getMessage(), hive)


def test_a_drop_is_one_drop_partition_event_per_partition(spark_metastore, spark_twins, hive_events):
    """DROP PARTITION (dt='2024-01-01'): one DROP_PARTITION per partition, each with its key values."""
    # given
    console = spark_twins("events_drop").console
    table, since = hive_events.table(console.database, console.name), hive_events.last_id()

    # when
    execute(spark_metastore, f"ALTER TABLE {console.qualified} DROP PARTITION (dt='2024-01-01')")

    # then
    events = hive_events.since(since)
    assert [e.getEventType() for e in events] == ["DROP_PARTITION", "DROP_PARTITION"]
    messages = [hive_events.deserializer.getDropPartitionMessage(e.getMessage()) for e in events]
    dropped = sorted((dict(p) for m in messages for p in m.getPartitions()), key=repr)
    assert dropped == [{"dt": "2024-01-01", "hour": "1"}, {"dt": "2024-01-01", "hour": "2"}]
    assert all(m.getTableObj().equals(table) for m in messages)


def test_a_revert_of_a_drop_is_one_add_partition_with_the_files_hadoop_lists(
    spark, spark_metastore, spark_twins, hive_events
):
    """Putting dropped partitions back: one ADD_PARTITION whose partition objects Hive decodes into those it stores,
    and whose partitionFiles are what DbNotificationListener.FileIterator lists through Hadoop: each partition
    directory's files (no directories, nothing hidden), as Hadoop spells their paths, without a checksum (the local
    filesystem has none: getFileChecksum is null, and 2.3's encodeFileUri then writes the bare URI)."""
    # given
    console = spark_twins("events_add").console
    dropped = execute(spark_metastore, f"ALTER TABLE {console.qualified} DROP PARTITION (dt='2024-01-01')")
    since = hive_events.last_id()

    # when
    revert = revert_preview(execution=dropped)
    alter_execute(preview=revert, actor="spark-witness", source=Execution.Source.CLI, reason="witness")

    # then
    [event] = hive_events.since(since)
    assert event.getEventType() == "ADD_PARTITION"
    message = hive_events.deserializer.getAddPartitionMessage(event.getMessage())
    parts = java_items(message.getPartitionObjs())
    assert len(parts) == 2
    for part in parts:
        assert part.equals(hive_events.partition(console.database, console.name, list(part.getValues())))
    files_of = java_items(message.getPartitionFilesIter())
    listed = {entry.getPartitionName(): java_items(entry.getFiles()) for entry in files_of}
    conf = spark._jsc.hadoopConfiguration()
    expected = {}
    for part in parts:
        path = spark._jvm.org.apache.hadoop.fs.Path(part.getSd().getLocation())
        fs = path.getFileSystem(conf)
        files = [s.getPath() for s in fs.listStatus(path) if s.isFile()]
        visible = [p for p in files if not p.getName().startswith(("_", "."))]
        assert all(fs.getFileChecksum(p) is None for p in visible)
        expected[f"dt={part.getValues()[0]}/hour={part.getValues()[1]}"] = sorted(p.toString() for p in visible)
    assert listed == expected and all(expected.values())
