"""Partitions, their key values and parameters."""

from django.db import models

from catalog_admin.models.base import HiveModel, hive_fk
from catalog_admin.schema import versioned

__all__ = ("Partition", "PartitionKeyValue", "PartitionParam")


class Partition(HiveModel):
    """PARTITIONS: one partition of a table; ``PART_NAME`` is the escaped path ``dt=…/hour=…``."""

    id = models.BigIntegerField(primary_key=True, db_column="PART_ID")
    create_time = models.BigIntegerField(db_column="CREATE_TIME")
    last_access_time = models.BigIntegerField(db_column="LAST_ACCESS_TIME")
    name = models.CharField(max_length=767, null=True, db_column="PART_NAME")
    sd = hive_fk("StorageDescriptor", "SD_ID")
    table = hive_fk("Table", "TBL_ID", related_name="partitions")
    write_id = versioned(models.BigIntegerField(null=True, db_column="WRITE_ID"), since="4.0.0-alpha-1")

    class Meta(HiveModel.Meta):
        db_table = "PARTITIONS"
        indexes = [
            models.Index(fields=["name", "table"], name="UNIQUEPARTITION"),
            models.Index(fields=["table"], name="PARTITIONS_N49"),
            models.Index(fields=["sd"], name="PARTITIONS_N50"),
        ]

    def __str__(self) -> str:
        return self.name or ""


class PartitionKeyValue(HiveModel):
    """PARTITION_KEY_VALS: the value of each partition key, in key order."""

    pk = models.CompositePrimaryKey("partition_id", "position")
    partition = hive_fk("Partition", "PART_ID", related_name="key_values", null=False)
    value = models.CharField(max_length=256, null=True, db_column="PART_KEY_VAL")
    position = models.BigIntegerField(db_column="INTEGER_IDX")

    class Meta(HiveModel.Meta):
        db_table = "PARTITION_KEY_VALS"
        indexes = [models.Index(fields=["partition"], name="PARTITION_KEY_VALS_N49")]


class PartitionParam(HiveModel):
    """PARTITION_PARAMS: partition properties (numFiles, totalSize, numRows, COLUMN_STATS_ACCURATE …)."""

    pk = models.CompositePrimaryKey("partition_id", "key")
    partition = hive_fk("Partition", "PART_ID", related_name="params", null=False)
    key = models.CharField(max_length=256, db_column="PARAM_KEY")
    value = models.TextField(null=True, db_column="PARAM_VALUE")

    class Meta(HiveModel.Meta):
        db_table = "PARTITION_PARAMS"
        indexes = [models.Index(fields=["partition"], name="PARTITION_PARAMS_N49")]
