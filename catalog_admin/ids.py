"""
Id allocation from SEQUENCE_TABLE, the way DataNucleus (and so Hive) allocates them: the one allocator used by the
console's executions and by the seeder.
"""

from __future__ import annotations

from django.db import connections
from django.db.models import Max, Model

from catalog_admin.models import Sequence

__all__ = ("DATANUCLEUS_CLASSES", "MODEL_SEQUENCES", "allocate_ids", "sequence_name")

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
    name = sequence_name(model)
    used = (model.objects.using(alias).aggregate(top=Max("pk"))["top"] or 0) + 1
    rows = Sequence.objects.using(alias).filter(name=name)
    if connections[alias].features.has_select_for_update:
        rows = rows.select_for_update()
    row = rows.first()
    start = max(used, row.next_val if row else 1)
    if row is None:
        Sequence.objects.using(alias).create(name=name, next_val=start + count)
    else:
        rows.update(next_val=start + count)
    return start
