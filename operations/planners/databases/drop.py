"""
``DROP DATABASE [IF EXISTS] d [RESTRICT]`` (issue 27) as ``HMSHandler.drop_database_core`` runs it: ``default`` is
never dropped ("Can not drop default database"), a database that tables or functions still name is refused without
CASCADE ("Database d is not empty. One or more tables exist."), then ``ObjectStore.dropDatabase`` deletes its
privileges (DB_PRIVS), parameters and row, DROP_DATABASE is fired, and the directory is deleted (``wh.deleteDir``).
The console never deletes data: a directory that holds anything goes to its trash, an empty one is removed; the
before-image keeps every row, so a revert restores the database with the same id, parameters and privileges.

``CASCADE`` of an existing database is :mod:`.cascade`'s (``plan_database`` chooses); a missing one is this module's
either way (``IF EXISTS``: nothing to do).
"""

from __future__ import annotations

from catalog_admin.selectors.metastores import Metastore
from operations.database_specs import DropDatabase
from operations.events.databases import DROP_DATABASE
from operations.planners.databases.locations import RULE, removal
from operations.planners.databases.plan import DatabasePlan, DirectoryAction
from operations.planners.databases.state import ABSENT, DatabaseState
from operations.risk import RiskCriterion
from operations.rules import Finding

__all__ = ("default_blockers", "plan_drop_database")

DEFAULT_DATABASE = "default"


def plan_drop_database(metastore: Metastore, state: DatabaseState | None, spec: DropDatabase) -> DatabasePlan:
    """The plan of ``spec`` on ``metastore``, where the database is ``state`` (``None``: it does not exist)."""
    version = str(metastore.schema.version)
    if state is None:
        if spec.if_exists:
            noop = Finding(
                "absent_noop", RULE, f"Database {spec.name} does not exist: IF EXISTS makes this a no-op.", "warning"
            )
            return DatabasePlan(metastore.name, version, spec, spec.name, ABSENT, warnings=(noop,), noop=True)
        missing = Finding("no_such_database", RULE, f"Database does not exist: {spec.name}")
        return DatabasePlan(metastore.name, version, spec, spec.name, ABSENT, blockers=(missing,))
    blockers = default_blockers(state) + _not_empty(state)
    directories: list[DirectoryAction] = []
    warnings: list[Finding] = []
    for location in dict.fromkeys(d for d in (state.location, state.managed_location) if d):
        action, found = removal(metastore, location, state.name, state.fingerprint)
        directories += [action] if action is not None else []
        (warnings if all(f.severity == "warning" for f in found) else blockers).extend(found)
    trashed = [d for d in directories if d.action == "trash"]
    files = sum(d.files or 0 for d in trashed)
    why = f"Database {spec.name} (id {state.id}) is dropped" + (
        f"; {files:,} file(s) go to the console's trash." if trashed else "; its directory holds no file."
    )
    return DatabasePlan(
        metastore=metastore.name,
        schema_version=version,
        spec=spec,
        database=spec.name,
        state_fingerprint=state.fingerprint,
        database_id=state.id,
        delete=True,
        params_delete=tuple(k for k, _ in state.params),
        directories=tuple(directories),
        event=DROP_DATABASE if metastore.config.events else "",
        diff=tuple((column, value, None) for column, value in state.row.items() if value is not None),
        blockers=tuple(blockers),
        warnings=tuple(warnings),
        criteria=(RiskCriterion("database_dropped", why),),
        inverse={"privileges": len(state.privileges)},
    )


def default_blockers(state: DatabaseState) -> list[Finding]:
    """``HMSHandler.drop_database``: "Can not drop default database", RESTRICT or CASCADE."""
    if state.name == DEFAULT_DATABASE:
        return [Finding("default_database", RULE, "Can not drop default database (Hive's rule).")]
    return []


def _not_empty(state: DatabaseState) -> list[Finding]:
    found = []
    if state.tables:
        found.append(
            Finding(
                "not_empty",
                RULE,
                f"Database {state.name} is not empty. One or more tables exist "
                f"({state.tables:,}); Hive refuses it without CASCADE.",
            )
        )
    if state.functions:
        found.append(
            Finding(
                "not_empty",
                RULE,
                f"Database {state.name} is not empty. One or more functions exist "
                f"({state.functions:,}); Hive refuses it without CASCADE.",
            )
        )
    return found
