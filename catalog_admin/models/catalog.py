"""Catalogs, databases and the metastore's bookkeeping tables (VERSION, SEQUENCE_TABLE)."""

from django.db import models

from catalog_admin.models.base import HiveModel, hive_fk
from catalog_admin.schema import versioned

__all__ = ("Catalog", "Database", "DatabaseParam", "SchemaVersionRow", "Sequence")


class Catalog(HiveModel):
    """CTLGS: catalogs (Hive 3.0+); ``hive`` is the default one."""

    hive_since = "3.0.0"

    id = models.BigIntegerField(primary_key=True, db_column="CTLG_ID")
    name = models.CharField(max_length=256, null=True, unique=True, db_column="NAME")
    description = models.CharField(max_length=4000, null=True, db_column="DESC")
    location_uri = models.CharField(max_length=4000, db_column="LOCATION_URI")
    create_time = versioned(
        models.BigIntegerField(null=True, db_column="CREATE_TIME"),
        since="4.0.0-alpha-1",
    )

    class Meta(HiveModel.Meta):
        db_table = "CTLGS"


class Database(HiveModel):
    """DBS: one Hive database (schema)."""

    id = models.BigIntegerField(primary_key=True, db_column="DB_ID")
    description = models.CharField(max_length=4000, null=True, db_column="DESC")
    location_uri = models.CharField(max_length=4000, db_column="DB_LOCATION_URI")
    name = models.CharField(max_length=128, null=True, db_column="NAME")
    owner_name = models.CharField(max_length=128, null=True, db_column="OWNER_NAME")
    owner_type = models.CharField(max_length=10, null=True, db_column="OWNER_TYPE")
    catalog_name = versioned(
        models.CharField(max_length=256, null=True, db_column="CTLG_NAME"),
        since="3.0.0",
    )
    create_time = versioned(
        models.BigIntegerField(null=True, db_column="CREATE_TIME"),
        since="4.0.0-alpha-1",
    )
    managed_location_uri = versioned(
        models.CharField(max_length=4000, null=True, db_column="DB_MANAGED_LOCATION_URI"),
        since="4.0.0-alpha-1",
    )
    type = versioned(
        models.CharField(max_length=32, default="NATIVE", db_column="TYPE"),
        since="4.0.0-alpha-1",
    )
    dataconnector_name = versioned(
        models.CharField(max_length=128, null=True, db_column="DATACONNECTOR_NAME"),
        since="4.0.0-alpha-1",
    )
    remote_dbname = versioned(
        models.CharField(max_length=128, null=True, db_column="REMOTE_DBNAME"),
        since="4.0.0-alpha-1",
    )

    class Meta(HiveModel.Meta):
        db_table = "DBS"
        indexes = [models.Index(fields=["name"], name="UNIQUE_DATABASE")]

    def __str__(self) -> str:
        return self.name or ""


class DatabaseParam(HiveModel):
    """DATABASE_PARAMS: key/value properties of a database."""

    pk = models.CompositePrimaryKey("database_id", "key")
    database = hive_fk("Database", "DB_ID", related_name="params", null=False)
    key = models.CharField(max_length=180, db_column="PARAM_KEY")
    value = models.CharField(max_length=4000, null=True, db_column="PARAM_VALUE")

    class Meta(HiveModel.Meta):
        db_table = "DATABASE_PARAMS"


class SchemaVersionRow(HiveModel):
    """VERSION: the single row naming the metastore's schema version."""

    id = models.BigIntegerField(primary_key=True, db_column="VER_ID")
    schema_version = models.CharField(max_length=127, db_column="SCHEMA_VERSION")
    version_comment = models.CharField(max_length=255, null=True, db_column="VERSION_COMMENT")  # NULL on MySQL

    class Meta(HiveModel.Meta):
        db_table = "VERSION"


class Sequence(HiveModel):
    """SEQUENCE_TABLE: DataNucleus id allocation, one row per model class (``NEXT_VAL`` is the next free id)."""

    name = models.CharField(max_length=255, primary_key=True, db_column="SEQUENCE_NAME")
    next_val = models.BigIntegerField(db_column="NEXT_VAL")

    class Meta(HiveModel.Meta):
        db_table = "SEQUENCE_TABLE"
