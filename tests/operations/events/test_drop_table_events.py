"""DROP TABLE writes the one DROP_TABLE event Hive's ``drop_table_core`` writes (no event per partition); its undrop
writes what creating the table and adding its partitions writes: CREATE_TABLE, then one ADD_PARTITION carrying all."""

from __future__ import annotations

import pytest

from catalog_admin.models import Partition
from catalog_admin.selectors.metastores import Metastore
from operations.services.alter import alter_preview_statement
from operations.services.revert import revert_preview
from tests.fixtures.operations import decode_event as decode
from tests.fixtures.operations import execute
from tests.fixtures.operations import notification_events as events

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("warehouse")]


def test_a_dropped_table_writes_one_drop_table_event_and_its_undrop_create_table_and_add_partition(
    metastore: Metastore,
) -> None:
    # given
    partitions = Partition.objects.using(metastore.alias).filter(table__name="orders", table__database__name="sales")
    count = partitions.count()

    # when
    preview = alter_preview_statement(metastore=metastore, statement="DROP TABLE sales.orders")
    dropped = execute(preview)
    after_drop = events(metastore)
    execute(revert_preview(execution=dropped))

    # then
    assert dict(preview.events.counts) == {"DROP_TABLE": 1}
    assert [(e.event_type, e.db_name, e.table_name) for e in after_drop] == [("DROP_TABLE", "sales", "orders")]
    message = decode(metastore, after_drop[0])
    assert (message["db"], message["table"]) == ("sales", "orders")
    assert "tableObjJson" in message
    undropped = events(metastore)[1:]
    assert [(e.event_type, e.db_name, e.table_name) for e in undropped] == [
        ("CREATE_TABLE", "sales", "orders"),
        ("ADD_PARTITION", "sales", "orders"),
    ]
    assert len(decode(metastore, undropped[1])["partitionListJson"]) == count


def test_an_undropped_unpartitioned_table_writes_create_table_only(metastore: Metastore) -> None:
    dropped = execute(alter_preview_statement(metastore=metastore, statement="DROP TABLE sales.customers"))
    execute(revert_preview(execution=dropped))

    assert [e.event_type for e in events(metastore)] == ["DROP_TABLE", "CREATE_TABLE"]
