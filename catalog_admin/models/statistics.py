"""Column statistics of tables and partitions."""

from django.db import models

from catalog_admin.models.base import HiveModel, hive_fk
from catalog_admin.schema import versioned

__all__ = ("PartitionColumnStatistics", "TableColumnStatistics")


class ColumnStatisticsFields(HiveModel):
    """The statistics columns shared by TAB_COL_STATS and PART_COL_STATS."""

    id = models.BigIntegerField(primary_key=True, db_column="CS_ID")
    catalog_name = versioned(
        models.CharField(max_length=256, null=True, db_column="CAT_NAME"),
        since="3.0.0",
        until="4.0.0",
    )
    db_name = versioned(models.CharField(max_length=128, null=True, db_column="DB_NAME"), until="4.0.0")
    table_name = versioned(
        models.CharField(max_length=256, null=True, db_column="TABLE_NAME"),
        until="4.0.0",
    )
    column_name = models.CharField(max_length=767, null=True, db_column="COLUMN_NAME")
    column_type = models.CharField(max_length=128, null=True, db_column="COLUMN_TYPE")
    long_low_value = models.BigIntegerField(null=True, db_column="LONG_LOW_VALUE")
    long_high_value = models.BigIntegerField(null=True, db_column="LONG_HIGH_VALUE")
    double_low_value = models.FloatField(null=True, db_column="DOUBLE_LOW_VALUE")
    double_high_value = models.FloatField(null=True, db_column="DOUBLE_HIGH_VALUE")
    big_decimal_low_value = models.CharField(max_length=4000, null=True, db_column="BIG_DECIMAL_LOW_VALUE")
    big_decimal_high_value = models.CharField(max_length=4000, null=True, db_column="BIG_DECIMAL_HIGH_VALUE")
    num_nulls = models.BigIntegerField(db_column="NUM_NULLS")
    num_distincts = models.BigIntegerField(null=True, db_column="NUM_DISTINCTS")
    bit_vector = versioned(models.BinaryField(null=True, db_column="BIT_VECTOR"), since="3.0.0")
    avg_col_len = models.FloatField(null=True, db_column="AVG_COL_LEN")
    max_col_len = models.BigIntegerField(null=True, db_column="MAX_COL_LEN")
    num_trues = models.BigIntegerField(null=True, db_column="NUM_TRUES")
    num_falses = models.BigIntegerField(null=True, db_column="NUM_FALSES")
    last_analyzed = models.BigIntegerField(db_column="LAST_ANALYZED")
    engine = versioned(
        models.CharField(max_length=128, default="hive", db_column="ENGINE"),
        since="4.0.0-alpha-1",
    )
    histogram = versioned(models.BinaryField(null=True, db_column="HISTOGRAM"), since="4.0.0-alpha-1")

    class Meta(HiveModel.Meta):
        abstract = True

    @property
    def low_value(self) -> object:
        return _first_set(self.long_low_value, self.double_low_value, self.big_decimal_low_value)

    @property
    def high_value(self) -> object:
        return _first_set(self.long_high_value, self.double_high_value, self.big_decimal_high_value)


class TableColumnStatistics(ColumnStatisticsFields):
    """TAB_COL_STATS: statistics of one column of an unpartitioned table."""

    table = hive_fk("Table", "TBL_ID", related_name="column_statistics", null=False)

    class Meta(HiveModel.Meta):
        db_table = "TAB_COL_STATS"
        indexes = [models.Index(fields=["table"], name="TAB_COL_STATS_N49")]


class PartitionColumnStatistics(ColumnStatisticsFields):
    """PART_COL_STATS: statistics of one column of one partition."""

    partition_name = versioned(
        models.CharField(max_length=767, null=True, db_column="PARTITION_NAME"),
        until="4.0.0",
    )
    partition = hive_fk("Partition", "PART_ID", related_name="column_statistics", null=False)

    class Meta(HiveModel.Meta):
        db_table = "PART_COL_STATS"
        indexes = [models.Index(fields=["partition"], name="PART_COL_STATS_N49")]


def _first_set(*values: object) -> object:
    return next((v for v in values if v is not None), None)
