"""
The revert of ``ADD PARTITION`` and ``MSCK REPAIR TABLE``: the partitions the execution added (the ids of its
``PARTITIONS`` block, those still there) are dropped with every dependent row, as ``DROP PARTITION`` would; the
directories it created go only while still empty (files written there since are never deleted). The partitions an
MSCK dropped come back from the before-image (``services/revert``'s re-inserts).
"""

from __future__ import annotations

from typing import Any

from catalog_admin.models import Partition
from catalog_admin.selectors.metastores import Metastore
from operations.planners.partitions.add_rows import ADDED
from operations.planners.partitions.drop_steps import drop_steps
from operations.preview import Step
from operations.sql import MetastoreSql
from operations.table_state import TableState

__all__ = ("ADDING_KINDS", "added_partitions_revert")

ADDING_KINDS = ("add_partitions", "msck_repair")


def added_partitions_revert(
    metastore: Metastore, state: TableState, image: dict[str, Any]
) -> tuple[list[Step], list[int], tuple[str, ...]]:
    """The steps dropping what the execution added, the partition ids they drop, the directories to remove if empty."""
    first = image.get("allocated_ids", {}).get(f"PARTITIONS:{ADDED}")
    count = int(image.get("added_count") or 0)
    if first is None or not count:
        return [], [], ()
    rows = Partition.objects.using(metastore.alias).filter(table_id=state.table_id, id__gte=first, id__lt=first + count)
    found = sorted(rows.values_list("id", "sd_id"))
    ids = [part_id for part_id, _sd in found]
    steps = drop_steps(metastore, MetastoreSql(metastore.alias), ids, [sd for _id, sd in found if sd])
    return steps, ids, tuple(image.get("created_directories", ()))
