"""
Id allocation from SEQUENCE_TABLE, the way DataNucleus (and so Hive) allocates them: the one allocator used by the
console's executions and by the seeder.
"""

from __future__ import annotations

from django.db import connections
from django.db.models import Model

from catalog_admin.models import Sequence

__all__ = ("DATANUCLEUS_CLASSES", "MODEL_SEQUENCES", "allocate_ids", "reserve_ids", "sequence_name")

SEQUENCE_PREFIX = "org.apache.hadoop.hive.metastore.model."
# The DataNucleus class (SEQUENCE_TABLE row) of each metastore table whose ids come from SEQUENCE_TABLE.
DATANUCLEUS_CLASSES = {
    "CTLGS": "MCatalog",
    "DBS": "MDatabase",
    "DB_PRIVS": "MDBPrivilege",
    "SERDES": "MSerDeInfo",
    "CDS": "MColumnDescriptor",
    "SDS": "MStorageDescriptor",
    "TBLS": "MTable",
    "TBL_PRIVS": "MTablePrivilege",
    "TBL_COL_PRIVS": "MTableColumnPrivilege",
    "ROLES": "MRole",
    "ROLE_MAP": "MRoleMap",
    "PARTITIONS": "MPartition",
    "TAB_COL_STATS": "MTableColumnStatistics",
    "PART_COL_STATS": "MPartitionColumnStatistics",
    "NOTIFICATION_LOG": "MNotificationLog",
    "NOTIFICATION_SEQUENCE": "MNotificationNextId",
}
# SEQUENCE_TABLE row per metastore table the console's executions insert into.
MODEL_SEQUENCES = {
    table: SEQUENCE_PREFIX + DATANUCLEUS_CLASSES[table]
    for table in ("CDS", "SDS", "SERDES", "PARTITIONS", "TBLS", "PART_COL_STATS", "TAB_COL_STATS")
}


def sequence_name(model: type[Model]) -> str:
    """The SEQUENCE_TABLE row of ``model``'s ids: ``org.apache.hadoop.hive.metastore.model.MTable`` for TBLS."""
    return SEQUENCE_PREFIX + DATANUCLEUS_CLASSES[model._meta.db_table]


def allocate_ids(alias: str, model: type[Model], count: int) -> int:
    """Reserve ``count`` ids for ``model`` in metastore ``alias`` and return the first; call inside its transaction.

    ``NEXT_VAL`` is raised past the block (and past any id already used), so a running Hive, which caches blocks from
    this table, never hands out the same ids; a missing row starts at the highest id + 1.
    """
    return reserve_ids(alias, model._meta.db_table, model._meta.pk.column, sequence_name(model), count)


def reserve_ids(alias: str, table: str, id_column: str, sequence: str, count: int) -> int:
    """``allocate_ids`` for any metastore table by name (the merge reserves tables the console has no model of):
    the ``SEQUENCE_TABLE`` row locked ``FOR UPDATE``, the block started past it and past ``MAX(id_column)``."""
    connection = connections[alias]
    quote = connection.ops.quote_name
    sequences, name_column, next_column = (
        quote(Sequence._meta.db_table),
        quote(Sequence._meta.get_field("name").column),
        quote(Sequence._meta.get_field("next_val").column),
    )
    lock = f"SELECT {next_column} FROM {sequences} WHERE {name_column} = %s"
    if connection.features.has_select_for_update:
        lock += " FOR UPDATE"
    with connection.cursor() as cursor:
        cursor.execute(lock, [sequence])
        row = cursor.fetchone()
        cursor.execute(f"SELECT MAX({quote(id_column)}) FROM {quote(table)}")
        used = int(cursor.fetchone()[0] or 0) + 1
        start = max(used, int(row[0]) if row else 1)
        if row is None:
            cursor.execute(
                f"INSERT INTO {sequences} ({name_column}, {next_column}) VALUES (%s, %s)", [sequence, start + count]
            )
        else:
            cursor.execute(
                f"UPDATE {sequences} SET {next_column} = %s WHERE {name_column} = %s", [start + count, sequence]
            )
    return start
