"""
Read-only output serializers of the catalog API.

Instances come from selectors (models and the selectors' dataclasses). Columns that Hive added or
dropped between schema versions are deferred by the selectors on metastores that lack them; the
:class:`HiveSerializer` base renders such fields as ``null`` without ever reading them (reading a
deferred field would query a column that does not exist).
"""

from __future__ import annotations

import base64
from typing import Any, ClassVar

from django.core.exceptions import FieldDoesNotExist
from django.db import models
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.fields import SkipField, get_attribute
from rest_framework.reverse import reverse

from catalog_admin.errors import ErrorCode
from catalog_admin.hive.statistics import BASIC_STAT_KEYS, int_param
from catalog_admin.models import (
    CompactionQueueEntry,
    CompletedCompaction,
    Database,
    HiveLock,
    Partition,
    PartitionColumnStatistics,
    SerDe,
    StorageDescriptor,
    Table,
    TableColumnStatistics,
    TablePrivilege,
    Transaction,
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

_BASIC_STAT_NAMES = {
    "numFiles": "num_files",
    "totalSize": "total_size",
    "numRows": "num_rows",
    "rawDataSize": "raw_data_size",
}


def _url(name: str, context: dict[str, Any], **kwargs: Any) -> str:
    return reverse(f"api:{name}", kwargs=kwargs, request=context.get("request"))


class ErrorSerializer(serializers.Serializer):
    """Every API error: a stable code, a human message and machine-readable details."""

    code = serializers.CharField(
        help_text=f"Stable error code: {', '.join(c.value for c in ErrorCode)}; internal_error for a bug (500)."
    )
    message = serializers.CharField(help_text="What went wrong, naming the object or parameter.")
    details = serializers.DictField(help_text="Machine-readable context (kind, name, parameter, metastore …).")


@extend_schema_field(OpenApiTypes.BYTE)
class Base64Field(serializers.Field):
    """Binary column (a sketch or histogram) as base64."""

    def to_representation(self, value: bytes | memoryview) -> str:
        return base64.b64encode(bytes(value)).decode("ascii")


# anyOf, not oneOf: an integer is a number too, so it matched two of oneOf's schemas and was refused.
@extend_schema_field({"anyOf": [{"type": "number"}, {"type": "string"}], "nullable": True})
class StatisticValueField(serializers.Field):
    """A column statistic bound: integer, floating point or decimal (as a string), whichever Hive recorded."""

    def to_representation(self, value: Any) -> Any:
        return value


class HiveSerializer(serializers.Serializer):
    """
    Fields read from a Hive model instance; those whose column the metastore's schema lacks are ``null``.

    ``hive_model`` is the model and ``hive_path`` the attribute path from the serialized instance to the model
    instance (``""`` when the instance is the model itself, ``"database"`` for a ``DatabaseSummary``).
    ``context["metastore"]`` is the :class:`~catalog_admin.selectors.metastores.Metastore`. A versioned field is
    never read on a metastore without its column; declare it ``allow_null=True`` (a test checks this).
    """

    hive_model: ClassVar[type[models.Model]]
    hive_path: ClassVar[str] = ""

    def to_representation(self, instance: Any) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for field in self._readable_fields:
            if not self.field_available(field):
                data[field.field_name] = None
                continue
            try:
                attribute = field.get_attribute(instance)
            except SkipField:
                continue
            data[field.field_name] = None if attribute is None else field.to_representation(attribute)
        return data

    def field_available(self, field: serializers.Field) -> bool:
        """Whether ``field`` reads a column the metastore has (fields not on the model always are)."""
        column = self.hive_column(field)
        return column is None or self.context["metastore"].schema.has(self.hive_model, column)

    @classmethod
    def hive_column(cls, field: serializers.Field) -> str | None:
        """The model field ``field`` reads, if it reads one."""
        if field.source == "*":
            return None
        prefix = f"{cls.hive_path}." if cls.hive_path else ""
        if not field.source.startswith(prefix):
            return None
        name = field.source.removeprefix(prefix).split(".", 1)[0]
        try:
            cls.hive_model._meta.get_field(name)
        except FieldDoesNotExist:  # a property such as ``low_value``
            return None
        return name


# Metastores -----------------------------------------------------------------------------------------------------------


class MetastoreSerializer(serializers.Serializer):
    """A registered metastore (a ``MetastoreStatus``): whether it can be read and, if not, why."""

    name = serializers.CharField(source="config.name")
    vendor = serializers.CharField(source="config.vendor", help_text="postgresql, mysql or sqlite.")
    display_url = serializers.CharField(
        source="config.display_url", help_text="Connection URL with its password and credential parameters redacted."
    )
    schema_version = serializers.SerializerMethodField(help_text="Hive schema version; null when unreachable.")
    default = serializers.SerializerMethodField()
    reachable = serializers.SerializerMethodField()
    error = serializers.SerializerMethodField(help_text="Why the metastore cannot be read; null when reachable.")
    url = serializers.SerializerMethodField()
    databases_url = serializers.SerializerMethodField()

    def get_schema_version(self, status: Any) -> str | None:
        return status.metastore.schema.raw_version if status.metastore else None

    def get_default(self, status: Any) -> bool:
        return status.config.name == self.context["default_metastore"]

    def get_reachable(self, status: Any) -> bool:
        return status.metastore is not None

    def get_error(self, status: Any) -> str | None:
        return status.error or None

    def get_url(self, status: Any) -> str:
        return _url("metastore-detail", self.context, metastore=status.config.name)

    def get_databases_url(self, status: Any) -> str:
        return _url("database-list", self.context, metastore=status.config.name)


class MetastoreListSerializer(serializers.Serializer):
    results = MetastoreSerializer(many=True)


# Databases ------------------------------------------------------------------------------------------------------------


class _DatabaseFieldsSerializer(HiveSerializer):
    hive_model = Database
    hive_path = "database"

    name = serializers.CharField(source="database.name")
    description = serializers.CharField(source="database.description", allow_null=True)
    location_uri = serializers.CharField(source="database.location_uri")
    managed_location_uri = serializers.CharField(
        source="database.managed_location_uri", allow_null=True, help_text="Hive 4.0+; null before."
    )
    owner_name = serializers.CharField(source="database.owner_name", allow_null=True)
    owner_type = serializers.CharField(source="database.owner_type", allow_null=True)
    catalog_name = serializers.CharField(source="database.catalog_name", allow_null=True, help_text="Hive 3.0+.")
    type = serializers.CharField(source="database.type", allow_null=True, help_text="NATIVE or REMOTE; Hive 4.0+.")
    create_time = serializers.IntegerField(
        source="database.create_time", allow_null=True, help_text="Seconds since the epoch; Hive 4.0+."
    )
    url = serializers.SerializerMethodField()
    tables_url = serializers.SerializerMethodField()

    def get_url(self, instance: Any) -> str:
        return self._database_url("database-detail", instance)

    def get_tables_url(self, instance: Any) -> str:
        return self._database_url("table-list", instance)

    def _database_url(self, name: str, instance: Any) -> str:
        database = get_attribute(instance, ["database"])
        return _url(name, self.context, metastore=self.context["metastore"].name, database=database.name)


class DatabaseSerializer(_DatabaseFieldsSerializer):
    """A database of the list (a ``DatabaseSummary``) with its table counts."""

    table_count = serializers.IntegerField(source="tables", help_text="Tables and views.")
    view_count = serializers.IntegerField(source="views", help_text="Virtual and materialized views.")
    external_count = serializers.IntegerField(source="external", help_text="External tables.")


class DatabaseDetailSerializer(_DatabaseFieldsSerializer):
    """One database (``{"database", "params"}``) with its DATABASE_PARAMS."""

    parameters = serializers.DictField(child=serializers.CharField(allow_null=True), source="params")


class DatabaseListSerializer(serializers.Serializer):
    results = DatabaseSerializer(many=True)


# Pages ----------------------------------------------------------------------------------------------------------------


class _PageSerializer(serializers.Serializer):
    next = serializers.URLField(allow_null=True, help_text="Absolute URL of the next page; null on the last page.")
    next_cursor = serializers.CharField(
        allow_null=True, help_text="Opaque cursor of the next page (pass as ?cursor=); null on the last page."
    )


# Tables ---------------------------------------------------------------------------------------------------------------


def _table_url(name: str, context: dict[str, Any], database: str, table: str) -> str:
    return _url(name, context, metastore=context["metastore"].name, database=database, table=table)


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
        return _table_url("table-detail", self.context, self.context["database"].name, row.name)


class TablePageSerializer(_PageSerializer):
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


class TransactionSerializer(HiveSerializer):
    """An open or aborted transaction writing to the table (TXNS)."""

    hive_model = Transaction

    id = serializers.IntegerField()
    state = serializers.CharField(help_text="o: open, a: aborted.")
    started = serializers.IntegerField(help_text="Milliseconds since the epoch.")
    last_heartbeat = serializers.IntegerField(help_text="Milliseconds since the epoch.")
    user = serializers.CharField()
    host = serializers.CharField()
    agent_info = serializers.CharField(allow_null=True)
    heartbeat_count = serializers.IntegerField(allow_null=True)
    type = serializers.IntegerField(allow_null=True, help_text="Hive 3.0+.")


class LockSerializer(HiveSerializer):
    """A lock on the table or one of its partitions (HIVE_LOCKS)."""

    hive_model = HiveLock

    ext_id = serializers.IntegerField()
    int_id = serializers.IntegerField()
    txn_id = serializers.IntegerField()
    partition = serializers.CharField(allow_null=True)
    state = serializers.CharField(help_text="a: acquired, w: waiting.")
    type = serializers.CharField(help_text="e: exclusive, r: shared read, w: shared write.")
    last_heartbeat = serializers.IntegerField()
    acquired_at = serializers.IntegerField(allow_null=True)
    user = serializers.CharField()
    host = serializers.CharField()
    agent_info = serializers.CharField(allow_null=True)
    blocked_by_ext_id = serializers.IntegerField(allow_null=True)
    blocked_by_int_id = serializers.IntegerField(allow_null=True)


class CompactionSerializer(HiveSerializer):
    """A queued or running compaction (COMPACTION_QUEUE)."""

    hive_model = CompactionQueueEntry

    id = serializers.IntegerField()
    partition = serializers.CharField(allow_null=True)
    state = serializers.CharField()
    type = serializers.CharField(help_text="a: major, i: minor.")
    worker_id = serializers.CharField(allow_null=True)
    start = serializers.IntegerField(allow_null=True)
    run_as = serializers.CharField(allow_null=True)
    highest_txn_id = serializers.IntegerField(allow_null=True, help_text="Before Hive 3.0.")
    highest_write_id = serializers.IntegerField(allow_null=True, help_text="Hive 3.0+.")
    hadoop_job_id = serializers.CharField(allow_null=True)
    enqueue_time = serializers.IntegerField(allow_null=True, help_text="Hive 4.0+.")
    error_message = serializers.CharField(allow_null=True, help_text="Hive 4.0+.")


class CompletedCompactionSerializer(CompactionSerializer):
    """A finished compaction (COMPLETED_COMPACTIONS)."""

    hive_model = CompletedCompaction

    end = serializers.IntegerField(allow_null=True)


class AcidSerializer(serializers.Serializer):
    """ACID bookkeeping of a transactional table."""

    next_write_id = serializers.IntegerField(allow_null=True, help_text="Hive 3.0+.")
    open_transactions = TransactionSerializer(many=True)
    locks = LockSerializer(many=True)
    compaction_queue = CompactionSerializer(many=True)
    completed_compactions = CompletedCompactionSerializer(many=True, help_text="The 20 most recent.")


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
        return _table_url("table-detail", self.context, detail.database.name, detail.table.name)

    def get_partitions_url(self, detail: Any) -> str:
        return _table_url("partition-list", self.context, detail.database.name, detail.table.name)

    def get_column_statistics_url(self, detail: Any) -> str:
        return _table_url("table-column-statistics", self.context, detail.database.name, detail.table.name)


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
        return _table_url("partition-list", self.context, detail.database.name, detail.table.name)


# Partitions -----------------------------------------------------------------------------------------------------------


def _partition_url(context: dict[str, Any], name: str) -> str:
    return _url(
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


class PartitionPageSerializer(_PageSerializer):
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
        return _table_url("table-detail", self.context, self.context["database"].name, self.context["table"].name)


# Search ---------------------------------------------------------------------------------------------------------------


class DatabaseHitSerializer(serializers.Serializer):
    name = serializers.CharField()
    url = serializers.SerializerMethodField()

    def get_url(self, hit: Any) -> str:
        return _url("database-detail", self.context, metastore=self.context["metastore"].name, database=hit.name)


class TableHitSerializer(serializers.Serializer):
    database = serializers.CharField()
    name = serializers.CharField()
    type = serializers.CharField()
    url = serializers.SerializerMethodField()

    def get_url(self, hit: Any) -> str:
        return _table_url("table-detail", self.context, hit.database, hit.name)


class ColumnHitSerializer(serializers.Serializer):
    database = serializers.CharField()
    table = serializers.CharField()
    column = serializers.CharField()
    type = serializers.CharField()
    url = serializers.SerializerMethodField(help_text="The table's URL.")

    def get_url(self, hit: Any) -> str:
        return _table_url("table-detail", self.context, hit.database, hit.table)


class CommentHitSerializer(serializers.Serializer):
    database = serializers.CharField()
    table = serializers.CharField()
    column = serializers.CharField(allow_blank=True, help_text="Empty for the table's own comment.")
    comment = serializers.CharField(allow_blank=True)
    url = serializers.SerializerMethodField(help_text="The table's URL.")

    def get_url(self, hit: Any) -> str:
        return _table_url("table-detail", self.context, hit.database, hit.table)


class SearchSerializer(serializers.Serializer):
    """Databases, tables (by name or ``db.table``), columns and comments matching the query (``SearchResults``)."""

    query = serializers.CharField(help_text="The query, trimmed and lower-cased.")
    metastore = serializers.SerializerMethodField()
    databases = DatabaseHitSerializer(many=True)
    tables = TableHitSerializer(many=True, help_text="Exact and prefix matches first.")
    truncated = serializers.BooleanField(help_text="More tables matched than are listed.")
    columns = ColumnHitSerializer(many=True, help_text="Columns by name, or by db.table.column.")
    comments = CommentHitSerializer(many=True, help_text="Tables and columns whose comment contains the query.")

    def get_metastore(self, results: Any) -> str:
        return self.context["metastore"].name


# ACID directories -----------------------------------------------------------------------------------------------------


class AcidDirectorySerializer(serializers.Serializer):
    """A base or (delete) delta directory as ``AcidUtils`` parses its name."""

    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=["base", "delta", "delete_delta"])
    min_write_id = serializers.IntegerField()
    max_write_id = serializers.IntegerField()
    statement_id = serializers.IntegerField(help_text="-1 when the name has none.")
    visibility_txn_id = serializers.IntegerField(help_text="Hive 4's _v suffix; 0 when the name has none.")
    size = serializers.IntegerField(help_text="Bytes under the directory.")


class AcidStateSerializer(serializers.Serializer):
    """What ``AcidUtils.getAcidState`` returns for one directory."""

    base = AcidDirectorySerializer(allow_null=True)
    deltas = AcidDirectorySerializer(many=True)
    delete_deltas = AcidDirectorySerializer(many=True)
    obsolete = serializers.ListField(child=serializers.CharField())
    aborted = serializers.ListField(child=serializers.CharField())
    original_files = serializers.ListField(child=serializers.CharField())
    not_enough_history = serializers.CharField(help_text="Hive's ACID_NOT_ENOUGH_HISTORY error, or ''.")


class CompactionNeedSerializer(serializers.Serializer):
    """Whether Hive's Initiator would queue a compaction (its thresholds), and why."""

    needed = serializers.BooleanField()
    compaction_type = serializers.CharField(help_text="major, minor or '' (none).")
    reason = serializers.CharField()
    base_bytes = serializers.IntegerField()
    delta_bytes = serializers.IntegerField()
    deltas = serializers.IntegerField()
    aborted_transactions = serializers.IntegerField()
    score = serializers.FloatField(help_text="How far past its worst threshold (1.0: at it).")


class DirectoryReportSerializer(serializers.Serializer):
    """One table or partition directory."""

    partition = serializers.CharField(allow_null=True)
    location = serializers.CharField(allow_null=True)
    listed = serializers.BooleanField(help_text="False when the filesystem cannot be listed from the console.")
    state = AcidStateSerializer(allow_null=True)
    need = CompactionNeedSerializer(allow_null=True)


class AcidDirectoryPageSerializer(_PageSerializer):
    write_ids = serializers.CharField(help_text="The valid write-id list: high-water mark:min open:open:aborted.")
    compaction_queue = CompactionSerializer(many=True)
    completed_compactions = CompletedCompactionSerializer(many=True)
    results = DirectoryReportSerializer(many=True)


class CompactionNeedRowSerializer(serializers.Serializer):
    database = serializers.CharField()
    table = serializers.CharField()
    report = DirectoryReportSerializer()


class CompactionNeedListSerializer(serializers.Serializer):
    results = CompactionNeedRowSerializer(many=True)
