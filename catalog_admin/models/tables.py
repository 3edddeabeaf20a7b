"""Tables, their parameters and partition keys."""

from django.db import models

from catalog_admin.models.base import HiveBooleanField, HiveModel, hive_fk
from catalog_admin.schema import versioned

__all__ = ("PartitionKey", "Table", "TableParam", "TableType")


class TableType(models.TextChoices):
    """TBLS.TBL_TYPE values written by Hive."""

    MANAGED = "MANAGED_TABLE", "Managed"
    EXTERNAL = "EXTERNAL_TABLE", "External"
    VIRTUAL_VIEW = "VIRTUAL_VIEW", "View"
    MATERIALIZED_VIEW = "MATERIALIZED_VIEW", "Materialized view"


class Table(HiveModel):
    """TBLS: one table or view of a database."""

    id = models.BigIntegerField(primary_key=True, db_column="TBL_ID")
    create_time = models.BigIntegerField(db_column="CREATE_TIME")
    database = hive_fk("Database", "DB_ID", related_name="tables")
    last_access_time = models.BigIntegerField(db_column="LAST_ACCESS_TIME")
    owner = models.CharField(max_length=767, null=True, db_column="OWNER")
    owner_type = versioned(
        models.CharField(max_length=10, null=True, db_column="OWNER_TYPE"),
        since="3.0.0",
    )
    retention = models.BigIntegerField(db_column="RETENTION")
    sd = hive_fk("StorageDescriptor", "SD_ID")
    name = models.CharField(max_length=256, null=True, db_column="TBL_NAME")
    type = models.CharField(max_length=128, null=True, db_column="TBL_TYPE")
    view_expanded_text = models.TextField(null=True, db_column="VIEW_EXPANDED_TEXT")
    view_original_text = models.TextField(null=True, db_column="VIEW_ORIGINAL_TEXT")
    is_rewrite_enabled = HiveBooleanField(default=False, db_column="IS_REWRITE_ENABLED")
    write_id = versioned(models.BigIntegerField(null=True, db_column="WRITE_ID"), since="4.0.0-alpha-1")

    class Meta(HiveModel.Meta):
        db_table = "TBLS"
        indexes = [
            models.Index(fields=["name", "database"], name="UNIQUETABLE"),
            models.Index(fields=["database"], name="TBLS_N49"),
            models.Index(fields=["sd"], name="TBLS_N50"),
        ]

    def __str__(self) -> str:
        return self.name or ""

    @property
    def is_view(self) -> bool:
        return self.type in (TableType.VIRTUAL_VIEW, TableType.MATERIALIZED_VIEW)


class TableParam(HiveModel):
    """TABLE_PARAMS: key/value properties of a table (numFiles, transactional, spark.sql.* …)."""

    pk = models.CompositePrimaryKey("table_id", "key")
    table = hive_fk("Table", "TBL_ID", related_name="params", null=False)
    key = models.CharField(max_length=256, db_column="PARAM_KEY")
    value = models.TextField(null=True, db_column="PARAM_VALUE")

    class Meta(HiveModel.Meta):
        db_table = "TABLE_PARAMS"
        indexes = [models.Index(fields=["table"], name="TABLE_PARAMS_N49")]


class PartitionKey(HiveModel):
    """PARTITION_KEYS: the partition columns of a table, in ``INTEGER_IDX`` order."""

    pk = models.CompositePrimaryKey("table_id", "name")
    table = hive_fk("Table", "TBL_ID", related_name="partition_keys", null=False)
    comment = models.CharField(max_length=4000, null=True, db_column="PKEY_COMMENT")
    name = models.CharField(max_length=128, db_column="PKEY_NAME")
    type = models.CharField(max_length=767, db_column="PKEY_TYPE")
    position = models.BigIntegerField(db_column="INTEGER_IDX")

    class Meta(HiveModel.Meta):
        db_table = "PARTITION_KEYS"
        indexes = [models.Index(fields=["table"], name="PARTITION_KEYS_N49")]
