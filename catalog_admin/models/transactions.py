"""
ACID bookkeeping: transactions, locks, write ids and compactions.

Hive's 2.3 and 3.1 PostgreSQL scripts create these tables unquoted, so their names and
columns are lower case there; ``catalog_admin.backends.postgresql`` maps the names below.
"""

from django.db import models

from catalog_admin.models.base import HiveModel
from catalog_admin.schema import versioned

__all__ = (
    "AuxTable",
    "CompactionMetric",
    "CompactionQueueEntry",
    "CompletedCompaction",
    "CompletedTransactionComponent",
    "HiveLock",
    "NextCompactionQueueId",
    "NextTransactionId",
    "NextWriteId",
    "Transaction",
    "TransactionComponent",
    "TransactionWriteId",
    "WriteSetEntry",
)


class Transaction(HiveModel):
    """TXNS: open and aborted transactions (``TXN_STATE`` o=open, a=aborted)."""

    id = models.BigIntegerField(primary_key=True, db_column="TXN_ID")
    state = models.CharField(max_length=1, db_column="TXN_STATE")
    started = models.BigIntegerField(db_column="TXN_STARTED")
    last_heartbeat = models.BigIntegerField(db_column="TXN_LAST_HEARTBEAT")
    user = models.CharField(max_length=128, db_column="TXN_USER")
    host = models.CharField(max_length=128, db_column="TXN_HOST")
    agent_info = models.CharField(max_length=128, null=True, db_column="TXN_AGENT_INFO")
    meta_info = models.CharField(max_length=128, null=True, db_column="TXN_META_INFO")
    heartbeat_count = models.IntegerField(null=True, db_column="TXN_HEARTBEAT_COUNT")
    type = versioned(models.IntegerField(null=True, db_column="TXN_TYPE"), since="3.0.0")

    class Meta(HiveModel.Meta):
        db_table = "TXNS"


class TransactionComponent(HiveModel):
    """
    TXN_COMPONENTS: what an open transaction writes.

    Hive declares no primary key here; the natural key stands in for one (Django needs a key), so
    ``table`` and ``partition`` are declared non-null although a database-level lock row holds NULLs.
    """

    pk = models.CompositePrimaryKey("txn_id", "database", "table", "partition")
    txn_id = models.BigIntegerField(db_column="TC_TXNID")
    database = models.CharField(max_length=128, db_column="TC_DATABASE")
    table = models.CharField(max_length=128, db_column="TC_TABLE")  # 256 since 4.0
    partition = models.CharField(max_length=767, db_column="TC_PARTITION")
    operation_type = models.CharField(max_length=1, db_column="TC_OPERATION_TYPE")
    write_id = versioned(models.BigIntegerField(null=True, db_column="TC_WRITEID"), since="3.0.0")

    class Meta(HiveModel.Meta):
        db_table = "TXN_COMPONENTS"


class CompletedTransactionComponent(HiveModel):
    """
    COMPLETED_TXN_COMPONENTS: what committed transactions wrote, until compaction cleans it up.

    No primary key in Hive: the natural key stands in, ``table`` and ``partition`` declared non-null as in
    :class:`TransactionComponent`.
    """

    pk = models.CompositePrimaryKey("txn_id", "database", "table", "partition")
    txn_id = models.BigIntegerField(db_column="CTC_TXNID")  # nullable in the 2.3 PostgreSQL script
    database = models.CharField(max_length=128, db_column="CTC_DATABASE")
    table = models.CharField(max_length=256, db_column="CTC_TABLE")
    partition = models.CharField(max_length=767, db_column="CTC_PARTITION")
    # DEFAULT CURRENT_TIMESTAMP in Hive's scripts
    timestamp = versioned(models.DateTimeField(db_column="CTC_TIMESTAMP"), since="3.0.0")
    write_id = versioned(models.BigIntegerField(null=True, db_column="CTC_WRITEID"), since="3.0.0")
    update_delete = versioned(models.CharField(max_length=1, db_column="CTC_UPDATE_DELETE"), since="3.0.0")

    class Meta(HiveModel.Meta):
        db_table = "COMPLETED_TXN_COMPONENTS"


class WriteSetEntry(HiveModel):
    """
    WRITE_SET: what committed updates and deletes wrote (``WS_OPERATION_TYPE`` u/d), for write-write conflicts.

    No primary key in Hive: the natural key stands in (one row per operation type, as Hive's ``SELECT DISTINCT``
    writes them), ``partition`` declared non-null although it is NULL for an unpartitioned table.
    """

    pk = models.CompositePrimaryKey("txn_id", "database", "table", "partition", "operation_type")
    database = models.CharField(max_length=128, db_column="WS_DATABASE")
    table = models.CharField(max_length=128, db_column="WS_TABLE")  # 256 since 4.0
    partition = models.CharField(max_length=767, db_column="WS_PARTITION")
    txn_id = models.BigIntegerField(db_column="WS_TXNID")
    commit_id = models.BigIntegerField(db_column="WS_COMMIT_ID")
    operation_type = models.CharField(max_length=1, db_column="WS_OPERATION_TYPE")

    class Meta(HiveModel.Meta):
        db_table = "WRITE_SET"


class HiveLock(HiveModel):
    """HIVE_LOCKS: locks held or waited for (``HL_LOCK_STATE`` a=acquired, w=waiting)."""

    pk = models.CompositePrimaryKey("ext_id", "int_id")
    ext_id = models.BigIntegerField(db_column="HL_LOCK_EXT_ID")
    int_id = models.BigIntegerField(db_column="HL_LOCK_INT_ID")
    txn_id = models.BigIntegerField(null=True, db_column="HL_TXNID")  # NOT NULL since 3.0
    database = models.CharField(max_length=128, db_column="HL_DB")
    table = models.CharField(max_length=128, null=True, db_column="HL_TABLE")  # 256 since 4.0
    partition = models.CharField(max_length=767, null=True, db_column="HL_PARTITION")
    state = models.CharField(max_length=1, db_column="HL_LOCK_STATE")
    type = models.CharField(max_length=1, db_column="HL_LOCK_TYPE")
    last_heartbeat = models.BigIntegerField(db_column="HL_LAST_HEARTBEAT")
    acquired_at = models.BigIntegerField(null=True, db_column="HL_ACQUIRED_AT")
    user = models.CharField(max_length=128, db_column="HL_USER")
    host = models.CharField(max_length=128, db_column="HL_HOST")
    heartbeat_count = models.IntegerField(null=True, db_column="HL_HEARTBEAT_COUNT")
    agent_info = models.CharField(max_length=128, null=True, db_column="HL_AGENT_INFO")
    blocked_by_ext_id = models.BigIntegerField(null=True, db_column="HL_BLOCKEDBY_EXT_ID")
    blocked_by_int_id = models.BigIntegerField(null=True, db_column="HL_BLOCKEDBY_INT_ID")

    class Meta(HiveModel.Meta):
        db_table = "HIVE_LOCKS"


def _compaction_fields(prefix: str) -> dict[str, models.Field]:
    """Columns shared by COMPACTION_QUEUE (prefix CQ) and COMPLETED_COMPACTIONS (prefix CC)."""

    def col(name: str) -> str:
        return f"{prefix}_{name}"

    return {
        "id": models.BigIntegerField(primary_key=True, db_column=col("ID")),
        "database": models.CharField(max_length=128, db_column=col("DATABASE")),
        "table": models.CharField(max_length=128, db_column=col("TABLE")),  # 256 since 4.0
        "partition": models.CharField(max_length=767, null=True, db_column=col("PARTITION")),
        "state": models.CharField(max_length=1, db_column=col("STATE")),
        "type": models.CharField(max_length=1, db_column=col("TYPE")),
        "tblproperties": models.CharField(max_length=2048, null=True, db_column=col("TBLPROPERTIES")),
        "worker_id": models.CharField(max_length=128, null=True, db_column=col("WORKER_ID")),
        "start": models.BigIntegerField(null=True, db_column=col("START")),
        "run_as": models.CharField(max_length=128, null=True, db_column=col("RUN_AS")),
        "highest_txn_id": versioned(
            models.BigIntegerField(null=True, db_column=col("HIGHEST_TXN_ID")),
            until="3.0.0",
        ),
        "highest_write_id": versioned(
            models.BigIntegerField(null=True, db_column=col("HIGHEST_WRITE_ID")),
            since="3.0.0",
        ),
        "meta_info": models.BinaryField(null=True, db_column=col("META_INFO")),
        "hadoop_job_id": models.CharField(max_length=32, null=True, db_column=col("HADOOP_JOB_ID")),
        "enqueue_time": versioned(
            models.BigIntegerField(null=True, db_column=col("ENQUEUE_TIME")),
            since="4.0.0-alpha-1",
        ),
        "error_message": versioned(
            models.TextField(null=True, db_column=col("ERROR_MESSAGE")),
            since="4.0.0-alpha-1",
        ),
        "next_txn_id": versioned(
            models.BigIntegerField(null=True, db_column=col("NEXT_TXN_ID")),
            since="4.0.0-alpha-1",
        ),
        "txn_id": versioned(
            models.BigIntegerField(null=True, db_column=col("TXN_ID")),
            since="4.0.0-alpha-1",
        ),
        "commit_time": versioned(
            models.BigIntegerField(null=True, db_column=col("COMMIT_TIME")),
            since="4.0.0-alpha-1",
        ),
        "initiator_id": versioned(
            models.CharField(max_length=128, null=True, db_column=col("INITIATOR_ID")),
            since="4.0.0-alpha-1",
        ),
        "initiator_version": versioned(
            models.CharField(max_length=128, null=True, db_column=col("INITIATOR_VERSION")),
            since="4.0.0-alpha-1",
        ),
        "worker_version": versioned(
            models.CharField(max_length=128, null=True, db_column=col("WORKER_VERSION")),
            since="4.0.0-alpha-1",
        ),
        "pool_name": versioned(
            models.CharField(max_length=128, null=True, db_column=col("POOL_NAME")),
            since="4.0.0-alpha-1",
        ),
        "number_of_buckets": versioned(
            models.IntegerField(null=True, db_column=col("NUMBER_OF_BUCKETS")),
            since="4.0.0-alpha-1",
        ),
        "order_by": versioned(
            models.CharField(max_length=4000, null=True, db_column=col("ORDER_BY")),
            since="4.0.0-alpha-1",
        ),
    }


class CompactionQueueEntry(HiveModel):
    """COMPACTION_QUEUE: compactions waiting or running (``CQ_STATE`` i=initiated, w=working, r=ready for cleaning)."""

    locals().update(_compaction_fields("CQ"))
    cleaner_start = versioned(
        models.BigIntegerField(null=True, db_column="CQ_CLEANER_START"),
        since="4.0.0-alpha-1",
    )
    retry_retention = versioned(
        models.BigIntegerField(default=0, db_column="CQ_RETRY_RETENTION"),
        since="4.0.0-alpha-1",
    )

    class Meta(HiveModel.Meta):
        db_table = "COMPACTION_QUEUE"


class CompletedCompaction(HiveModel):
    """COMPLETED_COMPACTIONS: the history of compactions (``CC_STATE`` s=succeeded, f=failed, a=attempted)."""

    locals().update(_compaction_fields("CC"))
    end = models.BigIntegerField(null=True, db_column="CC_END")

    class Meta(HiveModel.Meta):
        db_table = "COMPLETED_COMPACTIONS"


class NextWriteId(HiveModel):
    """NEXT_WRITE_ID: the next write id per transactional table (Hive 3.0+). Unique on (database, table)."""

    hive_since = "3.0.0"

    pk = models.CompositePrimaryKey("database", "table")
    database = models.CharField(max_length=128, db_column="NWI_DATABASE")
    table = models.CharField(max_length=256, db_column="NWI_TABLE")
    next = models.BigIntegerField(db_column="NWI_NEXT")

    class Meta(HiveModel.Meta):
        db_table = "NEXT_WRITE_ID"


class TransactionWriteId(HiveModel):
    """TXN_TO_WRITE_ID: write ids allocated to transactions (Hive 3.0+). Unique on (database, table, txn)."""

    hive_since = "3.0.0"

    pk = models.CompositePrimaryKey("database", "table", "txn_id")
    txn_id = models.BigIntegerField(db_column="T2W_TXNID")
    database = models.CharField(max_length=128, db_column="T2W_DATABASE")
    table = models.CharField(max_length=256, db_column="T2W_TABLE")
    write_id = models.BigIntegerField(db_column="T2W_WRITEID")

    class Meta(HiveModel.Meta):
        db_table = "TXN_TO_WRITE_ID"


class CompactionMetric(HiveModel):
    """
    COMPACTION_METRICS_CACHE: delta-file metrics per table or partition (Hive 4.0+), e.g. HIVE_ACID_NUM_DELTAS.

    No primary key in Hive: the natural key stands in, ``partition`` declared non-null although it is NULL for
    table-level metrics.
    """

    hive_since = "4.0.0-alpha-1"

    pk = models.CompositePrimaryKey("database", "table", "partition", "metric_type")
    database = models.CharField(max_length=128, db_column="CMC_DATABASE")
    table = models.CharField(max_length=256, db_column="CMC_TABLE")
    partition = models.CharField(max_length=767, db_column="CMC_PARTITION")
    metric_type = models.CharField(max_length=128, db_column="CMC_METRIC_TYPE")
    value = models.IntegerField(db_column="CMC_METRIC_VALUE")
    version = models.IntegerField(db_column="CMC_VERSION")

    class Meta(HiveModel.Meta):
        db_table = "COMPACTION_METRICS_CACHE"


class NextTransactionId(HiveModel):
    """NEXT_TXN_ID: one row, the next transaction id (2.x and 3.x; Hive 4's TXNS.TXN_ID is an identity column).

    No primary key in Hive: the one column stands in for it.
    """

    hive_until = "4.0.0-alpha-1"

    next = models.BigIntegerField(primary_key=True, db_column="NTXN_NEXT")

    class Meta(HiveModel.Meta):
        db_table = "NEXT_TXN_ID"


class NextCompactionQueueId(HiveModel):
    """NEXT_COMPACTION_QUEUE_ID: one row, the next COMPACTION_QUEUE id (``TxnHandler.generateCompactionQueueId``).

    No primary key in Hive: the one column stands in for it.
    """

    next = models.BigIntegerField(primary_key=True, db_column="NCQ_NEXT")

    class Meta(HiveModel.Meta):
        db_table = "NEXT_COMPACTION_QUEUE_ID"


class AuxTable(HiveModel):
    """AUX_TABLE: the rows behind ``TxnHandler``'s mutexes (``MUTEX_KEY``: ``CompactionScheduler`` …), locked with
    ``SELECT … FOR UPDATE`` by ``acquireLock``."""

    pk = models.CompositePrimaryKey("key1", "key2")
    key1 = models.CharField(max_length=128, db_column="MT_KEY1")
    key2 = models.BigIntegerField(db_column="MT_KEY2")
    comment = models.CharField(max_length=255, null=True, db_column="MT_COMMENT")

    class Meta(HiveModel.Meta):
        db_table = "AUX_TABLE"
