"""Serializers of tables: the list, one table in full, its column statistics."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from catalog_admin.api.serializers.acid import AcidSerializer
from catalog_admin.api.serializers.base import (
    Base64Field,
    HiveSerializer,
    PageSerializer,
    StatisticValueField,
    table_url,
)
from catalog_admin.hive.statistics import BASIC_STAT_KEYS, int_param
from catalog_admin.models import (
    PartitionColumnStatistics,
    SerDe,
    StorageDescriptor,
    Table,
    TableColumnStatistics,
    TablePrivilege,
)

__all__ = (
    "BasicStatsSerializer",
    "ColumnSerializer",
    "ColumnStatisticsPageSerializer",
    "ColumnStatisticsSerializer",
    "PartitionColumnStatisticsSerializer",
    "SerDeSerializer",
    "SortColumnSerializer",
    "StorageSerializer",
    "TableDetailSerializer",
    "TablePageSerializer",
    "TablePrivilegeSerializer",
    "TableRowSerializer",
)


_BASIC_STAT_NAMES = {
    "numFiles": "num_files",
    "totalSize": "total_size",
    "numRows": "num_rows",
    "rawDataSize": "raw_data_size",
}


class TableRowSerializer(serializers.Serializer):
    """A table of the list (a ``TableRow``)."""

    name = serializers.CharField()
    type = serializers.CharField(allow_null=True, help_text="MANAGED_TABLE, EXTERNAL_TABLE, VIRTUAL_VIEW …")
    owner = serializers.CharField(allow_null=True)
    create_time = serializers.IntegerField(help_text="Seconds since the epoch.")
    location = serializers.CharField(allow_null=True)
    partitioned = serializers.BooleanField(source="is_partitioned")
    transactional = serializers.BooleanField(source="is_transactional")
    url = serializers.SerializerMethodField()

    def get_url(self, row: Any) -> str:
        return table_url("table-detail", self.context, self.context["database"].name, row.name)


class TablePageSerializer(PageSerializer):
    results = TableRowSerializer(many=True)


class ColumnSerializer(serializers.Serializer):
    """A column (COLUMNS_V2) or a partition key (PARTITION_KEYS)."""

    name = serializers.CharField()
    type = serializers.CharField(allow_null=True)
    comment = serializers.CharField(allow_null=True)
    position = serializers.IntegerField()


class SerDeSerializer(HiveSerializer):
    hive_model = SerDe
    hive_path = "table.sd.serde"

    name = serializers.CharField(source="table.sd.serde.name", allow_null=True)
    serialization_lib = serializers.CharField(source="table.sd.serde.slib", allow_null=True)
    description = serializers.CharField(source="table.sd.serde.description", allow_null=True, help_text="Hive 3.0+.")
    serializer_class = serializers.CharField(
        source="table.sd.serde.serializer_class", allow_null=True, help_text="Hive 3.0+."
    )
    deserializer_class = serializers.CharField(
        source="table.sd.serde.deserializer_class", allow_null=True, help_text="Hive 3.0+."
    )
    serde_type = serializers.IntegerField(source="table.sd.serde.serde_type", allow_null=True, help_text="Hive 3.0+.")
    parameters = serializers.DictField(child=serializers.CharField(allow_null=True), source="serde_params")


class SortColumnSerializer(serializers.Serializer):
    column = serializers.CharField()
    order = serializers.ChoiceField(choices=["ASC", "DESC"])

    def to_representation(self, instance: tuple[str, str]) -> dict[str, str]:
        return {"column": instance[0], "order": instance[1]}


class StorageSerializer(HiveSerializer):
    """A table's storage descriptor (SDS) with its parameters, SerDe, bucketing and sorting."""

    hive_model = StorageDescriptor
    hive_path = "table.sd"

    location = serializers.CharField(source="table.sd.location", allow_null=True)
    input_format = serializers.CharField(source="table.sd.input_format", allow_null=True)
    output_format = serializers.CharField(source="table.sd.output_format", allow_null=True)
    compressed = serializers.BooleanField(source="table.sd.is_compressed")
    num_buckets = serializers.IntegerField(source="table.sd.num_buckets", help_text="-1 when not bucketed.")
    stored_as_subdirectories = serializers.BooleanField(source="table.sd.is_stored_as_subdirectories")
    parameters = serializers.DictField(child=serializers.CharField(allow_null=True), source="sd_params")
    serde = serializers.SerializerMethodField()
    bucket_columns = serializers.ListField(child=serializers.CharField())
    sort_columns = SortColumnSerializer(many=True)

    @extend_schema_field(SerDeSerializer(allow_null=True))
    def get_serde(self, detail: Any) -> dict[str, Any] | None:
        if detail.table.sd.serde is None:
            return None
        return SerDeSerializer(detail, context=self.context).data


class BasicStatsSerializer(serializers.Serializer):
    """Hive's basic statistics from the parameters (numFiles, totalSize, numRows, rawDataSize)."""

    num_files = serializers.IntegerField(allow_null=True)
    total_size = serializers.IntegerField(allow_null=True, help_text="Bytes.")
    num_rows = serializers.IntegerField(allow_null=True)
    raw_data_size = serializers.IntegerField(allow_null=True)

    def to_representation(self, instance: dict[str, str | None]) -> dict[str, int | None]:
        return {_BASIC_STAT_NAMES[key]: int_param(instance.get(key)) for key in BASIC_STAT_KEYS}


class ColumnStatisticsSerializer(HiveSerializer):
    """Statistics of one column (TAB_COL_STATS)."""

    hive_model = TableColumnStatistics

    column_name = serializers.CharField(allow_null=True)
    column_type = serializers.CharField(allow_null=True)
    low_value = StatisticValueField()
    high_value = StatisticValueField()
    num_nulls = serializers.IntegerField()
    num_distincts = serializers.IntegerField(allow_null=True)
    avg_col_len = serializers.FloatField(allow_null=True)
    max_col_len = serializers.IntegerField(allow_null=True)
    num_trues = serializers.IntegerField(allow_null=True)
    num_falses = serializers.IntegerField(allow_null=True)
    last_analyzed = serializers.IntegerField(help_text="Seconds since the epoch.")
    engine = serializers.CharField(allow_null=True, help_text="Hive 4.0+; null before.")
    bit_vector = Base64Field(allow_null=True, help_text="NDV sketch, base64; Hive 3.0+.")
    histogram = Base64Field(allow_null=True, help_text="KLL histogram, base64; Hive 4.0+.")


class PartitionColumnStatisticsSerializer(ColumnStatisticsSerializer):
    """Statistics of one column of one partition (PART_COL_STATS)."""

    hive_model = PartitionColumnStatistics


class TablePrivilegeSerializer(HiveSerializer):
    """A grant on a table (TBL_PRIVS)."""

    hive_model = TablePrivilege

    principal_name = serializers.CharField(allow_null=True)
    principal_type = serializers.CharField(allow_null=True, help_text="USER, ROLE or GROUP.")
    privilege = serializers.CharField(allow_null=True)
    grantor = serializers.CharField(allow_null=True)
    grantor_type = serializers.CharField(allow_null=True)
    grant_option = serializers.BooleanField()
    create_time = serializers.IntegerField(help_text="Seconds since the epoch.")
    authorizer = serializers.CharField(allow_null=True, help_text="Hive 3.0+.")


class TableDetailSerializer(HiveSerializer):
    """One table in full (a ``TableDetail``)."""

    hive_model = Table
    hive_path = "table"

    database = serializers.CharField(source="database.name")
    name = serializers.CharField(source="table.name")
    type = serializers.CharField(source="table.type", allow_null=True)
    owner = serializers.CharField(source="table.owner", allow_null=True)
    owner_type = serializers.CharField(source="table.owner_type", allow_null=True, help_text="Hive 3.0+.")
    create_time = serializers.IntegerField(source="table.create_time", help_text="Seconds since the epoch.")
    last_access_time = serializers.IntegerField(source="table.last_access_time")
    retention = serializers.IntegerField(source="table.retention")
    view_original_text = serializers.CharField(source="table.view_original_text", allow_null=True)
    view_expanded_text = serializers.CharField(source="table.view_expanded_text", allow_null=True)
    rewrite_enabled = serializers.BooleanField(source="table.is_rewrite_enabled")
    write_id = serializers.IntegerField(source="table.write_id", allow_null=True, help_text="Hive 4.0+.")
    transactional = serializers.BooleanField(source="is_transactional")
    columns = ColumnSerializer(many=True)
    partition_keys = ColumnSerializer(many=True)
    partition_count = serializers.IntegerField()
    partition_count_exact = serializers.BooleanField(
        help_text="False when the table has more than 100,000 partitions: the count is then PostgreSQL's estimate."
    )
    storage = serializers.SerializerMethodField()
    parameters = serializers.DictField(child=serializers.CharField(allow_null=True), source="params")
    basic_stats = BasicStatsSerializer()
    stats_accurate = serializers.DictField(help_text="COLUMN_STATS_ACCURATE, parsed; {} when absent.")
    column_statistics = ColumnStatisticsSerializer(many=True, help_text="Table-level (TAB_COL_STATS).")
    privileges = TablePrivilegeSerializer(many=True)
    acid = AcidSerializer(allow_null=True, help_text="Null unless the table is transactional.")
    url = serializers.SerializerMethodField()
    partitions_url = serializers.SerializerMethodField()
    column_statistics_url = serializers.SerializerMethodField()

    @extend_schema_field(StorageSerializer(allow_null=True))
    def get_storage(self, detail: Any) -> dict[str, Any] | None:
        if detail.table.sd is None:
            return None
        return StorageSerializer(detail, context=self.context).data

    def get_url(self, detail: Any) -> str:
        return table_url("table-detail", self.context, detail.database.name, detail.table.name)

    def get_partitions_url(self, detail: Any) -> str:
        return table_url("partition-list", self.context, detail.database.name, detail.table.name)

    def get_column_statistics_url(self, detail: Any) -> str:
        return table_url("table-column-statistics", self.context, detail.database.name, detail.table.name)


class ColumnStatisticsPageSerializer(serializers.Serializer):
    """Table-level column statistics; a partitioned table keeps them per partition."""

    database = serializers.CharField(source="database.name")
    table = serializers.CharField(source="table.name")
    partitioned = serializers.SerializerMethodField(
        help_text="True when statistics live per partition: read them at each partition's URL."
    )
    partitions_url = serializers.SerializerMethodField()
    results = ColumnStatisticsSerializer(many=True, source="column_statistics")

    def get_partitioned(self, detail: Any) -> bool:
        return bool(detail.partition_keys)

    def get_partitions_url(self, detail: Any) -> str:
        return table_url("partition-list", self.context, detail.database.name, detail.table.name)
