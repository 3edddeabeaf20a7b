"""
Witness of the console's compaction requests: a request it queues on ``spark_pg`` (the official 2.3.0 schema) is read
back through Hive 2.3's own metastore API (``SHOW COMPACTIONS`` in Hive's Driver → ``Hive.showCompactions`` →
``HMSHandler.show_compact`` → ``TxnHandler.showCompact``), Hive's own ``ALTER TABLE … COMPACT`` then queues nothing
more for that partition (``TxnHandler.compact`` finds it), and the console's revert takes it out of what Hive shows.
"""

from __future__ import annotations

import pytest

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import CompactionQueueEntry
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
