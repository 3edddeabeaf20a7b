"""Serializers of partitions: the list and one partition."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from catalog_admin.api.serializers.base import HiveSerializer, PageSerializer, api_url, table_url
from catalog_admin.api.serializers.tables import PartitionColumnStatisticsSerializer
from catalog_admin.models import Partition

__all__ = (
    "PartitionDetailSerializer",
    "PartitionPageSerializer",
    "PartitionRowSerializer",
)


def _partition_url(context: dict[str, Any], name: str) -> str:
    return api_url(
        "partition-detail",
        context,
        metastore=context["metastore"].name,
        database=context["database"].name,
        table=context["table"].name,
        partition_name=name,
    )


class PartitionRowSerializer(serializers.Serializer):
    """A partition of the list (a ``PartitionRow``)."""

    name = serializers.CharField(help_text="Escaped partition name, e.g. dt=2024-01-01/hour=3.")
    values = serializers.SerializerMethodField()
    location = serializers.CharField(allow_null=True)
    create_time = serializers.IntegerField(help_text="Seconds since the epoch.")
    num_files = serializers.IntegerField(allow_null=True)
    total_size = serializers.IntegerField(allow_null=True, help_text="Bytes.")
    num_rows = serializers.IntegerField(allow_null=True)
    freshness = serializers.ChoiceField(
        choices=["fresh", "stale"], help_text="fresh when Hive marks the basic statistics accurate."
    )
    outside_table_root = serializers.BooleanField(help_text="The location is not under the table's location.")
    exists_on_disk = serializers.BooleanField(
        allow_null=True, help_text="Null when the location's filesystem cannot be checked (hdfs, s3a …)."
    )
    url = serializers.SerializerMethodField()

    def get_values(self, row: Any) -> dict[str, str]:
        """Partition key name -> value (unescaped)."""
        return {key.name: value for key, value in zip(self.context["partition_keys"], row.values, strict=False)}

    def get_url(self, row: Any) -> str:
        return _partition_url(self.context, row.name)


class PartitionPageSerializer(PageSerializer):
    results = PartitionRowSerializer(many=True)


class PartitionDetailSerializer(HiveSerializer):
    """One partition (a ``PartitionDetail``): parameters, location and column statistics."""

    hive_model = Partition
    hive_path = "partition"

    name = serializers.CharField(source="partition.name")
    values = serializers.DictField(child=serializers.CharField(), help_text="Partition key name -> value.")
    location = serializers.CharField(allow_null=True)
    create_time = serializers.IntegerField(source="partition.create_time", help_text="Seconds since the epoch.")
    last_access_time = serializers.IntegerField(source="partition.last_access_time")
    write_id = serializers.IntegerField(source="partition.write_id", allow_null=True, help_text="Hive 4.0+.")
    num_files = serializers.IntegerField(allow_null=True)
    total_size = serializers.IntegerField(allow_null=True, help_text="Bytes.")
    num_rows = serializers.IntegerField(allow_null=True)
    freshness = serializers.ChoiceField(choices=["fresh", "stale"])
    stats_accurate = serializers.DictField(help_text="COLUMN_STATS_ACCURATE, parsed; {} when absent.")
    outside_table_root = serializers.BooleanField()
    exists_on_disk = serializers.BooleanField(allow_null=True)
    parameters = serializers.DictField(child=serializers.CharField(allow_null=True), source="params")
    column_statistics = PartitionColumnStatisticsSerializer(many=True)
    url = serializers.SerializerMethodField()
    table_url = serializers.SerializerMethodField()

    def get_url(self, detail: Any) -> str:
        return _partition_url(self.context, detail.partition.name)

    def get_table_url(self, detail: Any) -> str:
        return table_url("table-detail", self.context, self.context["database"].name, self.context["table"].name)
