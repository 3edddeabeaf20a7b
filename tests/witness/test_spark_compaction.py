"""
Witness of the console's compaction requests: a request it queues on ``spark_pg`` (the official 2.3.0 schema) is read
back through Hive 2.3's own metastore API (``SHOW COMPACTIONS`` in Hive's Driver → ``Hive.showCompactions`` →
``HMSHandler.show_compact`` → ``TxnHandler.showCompact``), Hive's own ``ALTER TABLE … COMPACT`` then queues nothing
more for that partition (``TxnHandler.compact`` finds it), and the console's revert takes it out of what Hive shows.
A stuck transaction the console aborts is what Hive's own SHOW TRANSACTIONS then reports aborted.
"""

from __future__ import annotations

import time

import pytest
from django.db import connections

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import CompactionQueueEntry, Transaction, TransactionComponent
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.revert import revert_preview

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True, databases=["default", "spark_pg"])]

DATABASE, TABLE, PARTITION = "acid_witness", "events", "dt=2024-01-01"
COMPACT = f"ALTER TABLE {DATABASE}.{TABLE} PARTITION (dt='2024-01-01') COMPACT 'major'"


def shown(hive_ql) -> list[list[str]]:
    """SHOW COMPACTIONS rows of the witness table, as Hive prints them (tab-separated)."""
    rows = [line.split("\t") for line in hive_ql("SHOW COMPACTIONS")]
    return [[cell.strip() for cell in row] for row in rows if DATABASE in row[:3]]


def run(preview):
    return alter_execute(preview=preview, actor="operator:witness", source="cli", reason="witness")


@pytest.fixture
def acid_table(hive_ql, spark_metastore):
    """A transactional table made by Hive's Driver (ORC, bucketed, transactional=true) with one partition."""
    hive_ql(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
    hive_ql(
        f"CREATE TABLE {DATABASE}.{TABLE} (id int) PARTITIONED BY (dt string) CLUSTERED BY (id) INTO 2 BUCKETS "
        "STORED AS ORC TBLPROPERTIES ('transactional'='true')"
    )
    hive_ql(f"ALTER TABLE {DATABASE}.{TABLE} ADD PARTITION (dt='2024-01-01')")
    yield spark_metastore
    with allow_metastore_writes():  # what a failed test left queued
        CompactionQueueEntry.objects.using(spark_metastore.alias).filter(database=DATABASE).delete()
    hive_ql(f"DROP TABLE IF EXISTS {DATABASE}.{TABLE}")
    hive_ql(f"DROP DATABASE IF EXISTS {DATABASE}")


def test_queued_request_is_what_hive_shows_and_hive_does_not_queue_it_twice(acid_table, hive_ql):
    """Hive's showCompactions lists the console's request (major, initiated); Hive's own COMPACT adds none."""
    # given
    metastore = acid_table
    assert shown(hive_ql) == []
    # when
    execution = run(alter_preview_statement(metastore=metastore, statement=COMPACT))
    # then
    rows = shown(hive_ql)
    assert len(rows) == 1
    assert rows[0][:5] == [DATABASE, TABLE, PARTITION, "MAJOR", "initiated"]
    # when Hive itself is asked for the same compaction
    hive_ql(COMPACT)
    # then it found the console's request and queued nothing more
    assert CompactionQueueEntry.objects.using(metastore.alias).filter(database=DATABASE).count() == 1
    assert (
        alter_preview_statement(metastore=metastore, statement=COMPACT).blockers[0].code == "compaction_already_queued"
    )
    # when the console withdraws it
    run(revert_preview(execution=execution))
    # then Hive shows nothing queued
    assert shown(hive_ql) == []


def open_transaction(metastore) -> int:
    """An open transaction writing the witness partition, as Hive 2.3's ``openTxns`` and a writer's lock leave it:
    TXNS from NEXT_TXN_ID, a TXN_COMPONENTS row and a HIVE_LOCKS row."""
    now = int(time.time() * 1000)
    connection = connections[metastore.alias]
    q = connection.ops.quote_name
    with allow_metastore_writes(), connection.cursor() as cursor:
        cursor.execute(f"SELECT {q('NTXN_NEXT')} FROM {q('NEXT_TXN_ID')}")
        (txn_id,) = cursor.fetchone()
        cursor.execute(f"UPDATE {q('NEXT_TXN_ID')} SET {q('NTXN_NEXT')} = %s", (txn_id + 1,))
        cursor.execute(
            f"INSERT INTO {q('TXNS')} ({q('TXN_ID')}, {q('TXN_STATE')}, {q('TXN_STARTED')}, {q('TXN_LAST_HEARTBEAT')}, "
            f"{q('TXN_USER')}, {q('TXN_HOST')}) VALUES (%s, 'o', %s, %s, 'etl', 'etl-host')",
            (txn_id, now - 3_600_000, now - 3_600_000),
        )
        cursor.execute(
            f"INSERT INTO {q('TXN_COMPONENTS')} ({q('TC_TXNID')}, {q('TC_DATABASE')}, {q('TC_TABLE')}, "
            f"{q('TC_PARTITION')}, {q('TC_OPERATION_TYPE')}) VALUES (%s, %s, %s, %s, 'i')",
            (txn_id, DATABASE, TABLE, PARTITION),
        )
    return txn_id


def test_aborted_transaction_is_what_hive_shows(acid_table, hive_ql):
    """Hive's SHOW TRANSACTIONS (TxnHandler.getOpenTxnsInfo) lists the stuck transaction open, then aborted once the
    console's ABORT TRANSACTIONS ran."""
    # given
    metastore = acid_table
    txn_id = open_transaction(metastore)
    try:
        assert transactions(hive_ql)[txn_id] == "OPEN"
        # when
        preview = alter_preview_statement(
            metastore=metastore, statement=f"ALTER TABLE {DATABASE}.{TABLE} ABORT TRANSACTIONS {txn_id}"
        )
        run(preview)
        # then
        assert transactions(hive_ql)[txn_id] == "ABORTED"
    finally:
        with allow_metastore_writes():
            TransactionComponent.objects.using(metastore.alias).filter(txn_id=txn_id).delete()
            Transaction.objects.using(metastore.alias).filter(id=txn_id).delete()


def transactions(hive_ql) -> dict[int, str]:
    """Transaction id → state, as Hive 2.3's SHOW TRANSACTIONS prints them (after its header line)."""
    rows = [line.split("\t") for line in hive_ql("SHOW TRANSACTIONS")]
    return {int(row[0]): row[1].strip() for row in rows if row[0].strip().isdigit()}
