"""
The planners of the database statements (issue 27): ``CREATE DATABASE``, ``ALTER DATABASE``, ``DROP DATABASE …
RESTRICT | CASCADE`` and the revert of each, every one a pure read returning a frozen :class:`DatabasePlan`.
"""

from __future__ import annotations

from typing import Any

from catalog_admin.selectors.metastores import Metastore
from operations.database_specs import AlterDatabase, CreateDatabase, DatabaseSpec, DropDatabase
from operations.planners.databases.alter import plan_alter_database
from operations.planners.databases.cascade import plan_drop_database_cascade
from operations.planners.databases.create import plan_create_database
from operations.planners.databases.drop import plan_drop_database
from operations.planners.databases.plan import DATABASE_FIELDS, DatabasePlan, DirectoryAction, DroppedTable
from operations.planners.databases.revert import plan_database_revert
from operations.planners.databases.state import ABSENT, DatabaseState, read_database_state

__all__ = (
    "ABSENT",
    "DATABASE_FIELDS",
    "DatabasePlan",
    "DatabaseState",
    "DirectoryAction",
    "DroppedTable",
    "plan_database",
    "plan_database_revert_of",
    "read_database_state",
)


def plan_database(metastore: Metastore, spec: DatabaseSpec) -> DatabasePlan:
    """The plan of ``spec`` on ``metastore``, built now."""
    state = read_database_state(metastore, spec.name)
    if isinstance(spec, CreateDatabase):
        return plan_create_database(metastore, state, spec)
    if isinstance(spec, AlterDatabase):
        return plan_alter_database(metastore, state, spec)
    if isinstance(spec, DropDatabase) and spec.cascade and state is not None:
        return plan_drop_database_cascade(metastore, state, spec)
    if isinstance(spec, DropDatabase):
        return plan_drop_database(metastore, state, spec)
    raise TypeError(f"{spec.kind} is planned from the execution it reverts")


def plan_database_revert_of(
    metastore: Metastore, *, execution_id: int, kind: str, image: dict[str, Any]
) -> DatabasePlan:
    """The plan undoing a database execution (its id, statement kind and before-image), built now."""
    state = read_database_state(metastore, str(image["name"]))
    return plan_database_revert(metastore, state, execution_id=execution_id, kind=kind, image=image)
