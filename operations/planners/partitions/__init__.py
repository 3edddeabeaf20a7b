"""
Partition changes: ``PARTITION (…) RENAME TO PARTITION (…)`` (rule 17, :mod:`.rename`) and ``DROP PARTITION`` by
spec or by range of values (:mod:`.drop`). Their directories (:mod:`.directories`), where a drop's data goes
(:mod:`.trash`), the partitions a drop names (:mod:`.matching`), its statements (:mod:`.drop_steps`) and the ACID
bookkeeping (:mod:`.bookkeeping`) live beside.
"""

from operations.planners.partitions.bookkeeping import (
    PARTITION_BOOKKEEPING,
    bookkeeping_names_in_use,
    partition_bookkeeping,
    relabel_bookkeeping_steps,
)
from operations.planners.partitions.directories import TRASH_DIR
from operations.planners.partitions.drop import plan_drop_partitions
from operations.planners.partitions.rename import plan_rename_partition

__all__ = (
    "PARTITION_BOOKKEEPING",
    "TRASH_DIR",
    "bookkeeping_names_in_use",
    "partition_bookkeeping",
    "plan_drop_partitions",
    "plan_rename_partition",
    "relabel_bookkeeping_steps",
)
