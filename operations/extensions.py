"""
What ``operations`` adds to ``catalog_admin``'s pages through its slots (``catalog_admin.extensions``): the change
links of the top bar with the "Waiting for me" count, the actions in the head of a table's and a partition's page,
and the table's "Change history" panel.
Registered by ``OperationsConfig.ready``.
"""

from __future__ import annotations

from typing import Any

from django.template import Context

from catalog_admin.extensions import register_slot_content
from catalog_admin.selectors.acid import table_is_transactional
from catalog_admin.selectors.metastores import get_metastore
from catalog_admin.selectors.tables import TableTraits, table_root
from operations.ddl.render import quote_string
from operations.guided import partition_operations
from operations.guided_databases import database_operations, metastore_operations
from operations.policy import can_request
from operations.selectors import inbox_count, table_history

__all__ = (
    "create_table_context",
    "database_requests_context",
    "metastore_requests_context",
    "navigation_context",
    "partition_actions_context",
    "partition_repair_context",
    "register_page_slots",
    "table_actions_context",
    "table_history_context",
)


def register_page_slots() -> None:
    register_slot_content("navigation", "operations/inc/navigation.html", navigation_context)
    register_slot_content("table_actions", "operations/inc/table_actions.html", table_actions_context)
    register_slot_content("table", "operations/inc/table_history.html", table_history_context)
    register_slot_content("partition_actions", "operations/inc/partition_actions.html", partition_actions_context)
    register_slot_content("metastore", "operations/inc/guided_requests.html", metastore_requests_context)
    register_slot_content("database", "operations/inc/guided_requests.html", database_requests_context)
    register_slot_content("database", "operations/inc/database_requests.html", create_table_context)
    register_slot_content("partitions", "operations/inc/partition_repair.html", partition_repair_context)


def metastore_requests_context(context: Context, *, metastore: str) -> dict[str, Any]:
    """The database statements a steward may request on a metastore's page ("Create database…")."""
    user = context.get("user")
    allowed = user is not None and bool(can_request(user))
    operations = metastore_operations(get_metastore(metastore)) if allowed else ()
    return {"guided": operations, "metastore": metastore, "guided_id": "metastore-requests"}


def database_requests_context(context: Context, *, metastore: str, database: str) -> dict[str, Any]:
    """The database statements a steward may request on a database's page ("Alter database…", "Drop database…")."""
    user = context.get("user")
    allowed = user is not None and bool(can_request(user))
    operations = database_operations(get_metastore(metastore), database) if allowed else ()
    return {"guided": operations, "metastore": metastore, "guided_id": "database-requests"}


def navigation_context(context: Context) -> dict[str, Any]:
    """How many submitted requests wait for the signed-in user's decision (0 for non-approvers), and whether the
    user may request changes (viewers are not offered "+ New request")."""
    user = context.get("user")
    signed_in = user is not None and user.is_authenticated
    return {"waiting": inbox_count(user) if signed_in else 0, "can_request": signed_in and bool(can_request(user))}


def table_actions_context(
    context: Context, *, metastore: str, database: str, table: str, traits: TableTraits
) -> dict[str, Any]:
    """The head of a table's page: "Request a change…" for stewards, with "Drop partitions…" and "Repair
    partitions…" on a partitioned table, "Request a compaction…" on a transactional one, and "Recompute statistics
    where stale" where ``ANALYZE`` may run (not a view, not transactional). ``traits``: what the page read."""
    user = context.get("user")
    allowed = user is not None and bool(can_request(user))
    traits = traits if allowed else TableTraits()
    return {
        "can_request": allowed,
        "metastore": metastore,
        "database": database,
        "table": table,
        "transactional": traits.transactional,
        "partitioned": traits.partitioned,
        "analyzable": allowed and not traits.transactional and not traits.view,
    }


def partition_actions_context(
    context: Context, *, metastore: str, database: str, table: str, partition: str
) -> dict[str, Any]:
    """The head of a partition's page: requests on that partition (drop, rename, truncate) for stewards."""
    user = context.get("user")
    allowed = user is not None and bool(can_request(user))
    qualified = f"{database}.{table}"
    return {
        "guided": partition_operations(get_metastore(metastore), qualified, partition) if allowed else (),
        "metastore": metastore,
        "qualified": qualified,
    }


def table_history_context(context: Context, *, metastore: str, database: str, table: str) -> dict[str, Any]:
    """The table's latest audit records and its names (the "Who can read this" link)."""
    return {
        "records": table_history(metastore, database, table),
        "metastore": metastore,
        "database": database,
        "table": table,
    }


def partition_repair_context(
    context: Context, *, metastore: str, database: str, table: str, anomaly: str = ""
) -> dict[str, Any]:
    """The partition list's repair actions, for those who may request changes: on the "missing on disk" list, a
    guided ``MSCK REPAIR TABLE`` request and, where the version has it (3.0+), ``MSCK REPAIR TABLE … DROP
    PARTITIONS`` (only the missing dropped); on the "stale statistics" list, a guided ``ANALYZE … WITH
    ('only_stale'='true')`` (a transactional table's partitions aside: ANALYZE refuses them); on the "outside the
    table root" list, moving them in (``SET LOCATION '<its own root>' WITH DATA``: a relocation of those only)."""
    user = context.get("user")
    allowed = user is not None and bool(can_request(user))
    missing = allowed and anomaly == "missing"
    transactional = allowed and anomaly in ("stale", "outside") and table_is_transactional(metastore, database, table)
    stale = allowed and anomaly == "stale" and not transactional
    drops = missing and get_metastore(metastore).schema.capabilities.msck_drops_partitions
    ref = "`" + database.replace("`", "``") + "`.`" + table.replace("`", "``") + "`"
    root = table_root(metastore, database, table) if allowed and anomaly == "outside" and not transactional else None
    return {
        "can_request": allowed,
        "missing": anomaly == "missing",
        "stale": stale,
        "drop_missing": f"MSCK REPAIR TABLE {ref} DROP PARTITIONS" if drops else "",
        "move_in": f"ALTER TABLE {ref} SET LOCATION {quote_string(root)} WITH DATA" if root else "",
        "metastore": metastore,
        "database": database,
        "table": table,
    }


def create_table_context(context: Context, *, metastore: str, database: str) -> dict[str, Any]:
    """The database's names for the "Create table…" link (for stewards only)."""
    user = context.get("user")
    return {"can_request": user is not None and bool(can_request(user)), "metastore": metastore, "database": database}
