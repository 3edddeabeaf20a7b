"""Storage descriptors: location, formats, columns, SerDe, bucketing, sorting and skew."""

from django.db import models

from catalog_admin.models.base import HiveBooleanField, HiveModel, hive_fk
from catalog_admin.schema import versioned

__all__ = (
    "BucketingColumn",
    "Column",
    "ColumnDescriptor",
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
)


class ColumnDescriptor(HiveModel):
    """CDS: a column list, shared by a table and (usually) all its partitions."""

    id = models.BigIntegerField(primary_key=True, db_column="CD_ID")

    class Meta(HiveModel.Meta):
        db_table = "CDS"


class Column(HiveModel):
    """COLUMNS_V2: one column of a column descriptor, in ``INTEGER_IDX`` order."""

    pk = models.CompositePrimaryKey("cd_id", "name")
    cd = hive_fk("ColumnDescriptor", "CD_ID", related_name="columns", null=False)
    comment = models.CharField(max_length=256, null=True, db_column="COMMENT")  # 4000 but on MySQL before 4.0
    name = models.CharField(max_length=767, db_column="COLUMN_NAME")
    type = models.TextField(null=True, db_column="TYPE_NAME")
    position = models.IntegerField(db_column="INTEGER_IDX")

    class Meta(HiveModel.Meta):
        db_table = "COLUMNS_V2"


class SerDe(HiveModel):
    """SERDES: the serializer/deserializer of a storage descriptor."""

    id = models.BigIntegerField(primary_key=True, db_column="SERDE_ID")
    name = models.CharField(max_length=128, null=True, db_column="NAME")
    slib = models.CharField(max_length=4000, null=True, db_column="SLIB")
    description = versioned(
        models.CharField(max_length=4000, null=True, db_column="DESCRIPTION"),
        since="3.0.0",
    )
    serializer_class = versioned(
        models.CharField(max_length=4000, null=True, db_column="SERIALIZER_CLASS"),
        since="3.0.0",
    )
    deserializer_class = versioned(
        models.CharField(max_length=4000, null=True, db_column="DESERIALIZER_CLASS"),
        since="3.0.0",
    )
    serde_type = versioned(models.IntegerField(null=True, db_column="SERDE_TYPE"), since="3.0.0")

    class Meta(HiveModel.Meta):
        db_table = "SERDES"


class SerDeParam(HiveModel):
    """SERDE_PARAMS: SerDe properties (field.delim, serialization.format, path …)."""

    pk = models.CompositePrimaryKey("serde_id", "key")
    serde = hive_fk("SerDe", "SERDE_ID", related_name="params", null=False)
    key = models.CharField(max_length=256, db_column="PARAM_KEY")
    value = models.TextField(null=True, db_column="PARAM_VALUE")

    class Meta(HiveModel.Meta):
        db_table = "SERDE_PARAMS"
        indexes = [models.Index(fields=["serde"], name="SERDE_PARAMS_N49")]


class StorageDescriptor(HiveModel):
    """SDS: where and how a table's or partition's data is stored."""

    id = models.BigIntegerField(primary_key=True, db_column="SD_ID")
    input_format = models.CharField(max_length=4000, null=True, db_column="INPUT_FORMAT")
    is_compressed = HiveBooleanField(default=False, db_column="IS_COMPRESSED")
    location = models.CharField(max_length=4000, null=True, db_column="LOCATION")
    num_buckets = models.BigIntegerField(db_column="NUM_BUCKETS")
    output_format = models.CharField(max_length=4000, null=True, db_column="OUTPUT_FORMAT")
    serde = hive_fk("SerDe", "SERDE_ID")
    cd = hive_fk("ColumnDescriptor", "CD_ID")
    is_stored_as_subdirectories = HiveBooleanField(default=False, db_column="IS_STOREDASSUBDIRECTORIES")

    class Meta(HiveModel.Meta):
        db_table = "SDS"
        indexes = [models.Index(fields=["serde"], name="SDS_N49")]


class StorageDescriptorParam(HiveModel):
    """SD_PARAMS: storage descriptor properties."""

    pk = models.CompositePrimaryKey("sd_id", "key")
    sd = hive_fk("StorageDescriptor", "SD_ID", related_name="params", null=False)
    key = models.CharField(max_length=256, db_column="PARAM_KEY")
    value = models.TextField(null=True, db_column="PARAM_VALUE")

    class Meta(HiveModel.Meta):
        db_table = "SD_PARAMS"
        indexes = [models.Index(fields=["sd"], name="SD_PARAMS_N49")]


class BucketingColumn(HiveModel):
    """BUCKETING_COLS: ``CLUSTERED BY`` columns of a storage descriptor."""

    pk = models.CompositePrimaryKey("sd_id", "position")
    sd = hive_fk("StorageDescriptor", "SD_ID", related_name="bucket_columns", null=False)
    name = models.CharField(max_length=256, null=True, db_column="BUCKET_COL_NAME")
    position = models.BigIntegerField(db_column="INTEGER_IDX")

    class Meta(HiveModel.Meta):
        db_table = "BUCKETING_COLS"
        indexes = [models.Index(fields=["sd"], name="BUCKETING_COLS_N49")]


class SortColumn(HiveModel):
    """SORT_COLS: ``SORTED BY`` columns; ``ORDER`` is 1 for ascending, 0 for descending."""

    pk = models.CompositePrimaryKey("sd_id", "position")
    sd = hive_fk("StorageDescriptor", "SD_ID", related_name="sort_columns", null=False)
    name = models.CharField(max_length=767, null=True, db_column="COLUMN_NAME")
    order = models.BigIntegerField(db_column="ORDER")
    position = models.BigIntegerField(db_column="INTEGER_IDX")

    class Meta(HiveModel.Meta):
        db_table = "SORT_COLS"
        indexes = [models.Index(fields=["sd"], name="SORT_COLS_N49")]


class SkewedStringList(HiveModel):
    """SKEWED_STRING_LIST: one list of skewed values."""

    id = models.BigIntegerField(primary_key=True, db_column="STRING_LIST_ID")

    class Meta(HiveModel.Meta):
        db_table = "SKEWED_STRING_LIST"


class SkewedStringListValue(HiveModel):
    """SKEWED_STRING_LIST_VALUES: the values of a skewed-value list."""

    pk = models.CompositePrimaryKey("string_list_id", "position")
    string_list = hive_fk("SkewedStringList", "STRING_LIST_ID", related_name="values", null=False)
    value = models.CharField(max_length=256, null=True, db_column="STRING_LIST_VALUE")
    position = models.BigIntegerField(db_column="INTEGER_IDX")

    class Meta(HiveModel.Meta):
        db_table = "SKEWED_STRING_LIST_VALUES"


class SkewedColumnName(HiveModel):
    """SKEWED_COL_NAMES: ``SKEWED BY`` columns of a storage descriptor."""

    pk = models.CompositePrimaryKey("sd_id", "position")
    sd = hive_fk("StorageDescriptor", "SD_ID", related_name="skewed_columns", null=False)
    name = models.CharField(max_length=256, null=True, db_column="SKEWED_COL_NAME")
    position = models.BigIntegerField(db_column="INTEGER_IDX")

    class Meta(HiveModel.Meta):
        db_table = "SKEWED_COL_NAMES"


class SkewedColumnValueLocation(HiveModel):
    """SKEWED_COL_VALUE_LOC_MAP: the directory of each skewed value list (list bucketing)."""

    pk = models.CompositePrimaryKey("sd_id", "string_list_id")
    sd = hive_fk("StorageDescriptor", "SD_ID", related_name="skewed_locations", null=False)
    string_list = hive_fk("SkewedStringList", "STRING_LIST_ID_KID", null=False)
    location = models.CharField(max_length=4000, null=True, db_column="LOCATION")

    class Meta(HiveModel.Meta):
        db_table = "SKEWED_COL_VALUE_LOC_MAP"


class SkewedValue(HiveModel):
    """SKEWED_VALUES: the skewed value lists of a storage descriptor."""

    pk = models.CompositePrimaryKey("sd_id", "position")
    sd = hive_fk("StorageDescriptor", "SD_ID_OID", related_name="skewed_values", null=False)
    string_list = hive_fk("SkewedStringList", "STRING_LIST_ID_EID", null=False)
    position = models.BigIntegerField(db_column="INTEGER_IDX")

    class Meta(HiveModel.Meta):
        db_table = "SKEWED_VALUES"
