"""
``ALTER DATABASE`` (issue 27) as Hive's Driver runs it: ``DDLTask.alterDatabase`` (2.3) / ``AlterDatabase*Operation``
(3.1, 4.0) change the database object read from the metastore, then ``HMSHandler.alter_database`` stores it
(``ObjectStore.alterDatabase``: the columns and the whole parameter map) and, from 3.0, fires ALTER_DATABASE.

- ``SET DBPROPERTIES``: the given keys are put into the existing parameters (``params.putAll``): others stay.
- ``SET OWNER USER|ROLE|GROUP x``: OWNER_NAME and OWNER_TYPE.
- ``SET LOCATION`` (3.0+) and ``SET MANAGEDLOCATION`` (4.0): the URI must be absolute with a scheme
  (``BAD_LOCATION_VALUE``), stored as ``wh.getDnsPath`` qualifies it; nothing moves: the tables already in the database
  keep their locations, only new tables go to the new place, and Hive creates no directory.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from catalog_admin.locations import filesystem_for
from catalog_admin.selectors.metastores import Metastore
from operations.database_specs import AlterDatabase
from operations.events.databases import ALTER_DATABASE
from operations.planners.databases.create import WIDTHS
from operations.planners.databases.locations import RULE, location_blockers, qualified
from operations.planners.databases.plan import DatabasePlan
from operations.planners.databases.state import ABSENT, DatabaseState
from operations.risk import RiskCriterion
from operations.rules import Finding

__all__ = ("plan_alter_database",)

_COLUMN = {"set_location": "DB_LOCATION_URI", "set_managed_location": "DB_MANAGED_LOCATION_URI"}
_WORD = {"set_location": "LOCATION", "set_managed_location": "MANAGEDLOCATION"}


def plan_alter_database(metastore: Metastore, state: DatabaseState | None, spec: AlterDatabase) -> DatabasePlan:
    """The plan of ``spec`` on ``metastore``, where the database is ``state`` (``None``: it does not exist)."""
    version = str(metastore.schema.version)
    if state is None:
        missing = Finding("no_such_database", RULE, f"Database does not exist: {spec.name}")
        return DatabasePlan(metastore.name, version, spec, spec.name, ABSENT, blockers=(missing,))
    event = (
        ALTER_DATABASE if metastore.config.events and metastore.schema.capabilities.alter_database_writes_event else ""
    )
    base: dict[str, Any] = {
        "metastore": metastore.name,
        "schema_version": version,
        "spec": spec,
        "database": spec.name,
        "state_fingerprint": state.fingerprint,
        "database_id": state.id,
        "event": event,
    }
    if spec.action == "set_properties":
        return _set_properties(state, spec, base)
    if spec.action == "set_owner":
        update = (("OWNER_NAME", spec.principal), ("OWNER_TYPE", spec.principal_type))
        diff = tuple((column, state.row.get(column), value) for column, value in update)
        why = f"{spec.name} is owned by {spec.principal_type} {spec.principal} (was {state.row.get('OWNER_NAME')})."
        return DatabasePlan(**base, update=update, diff=diff, criteria=(RiskCriterion("database_altered", why),))
    return _set_location(metastore, state, spec, base)


def _set_properties(state: DatabaseState, spec: AlterDatabase, base: dict[str, Any]) -> DatabasePlan:
    old = dict(state.params)
    given = dict(spec.properties)
    changed = tuple(sorted((k, v) for k, v in given.items() if old.get(k) != v))
    diff = tuple((f"param:{k}", old.get(k), v) for k, v in changed)
    blockers = tuple(
        Finding(
            "too_long",
            RULE,
            f"The property {k[:40]!r} is longer than DATABASE_PARAMS allows (keys 180, values 4,000 characters).",
        )
        for k, v in given.items()
        if len(k) > WIDTHS["key"] or len(v) > WIDTHS["value"]
    )
    why = f"{len(changed)} propert(ies) of {spec.name} set: {', '.join(k for k, _ in changed) or 'none changes'}."
    return DatabasePlan(
        **base,
        params_set=changed,
        params_delete=tuple(k for k, _ in changed if k in old),
        diff=diff,
        blockers=blockers,
        criteria=(RiskCriterion("database_altered", why),),
    )


def _set_location(
    metastore: Metastore, state: DatabaseState, spec: AlterDatabase, base: dict[str, Any]
) -> DatabasePlan:
    capabilities = metastore.schema.capabilities
    word, column = _WORD[spec.action], _COLUMN[spec.action]
    available = (
        capabilities.managed_locations if spec.action == "set_managed_location" else capabilities.database_set_location
    )
    if not available:
        since = "4.0" if spec.action == "set_managed_location" else "3.0"
        refused = Finding(
            "not_in_version",
            RULE,
            f"ALTER DATABASE … SET {word} is Hive {since}'s; this metastore's "
            f"schema is {metastore.schema.version}: Hive's parser refuses it.",
        )
        return DatabasePlan(**base, blockers=(refused,))
    given = urlsplit(spec.location)
    if not given.scheme:
        bad = Finding(
            "bad_location",
            RULE,
            f"{spec.location}  is not absolute.  Please specify a complete absolute "
            "uri. (Hive's BAD_LOCATION_VALUE: a scheme such as file:, hdfs: or s3a: is required)",
        )
        return DatabasePlan(**base, blockers=(bad,))
    location = qualified(spec.location)
    blockers = location_blockers(metastore, location, "new location" if word == "LOCATION" else "new managed location")
    other = state.managed_location if column == "DB_LOCATION_URI" else state.location
    if other and other.lower() == location.lower() and capabilities.managed_locations:
        blockers.append(
            Finding(
                "same_locations", RULE, "Managed and external locations for database cannot be the same (Hive 4.0)."
            )
        )
    before = state.row.get(column)
    update = ((column, location),) if location != before else ()
    warnings = [
        Finding(
            "tables_stay",
            RULE,
            f"Hive's rule: SET {word} does not move the {state.tables:,} table(s) "
            f"already in {spec.name}; only tables created later go under {location}.",
            "warning",
        )
    ]
    if not blockers and filesystem_for(location).exists(location) is False:
        warnings.append(
            Finding(
                "location_missing",
                RULE,
                f"{location} does not exist; Hive does not create it (a new table creates its own directory).",
                "warning",
            )
        )
    why = f"New tables of {spec.name} go under {location} (was {before})."
    return DatabasePlan(
        **base,
        update=update,
        diff=((column, before, location),) if update else (),
        blockers=tuple(blockers),
        warnings=tuple(warnings),
        criteria=(RiskCriterion("database_location_changed", why),),
    )
