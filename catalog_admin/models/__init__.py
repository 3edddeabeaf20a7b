"""Unmanaged Django models over the Hive metastore schema (read through selectors, written only by services)."""

from catalog_admin.models.base import HiveModel
from catalog_admin.models.catalog import (
    Catalog,
    Database,
    DatabaseParam,
    SchemaVersionRow,
    Sequence,
)
from catalog_admin.models.notifications import NotificationEvent, NotificationSequence
from catalog_admin.models.partitions import Partition, PartitionKeyValue, PartitionParam
from catalog_admin.models.privileges import (
    DatabasePrivilege,
    PartitionColumnPrivilege,
    PartitionPrivilege,
    TablePrivilege,
)
from catalog_admin.models.statistics import (
    PartitionColumnStatistics,
    TableColumnStatistics,
)
from catalog_admin.models.storage import (
    BucketingColumn,
    Column,
    ColumnDescriptor,
    SerDe,
    SerDeParam,
    SkewedColumnName,
    SkewedColumnValueLocation,
    SkewedStringList,
    SkewedStringListValue,
    SkewedValue,
    SortColumn,
    StorageDescriptor,
    StorageDescriptorParam,
)
from catalog_admin.models.tables import PartitionKey, Table, TableParam, TableType
from catalog_admin.models.transactions import (
    AuxTable,
    CompactionMetric,
    CompactionQueueEntry,
    CompletedCompaction,
    CompletedTransactionComponent,
    HiveLock,
    NextCompactionQueueId,
    NextTransactionId,
    NextWriteId,
    Transaction,
    TransactionComponent,
    TransactionWriteId,
    WriteSetEntry,
)

__all__ = (
    "AuxTable",
    "BucketingColumn",
    "Catalog",
    "Column",
    "ColumnDescriptor",
    "CompactionMetric",
    "CompactionQueueEntry",
    "CompletedCompaction",
    "CompletedTransactionComponent",
    "Database",
    "DatabaseParam",
    "DatabasePrivilege",
    "HiveLock",
    "HiveModel",
    "NextCompactionQueueId",
    "NextTransactionId",
    "NextWriteId",
    "NotificationEvent",
    "NotificationSequence",
    "Partition",
    "PartitionColumnPrivilege",
    "PartitionColumnStatistics",
    "PartitionKey",
    "PartitionKeyValue",
    "PartitionParam",
    "PartitionPrivilege",
    "SchemaVersionRow",
    "Sequence",
    "SerDe",
    "SerDeParam",
    "SkewedColumnName",
    "SkewedColumnValueLocation",
    "SkewedStringList",
    "SkewedStringListValue",
    "SkewedValue",
    "SortColumn",
    "StorageDescriptor",
    "StorageDescriptorParam",
    "Table",
    "TableColumnStatistics",
    "TableParam",
    "TablePrivilege",
    "TableType",
    "Transaction",
    "TransactionComponent",
    "TransactionWriteId",
    "WriteSetEntry",
)


def hive_models() -> list[type[HiveModel]]:
    """Every concrete model that mirrors a metastore table."""
    from django.apps import apps

    return [m for m in apps.get_app_config("catalog_admin").get_models() if issubclass(m, HiveModel)]
