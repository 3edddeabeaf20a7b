"""
The revert of a database execution (issue 27), from its before-image: a created database dropped again (its directory
removed when the console made it and it is still empty, else trashed), an altered one given its old columns and
parameters back, a dropped one restored (undrop) with the same id, parameters and privileges and its directory moved
back from the trash. The undrop of a ``DROP DATABASE … CASCADE`` also puts back every row of its tables as the drop kept
them (same ids, parents first: ``drop_table_steps.reinsert_steps``) and their data from the trash, and its functions,
with the events Hive's client would see for them (CREATE_TABLE and one ADD_PARTITION per partitioned table, then
CREATE_FUNCTION per function). Refused, naming why, when
the database is no longer as the execution left it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.db import connections

from catalog_admin.locations import filesystem_for
from catalog_admin.selectors.metastores import Metastore
from operations.database_specs import RevertDatabase
from operations.events.databases import ADD_PARTITION, ALTER_DATABASE, CREATE_DATABASE, CREATE_TABLE, DROP_DATABASE
from operations.events.functions import CREATE_FUNCTION
from operations.planners.databases.locations import RULE, removal
from operations.planners.databases.plan import DatabasePlan, DirectoryAction, DroppedTable
from operations.planners.databases.state import ABSENT, DatabaseState, read_rows
from operations.planners.drop_table_steps import reinsert_steps
from operations.risk import RiskCriterion
from operations.rules import Finding

__all__ = ("plan_database_revert",)


def plan_database_revert(
    metastore: Metastore, state: DatabaseState | None, *, execution_id: int, kind: str, image: dict[str, Any]
) -> DatabasePlan:
    """The plan undoing execution ``execution_id`` of a ``kind`` statement (``create_database``, ``alter_database``,
    ``drop_database``) whose before-image is ``image``; ``state``: the database as it is now."""
    name = str(image["name"])
    spec = RevertDatabase(name=name, execution=execution_id)
    base: dict[str, Any] = {
        "metastore": metastore.name,
        "schema_version": str(metastore.schema.version),
        "spec": spec,
        "database": name,
        "reverts": execution_id,
        "state_fingerprint": state.fingerprint if state else ABSENT,
    }
    if kind == "drop_database":
        return _undrop(metastore, state, image, base)
    if state is None or state.id != image["database_id"]:
        gone = Finding(
            "changed_since",
            RULE,
            f"Database {name} is not the one execution #{execution_id} "
            f"{'created' if kind == 'create_database' else 'altered'} (id {image['database_id']}).",
        )
        return DatabasePlan(**base, blockers=(gone,))
    if kind == "create_database":
        return _drop_created(metastore, state, image, base)
    return _restore_altered(metastore, state, image, base)


def _drop_created(
    metastore: Metastore, state: DatabaseState, image: dict[str, Any], base: dict[str, Any]
) -> DatabasePlan:
    blockers = []
    if state.tables or state.functions:
        blockers.append(
            Finding(
                "not_empty",
                RULE,
                f"Database {state.name} is not empty any more ({state.tables:,} "
                f"table(s), {state.functions:,} function(s)): drop them first.",
            )
        )
    directories = []
    for location, levels in image.get("created_directories", []):
        action, found = removal(metastore, location, state.name, state.fingerprint)
        if action is not None and action.action == "remove":
            action = replace(action, levels=int(levels))  # the parents the creation made go too
        directories += [action] if action is not None else []
        blockers += [f for f in found if f.severity != "warning"]
    why = f"Database {state.name} (id {state.id}), created by execution #{base['reverts']}, is dropped again."
    return DatabasePlan(
        **base,
        database_id=state.id,
        delete=True,
        params_delete=tuple(k for k, _ in state.params),
        directories=tuple(directories),
        event=DROP_DATABASE if metastore.config.events else "",
        diff=tuple((c, v, None) for c, v in state.row.items() if v is not None),
        blockers=tuple(blockers),
        criteria=(RiskCriterion("database_dropped", why),),
        inverse={"privileges": len(state.privileges)},
    )


def _restore_altered(
    metastore: Metastore, state: DatabaseState, image: dict[str, Any], base: dict[str, Any]
) -> DatabasePlan:
    if state.fingerprint != image.get("after_fingerprint"):
        changed = Finding(
            "changed_since",
            RULE,
            f"Database {state.name} changed after execution #{base['reverts']}: "
            "its revert would undo more than that execution did.",
        )
        return DatabasePlan(**base, database_id=state.id, blockers=(changed,))
    old_row, old_params, now_params = image["row"], dict(image["params"]), dict(state.params)
    update = tuple((c, old_row.get(c)) for c, v in state.row.items() if old_row.get(c) != v)
    touched = sorted(k for k in set(old_params) | set(now_params) if old_params.get(k) != now_params.get(k))
    diff = tuple((c, state.row.get(c), v) for c, v in update)
    diff += tuple((f"param:{k}", now_params.get(k), old_params.get(k)) for k in touched)
    capabilities = metastore.schema.capabilities
    event = ALTER_DATABASE if metastore.config.events and capabilities.alter_database_writes_event else ""
    why = f"Database {state.name} gets back what it had before execution #{base['reverts']}."
    return DatabasePlan(
        **base,
        database_id=state.id,
        update=update,
        params_set=tuple((k, old_params[k]) for k in touched if old_params.get(k) is not None),
        params_delete=tuple(k for k in touched if k in now_params),
        event=event,
        diff=diff,
        criteria=(RiskCriterion("database_altered", why),),
    )


def _undrop(
    metastore: Metastore, state: DatabaseState | None, image: dict[str, Any], base: dict[str, Any]
) -> DatabasePlan:
    row, name = dict(image["row"]), str(image["name"])
    blockers = []
    if state is not None:
        blockers.append(
            Finding(
                "already_exists",
                RULE,
                f"Database {name} exists again (id {state.id}): the dropped one cannot be restored under its name.",
            )
        )
    if read_rows(metastore, "DBS", f"{connections[metastore.alias].ops.quote_name('DB_ID')} = %s", [row["DB_ID"]]):
        blockers.append(Finding("id_taken", RULE, f"DB_ID {row['DB_ID']} is used by another database."))
    directories, found = _restorations(image.get("trashed", []), image.get("removed", []))
    blockers += found
    deleted = image.get("deleted_rows") or {}
    tables = tuple(DroppedTable(**t) for t in image.get("tables", []))
    events = metastore.config.events
    partitioned = len({r["TBL_ID"] for r in deleted.get("PARTITIONS", [])})
    functions = len(deleted.get("FUNCS", []))
    why = (
        f"Database {name} is restored with id {row['DB_ID']}, its parameters, privileges and data"
        + (f", and its {len(tables):,} table(s) with theirs" if tables else "")
        + (f", and its {functions:,} function(s)." if functions else ".")
    )
    return DatabasePlan(
        **base,
        database_id=int(row["DB_ID"]),
        insert=row,
        params_set=tuple((str(k), v) for k, v in image["params"]),
        privileges=tuple(image.get("privileges", [])),
        directories=directories,
        event=CREATE_DATABASE if events else "",
        diff=tuple((c, None, v) for c, v in row.items() if v is not None),
        blockers=tuple(blockers),
        criteria=(RiskCriterion("database_created", why),),
        steps=tuple(reinsert_steps(metastore, deleted)) if deleted and not blockers else (),
        tables=tables,
        table_events=tuple(
            (kind, count)
            for kind, count in ((CREATE_TABLE, len(tables)), (ADD_PARTITION, partitioned), (CREATE_FUNCTION, functions))
            if count
        )
        if events
        else (),
    )


def _restorations(trashed: list[list[str]], removed: list[str]) -> tuple[tuple[DirectoryAction, ...], list[Finding]]:
    """Each trashed directory moved back (its trash still there, its place free), each removed one made again."""
    actions, found = [], []
    for source, trash in trashed:
        filesystem = filesystem_for(source)
        if not filesystem.exists(trash):
            found.append(
                Finding(
                    "trash_missing",
                    RULE,
                    f"{trash} (the dropped database's data) is no longer in the trash: it cannot be restored.",
                )
            )
        elif filesystem.exists(source):
            found.append(
                Finding(
                    "destination_exists", RULE, f"{source} exists again: the data in the trash cannot move back there."
                )
            )
        else:
            actions.append(DirectoryAction("restore", trash, source))
    actions += [
        DirectoryAction("create", location)
        for location in removed
        if filesystem_for(location).exists(location) is False
    ]
    return tuple(actions), found
