"""
Issue 27's witness for a transactional table's ``TRUNCATE``: Hive 2.3's own lock manager (``TxnHandler``, in the
metastore client of Spark's JVM, on the same PostgreSQL metastore) sees the console's lock as Hive's.

While the console moves the table's deltas to its trash, a Hive client asks a SHARED_READ lock on the table (what
every Hive query reading it asks through ``DbLockManager``): Hive answers WAITING, and ``SHOW LOCKS`` lists the
console's EXCLUSIVE lock with its user and agent. Once the console has committed and released it, the same request
is ACQUIRED, and Hive reads an empty table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from catalog_admin.selectors.metastores import Metastore
from operations.models import Execution
from operations.services import alter
from operations.services.alter import alter_execute, alter_preview_statement
from tests.fixtures.spark import HiveQL

pytest.importorskip("pyspark.errors")

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True, databases=["default", "spark_pg"])]

DATABASE, TABLE = "lock_witness", "payments_acid"


class HiveLocks:
    """Hive's metastore client, as ``DbLockManager`` uses it: lock requests and their state."""

    def __init__(self, spark: Any) -> None:
        self._jvm = spark._jvm
        conf = spark._jsparkSession.sharedState().externalCatalog().unwrapped().client().state().getConf()
        conf = self._jvm.org.apache.hadoop.hive.conf.HiveConf(conf)
        conf.set("datanucleus.connectionPoolingType", "dbcp")  # TxnHandler's own pool (BoneCP is not in Spark)
        self._client = self._jvm.org.apache.hadoop.hive.metastore.HiveMetaStoreClient(conf)

    def request_shared_read(self, database: str, table: str) -> tuple[int, str]:
        """``lock()`` of a SHARED_READ on the table, outside a transaction: its id and Hive's answer."""
        api = self._jvm.org.apache.hadoop.hive.metastore.api
        component = api.LockComponent(api.LockType.SHARED_READ, api.LockLevel.TABLE, database)
        component.setTablename(table)
        components = self._jvm.java.util.ArrayList()
        components.add(component)
        response = self._client.lock(api.LockRequest(components, "hive-witness", "witness-host"))
        return response.getLockid(), response.getState().toString()

    def check(self, lock_id: int) -> str:
        return self._client.checkLock(lock_id).getState().toString()

    def unlock(self, lock_id: int) -> None:
        self._client.unlock(lock_id)

    def shown(self) -> list[tuple[str, str, str, str, str]]:
        """``SHOW LOCKS``: (table, state, type, user, agent) of each lock."""
        api = self._jvm.org.apache.hadoop.hive.metastore.api
        locks = self._client.showLocks(api.ShowLocksRequest()).getLocks()
        return [
            (lock.getTablename(), str(lock.getState()), str(lock.getType()), lock.getUser(), lock.getAgentInfo())
            for lock in locks
        ]


@pytest.fixture
def acid_table(spark: Any, hive_ql: HiveQL, spark_tmp: Path) -> Path:
    """A bucketed transactional ORC table created by Hive's Driver, with two delta directories; its directory."""
    spark.sql(f"DROP DATABASE IF EXISTS {DATABASE} CASCADE")
    spark.sql(f"CREATE DATABASE {DATABASE}")
    hive_ql(
        f"CREATE TABLE {DATABASE}.{TABLE} (id int) CLUSTERED BY (id) INTO 2 BUCKETS STORED AS ORC "
        "TBLPROPERTIES ('transactional'='true')"
    )
    root = spark_tmp / "warehouse" / f"{DATABASE}.db" / TABLE
    for write_id in (1, 2):
        delta = root / f"delta_{write_id:07d}_{write_id:07d}_0000"
        delta.mkdir(parents=True)
        (delta / "bucket_00000").write_bytes(b"rows of write id %d" % write_id)
    return root


def test_hive_waits_for_the_consoles_lock_while_a_transactional_table_is_truncated(
    spark: Any, spark_metastore: Metastore, acid_table: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """During the truncate, Hive's SHARED_READ request on the table WAITs and SHOW LOCKS shows the console's
    EXCLUSIVE lock; after it, the same request is ACQUIRED and only Hive's own lock is left."""
    # given
    hive = HiveLocks(spark)
    preview = alter_preview_statement(metastore=spark_metastore, statement=f"TRUNCATE TABLE {DATABASE}.{TABLE}")
    assert preview.blockers == () and preview.table_lock
    during: dict[str, Any] = {}

    def ask_hive(name: str) -> None:
        if name == "moved":
            during["request"] = hive.request_shared_read(DATABASE, TABLE)
            during["shown"] = hive.shown()

    monkeypatch.setattr(alter, "fault_point", ask_hive)

    # when
    execution = alter_execute(preview=preview, actor="steward", source=Execution.Source.CLI, reason="witness")

    # then
    lock_id, state = during["request"]
    try:
        assert execution.state == Execution.State.SUCCEEDED
        assert state == "WAITING"
        console = [lock for lock in during["shown"] if lock[2] == "EXCLUSIVE"]
        assert console == [(TABLE, "ACQUIRED", "EXCLUSIVE", "steward", f"catalog-admin: {preview.statement}")]
        assert hive.check(lock_id) == "ACQUIRED"
        assert [(lock[0], lock[1], lock[2]) for lock in hive.shown()] == [(TABLE, "ACQUIRED", "SHARED_READ")]
    finally:
        hive.unlock(lock_id)
    assert acid_table.is_dir() and not any(acid_table.iterdir())
    assert hive.shown() == []
