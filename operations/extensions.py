"""
What ``operations`` adds to ``catalog_admin``'s pages through its slots (``catalog_admin.extensions``): the change
links of the top bar with the "Waiting for me" count, and the "Change history" panel of a table's page.
Registered by ``OperationsConfig.ready``.
"""

from __future__ import annotations

from typing import Any

from django.template import Context

from catalog_admin.extensions import register_slot_content
from catalog_admin.selectors.acid import table_is_transactional
from catalog_admin.selectors.metastores import get_metastore
from catalog_admin.selectors.partitions import table_is_partitioned
from catalog_admin.selectors.tables import table_is_view
from operations.guided_databases import database_operations, metastore_operations
from operations.policy import can_request
from operations.selectors import inbox_count, table_history

__all__ = (
    "create_table_context",
    "database_requests_context",
    "metastore_requests_context",
    "navigation_context",
    "partition_repair_context",
    "register_page_slots",
    "table_history_context",
)


def register_page_slots() -> None:
    register_slot_content("navigation", "operations/inc/navigation.html", navigation_context)
    register_slot_content("table", "operations/inc/table_history.html", table_history_context)
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


def table_history_context(context: Context, *, metastore: str, database: str, table: str) -> dict[str, Any]:
    """The table's latest audit records, its names for the "Request a change" link (for stewards only), whether it
    is transactional (a "Request a compaction" link) and whether ``ANALYZE`` may run on it (a "Recompute statistics
    where stale" link: not a view, not transactional)."""
    user = context.get("user")
    transactional = table_is_transactional(metastore, database, table)
    return {
        "can_request": user is not None and bool(can_request(user)),
        "records": table_history(metastore, database, table),
        "metastore": metastore,
        "database": database,
        "table": table,
        "transactional": transactional,
        "partitioned": table_is_partitioned(metastore, database, table),
        "analyzable": not transactional and not table_is_view(metastore, database, table),
    }


def partition_repair_context(
    context: Context, *, metastore: str, database: str, table: str, anomaly: str = ""
) -> dict[str, Any]:
    """The partition list's repair actions (for those who may request changes): on the "missing on disk" list, a guided
    ``MSCK REPAIR TABLE`` request; on the "stale statistics" list, a guided ``ANALYZE … WITH ('only_stale'='true')``
    (a transactional table's partitions aside: ANALYZE refuses them)."""
    user = context.get("user")
    stale = anomaly == "stale" and not table_is_transactional(metastore, database, table)
    return {
        "can_request": user is not None and bool(can_request(user)),
        "missing": anomaly == "missing",
        "stale": stale,
        "metastore": metastore,
        "database": database,
        "table": table,
    }


def create_table_context(context: Context, *, metastore: str, database: str) -> dict[str, Any]:
    """The database's names for the "Create table…" link (for stewards only)."""
    user = context.get("user")
    return {"can_request": user is not None and bool(can_request(user)), "metastore": metastore, "database": database}
