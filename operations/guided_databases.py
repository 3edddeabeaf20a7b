"""
The guided requests of the database statements (issue 27): ready-to-edit statements offered on a metastore's page
("Create database…") and on a database's page ("Alter database…", "Drop database…"), each only where the metastore's
Hive version has it. A read: the database's location and whether it holds tables.
"""

from __future__ import annotations

from catalog_admin.models import Database, Table
from catalog_admin.selectors.metastores import Metastore
from operations.ddl.render import quote_ident, quote_string
from operations.guided import GuidedOperation

__all__ = ("database_operations", "metastore_operations")


def metastore_operations(metastore: Metastore) -> tuple[GuidedOperation, ...]:
    """What a steward may start from on ``metastore``'s database list."""
    managed = " MANAGEDLOCATION '…'" if metastore.schema.capabilities.managed_locations else ""
    return (
        GuidedOperation(
            "create_database", "Create database…",
            "CREATE DATABASE IF NOT EXISTS new_database COMMENT '…' WITH DBPROPERTIES ('owner_team'='…')",
            f"The location defaults to the warehouse's new_database.db; LOCATION '…'{managed} must be inside the "
            "governed roots.",
        ),
    )  # fmt: skip


def database_operations(metastore: Metastore, name: str) -> tuple[GuidedOperation, ...]:
    """What a steward may start from on the page of database ``name`` (empty when it does not exist)."""
    database = Database.objects.using(metastore.alias).filter(name=name).values("pk", "location_uri").first()
    if database is None:
        return ()
    ref, capabilities = quote_ident(name), metastore.schema.capabilities
    ops = [
        GuidedOperation("database_properties", "Alter database: properties…",
                        f"ALTER DATABASE {ref} SET DBPROPERTIES ('owner_team'='…')", "Other properties stay."),
        GuidedOperation("database_owner", "Alter database: owner…", f"ALTER DATABASE {ref} SET OWNER ROLE new_owner"),
    ]  # fmt: skip
    if capabilities.database_set_location:
        ops.append(GuidedOperation("database_location", "Alter database: location…",
                                   f"ALTER DATABASE {ref} SET LOCATION {quote_string(database['location_uri'])}",
                                   "Hive's rule: existing tables stay where they are."))  # fmt: skip
    if capabilities.managed_locations:
        ops.append(GuidedOperation("database_managed_location", "Alter database: managed location…",
                                   f"ALTER DATABASE {ref} SET MANAGEDLOCATION '…'"))  # fmt: skip
    has_tables = Table.objects.using(metastore.alias).filter(database_id=database["pk"]).exists()
    hint = "Hive refuses it while tables remain: use CASCADE." if has_tables else "Its data goes to the trash."
    ops.append(GuidedOperation("drop_database", "Drop database…", f"DROP DATABASE {ref} RESTRICT", hint))
    if has_tables:
        ops.append(GuidedOperation("drop_database_cascade", "Drop database with its tables…",
                                   f"DROP DATABASE {ref} CASCADE",
                                   "Every table and view goes with it; managed data to the trash (undrop restores "
                                   "it)."))  # fmt: skip
    return tuple(ops)
