"""
Which notification events Hive writes for each statement the console executes (a pure read of the plan).

Hive writes them from ``DbNotificationListener`` (a transactional listener, so in the metastore transaction):

- every ``alter_table`` (rename in one database, columns with or without CASCADE, properties, SerDe, owner,
  ``SET LOCATION``): one ``ALTER_TABLE`` (``HiveAlterHandler.alterTable`` notifies ``EventType.ALTER_TABLE`` once;
  the partitions it rewrites for a rename or CASCADE go through ``msdb.alterPartition(s)`` directly, with no event);
- a partition's ``RENAME TO PARTITION`` or ``SET LOCATION``: one ``ALTER_PARTITION``
  (``HMSHandler.rename_partition`` / ``alter_partition`` → ``HiveAlterHandler.alterPartition``);
- rewriting many partitions at once is Hive's ``alter_partitions``: one ``ALTER_PARTITION`` per partition
  (``HMSHandler.alter_partitions_with_environment_context``);
- ``DROP PARTITION``: one ``DROP_PARTITION`` per partition (``HMSHandler.drop_partitions_req``);
- a revert writes the events of the inverse statement: ``ALTER_TABLE`` / ``ALTER_PARTITION`` again, and putting
  dropped partitions back is ``add_partitions``: one ``ADD_PARTITION`` carrying all of them
  (``HMSHandler.add_partitions_core``).

Hive 3.1 and 4.0 write a rename into *another* database as ``DROP_TABLE`` + ``CREATE_TABLE`` and, for a partitioned
table, one ``ADD_PARTITION`` carrying every partition (``HiveAlterHandler.alterTable``: "otherwise a rename between
databases is considered a DROP_TABLE from the old database and a CREATE_TABLE in the new database plus ADD_PARTITION
operations if needed"); Hive 2.3 writes one ``ALTER_TABLE`` for any rename.
"""

from __future__ import annotations

from typing import Any

from catalog_admin.selectors.metastores import Metastore
from operations.events.messages import message_format
from operations.events.thrift_json import at_least
from operations.models import Execution
from operations.preview import PlannedEvents, Preview
from operations.specs import (
    DropPartitions,
    RenamePartition,
    RenameTable,
    RevertExecution,
    RewritePartitionLocations,
    SetLocation,
)
from operations.table_state import TableState

__all__ = (
    "ADD_PARTITION",
    "ALTER_PARTITION",
    "ALTER_TABLE",
    "CREATE_TABLE",
    "DROP_PARTITION",
    "DROP_TABLE",
    "plan_events",
)

ALTER_TABLE = "ALTER_TABLE"
ALTER_PARTITION = "ALTER_PARTITION"
DROP_PARTITION = "DROP_PARTITION"
ADD_PARTITION = "ADD_PARTITION"
DROP_TABLE = "DROP_TABLE"
CREATE_TABLE = "CREATE_TABLE"


def plan_events(metastore: Metastore, state: TableState, preview: Preview) -> PlannedEvents | None:
    """The events executing ``preview`` writes; ``None`` when events are off for the metastore or nothing runs."""
    if not metastore.config.events or not preview.steps or preview.blockers:
        return None
    counts, partitions = _events_of(metastore, state, preview)
    return PlannedEvents(
        table_id=state.table_id,
        counts=counts,
        message_format=message_format(metastore.schema.version),
        partitions=partitions,
        partition_keys=tuple(k.name for k in state.partition_keys),
    )


def _events_of(
    metastore: Metastore, state: TableState, preview: Preview
) -> tuple[tuple[tuple[str, int], ...], dict[str, Any] | None]:
    spec = preview.spec
    if isinstance(spec, RenameTable) and _across_databases(metastore, spec):
        added = ((ADD_PARTITION, 1),) if state.partition_keys else ()  # "plus ADD_PARTITION operations if needed"
        return ((DROP_TABLE, 1), (CREATE_TABLE, 1), *added), {"all": True}
    if isinstance(spec, RevertExecution):
        return _revert_events(spec.execution_id)
    if isinstance(spec, DropPartitions) and preview.scope is not None:
        return ((DROP_PARTITION, preview.scope.count),), preview.scope.selection
    if isinstance(spec, RenamePartition) and preview.scope is not None:
        return ((ALTER_PARTITION, 1),), {"ids": [preview.inverse["partition"]["id"]]}
    if isinstance(spec, SetLocation) and preview.scope is not None:
        return ((ALTER_PARTITION, 1),), {"names": preview.scope.selection["names"][:1]}
    if isinstance(spec, RewritePartitionLocations):
        return ((ALTER_PARTITION, preview.partitions_touched),), {"prefixes": [spec.old_prefix]}
    return ((ALTER_TABLE, 1),), None


def _revert_events(execution_id: int) -> tuple[tuple[tuple[str, int], ...], dict[str, Any] | None]:
    """The inverse statement's events: dropped partitions come back in one ADD_PARTITION."""
    execution = Execution.objects.get(pk=execution_id)
    kind, image = execution.operation["kind"], execution.before_image
    if kind == "drop_partitions":
        ids = sorted(row["PART_ID"] for row in image.get("deleted_rows", {}).get("PARTITIONS", []))
        return ((ADD_PARTITION, 1),), {"ids": ids}
    if kind == "rename_partition":
        return ((ALTER_PARTITION, 1),), {"ids": [image["partition"]["id"]]}
    if kind == "set_location" and execution.operation.get("partition"):
        return ((ALTER_PARTITION, 1),), {"sd_ids": [image["sd_id"]]}
    return ((ALTER_TABLE, 1),), None


def _across_databases(metastore: Metastore, spec: RenameTable) -> bool:
    """Hive 3.1+ splits a rename into another database into DROP_TABLE, CREATE_TABLE and ADD_PARTITION."""
    return at_least(metastore.schema.version, 3) and spec.new.database.lower() != spec.target.database.lower()
