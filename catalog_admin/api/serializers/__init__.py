"""
Read-only output serializers of the catalog API, one module per resource: the shared bases (``base``), metastores
and databases, tables, partitions, ACID bookkeeping and directories, search. Every name is importable from here.
"""

from __future__ import annotations

from catalog_admin.api.serializers.acid import (
    AcidDirectoryPageSerializer,
    AcidSerializer,
    CompactionNeedListSerializer,
    CompactionSerializer,
    CompletedCompactionSerializer,
    LockSerializer,
    TransactionSerializer,
)
from catalog_admin.api.serializers.base import Base64Field, ErrorSerializer, HiveSerializer, StatisticValueField
from catalog_admin.api.serializers.metastores import (
    DatabaseDetailSerializer,
    DatabaseListSerializer,
    DatabaseSerializer,
    MetastoreListSerializer,
    MetastoreSerializer,
)
from catalog_admin.api.serializers.partitions import (
    PartitionDetailSerializer,
    PartitionPageSerializer,
    PartitionRowSerializer,
)
from catalog_admin.api.serializers.search import (
    ColumnHitSerializer,
    CommentHitSerializer,
    DatabaseHitSerializer,
    SearchSerializer,
    TableHitSerializer,
)
from catalog_admin.api.serializers.tables import (
    BasicStatsSerializer,
    ColumnSerializer,
    ColumnStatisticsPageSerializer,
    ColumnStatisticsSerializer,
    PartitionColumnStatisticsSerializer,
    SerDeSerializer,
    SortColumnSerializer,
    StorageSerializer,
    TableDetailSerializer,
    TablePageSerializer,
    TablePrivilegeSerializer,
    TableRowSerializer,
)

__all__ = (
    "AcidDirectoryPageSerializer",
    "AcidSerializer",
    "Base64Field",
    "BasicStatsSerializer",
    "ColumnHitSerializer",
    "ColumnSerializer",
    "ColumnStatisticsPageSerializer",
    "ColumnStatisticsSerializer",
    "CommentHitSerializer",
    "CompactionNeedListSerializer",
    "CompactionSerializer",
    "CompletedCompactionSerializer",
    "DatabaseDetailSerializer",
    "DatabaseHitSerializer",
    "DatabaseListSerializer",
    "DatabaseSerializer",
    "ErrorSerializer",
    "HiveSerializer",
    "LockSerializer",
    "MetastoreListSerializer",
    "MetastoreSerializer",
    "PartitionColumnStatisticsSerializer",
    "PartitionDetailSerializer",
    "PartitionPageSerializer",
    "PartitionRowSerializer",
    "SearchSerializer",
    "SerDeSerializer",
    "SortColumnSerializer",
    "StatisticValueField",
    "StorageSerializer",
    "TableDetailSerializer",
    "TableHitSerializer",
    "TablePageSerializer",
    "TablePrivilegeSerializer",
    "TableRowSerializer",
    "TransactionSerializer",
)
