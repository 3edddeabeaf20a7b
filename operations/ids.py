"""Id allocation from SEQUENCE_TABLE, the way DataNucleus (and so Hive) allocates them."""

from __future__ import annotations

from django.db import connections
from django.db.models import Max, Model

from catalog_admin.models import Sequence
from catalog_admin.selectors.metastores import Metastore

__all__ = ("MODEL_SEQUENCES", "allocate_ids")

PREFIX = "org.apache.hadoop.hive.metastore.model."
# SEQUENCE_TABLE row per metastore table the console inserts into.
MODEL_SEQUENCES = {
    "CDS": PREFIX + "MColumnDescriptor",
    "SDS": PREFIX + "MStorageDescriptor",
    "SERDES": PREFIX + "MSerDeInfo",
    "PARTITIONS": PREFIX + "MPartition",
    "TBLS": PREFIX + "MTable",
    "PART_COL_STATS": PREFIX + "MPartitionColumnStatistics",
    "TAB_COL_STATS": PREFIX + "MTableColumnStatistics",
}


def allocate_ids(metastore: Metastore, model: type[Model], count: int) -> int:
    """Reserve ``count`` ids for ``model`` and return the first; call inside the metastore transaction.

    ``NEXT_VAL`` is raised past the block (and past any id already used), so a running Hive, which caches
    blocks from this table, never hands out the same ids.
    """
    name = MODEL_SEQUENCES[model._meta.db_table]
    alias = metastore.alias
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
