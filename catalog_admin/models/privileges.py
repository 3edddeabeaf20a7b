"""Privileges granted on databases, tables and partitions."""

from django.db import models

from catalog_admin.models.base import HiveModel, hive_fk
from catalog_admin.schema import versioned

__all__ = ("DatabasePrivilege", "PartitionColumnPrivilege", "PartitionPrivilege", "TablePrivilege")


class PrivilegeFields(HiveModel):
    """The grant columns shared by DB_PRIVS, TBL_PRIVS and PART_PRIVS."""

    create_time = models.BigIntegerField(db_column="CREATE_TIME")
    grant_option = models.SmallIntegerField(db_column="GRANT_OPTION")
    grantor = models.CharField(max_length=128, null=True, db_column="GRANTOR")
    grantor_type = models.CharField(max_length=128, null=True, db_column="GRANTOR_TYPE")
    principal_name = models.CharField(max_length=128, null=True, db_column="PRINCIPAL_NAME")
    principal_type = models.CharField(max_length=128, null=True, db_column="PRINCIPAL_TYPE")
    authorizer = versioned(
        models.CharField(max_length=128, null=True, db_column="AUTHORIZER"),
        since="3.0.0",
    )

    class Meta(HiveModel.Meta):
        abstract = True


class DatabasePrivilege(PrivilegeFields):
    """DB_PRIVS: a privilege on a database."""

    id = models.BigIntegerField(primary_key=True, db_column="DB_GRANT_ID")
    database = hive_fk("Database", "DB_ID", related_name="privileges")
    privilege = models.CharField(max_length=128, null=True, db_column="DB_PRIV")

    class Meta(HiveModel.Meta):
        db_table = "DB_PRIVS"


class TablePrivilege(PrivilegeFields):
    """TBL_PRIVS: a privilege on a table."""

    id = models.BigIntegerField(primary_key=True, db_column="TBL_GRANT_ID")
    table = hive_fk("Table", "TBL_ID", related_name="privileges")
    privilege = models.CharField(max_length=128, null=True, db_column="TBL_PRIV")

    class Meta(HiveModel.Meta):
        db_table = "TBL_PRIVS"
        indexes = [models.Index(fields=["table"], name="TBL_PRIVS_N49")]


class PartitionPrivilege(PrivilegeFields):
    """PART_PRIVS: a privilege on a partition."""

    id = models.BigIntegerField(primary_key=True, db_column="PART_GRANT_ID")
    partition = hive_fk("Partition", "PART_ID", related_name="privileges")
    privilege = models.CharField(max_length=128, null=True, db_column="PART_PRIV")

    class Meta(HiveModel.Meta):
        db_table = "PART_PRIVS"
        indexes = [models.Index(fields=["partition"], name="PART_PRIVS_N49")]


class PartitionColumnPrivilege(PrivilegeFields):
    """PART_COL_PRIVS: a privilege on one column of a partition."""

    id = models.BigIntegerField(primary_key=True, db_column="PART_COLUMN_GRANT_ID")
    column_name = models.CharField(max_length=767, null=True, db_column="COLUMN_NAME")
    partition = hive_fk("Partition", "PART_ID", related_name="column_privileges")
    privilege = models.CharField(max_length=128, null=True, db_column="PART_COL_PRIV")

    class Meta(HiveModel.Meta):
        db_table = "PART_COL_PRIVS"
