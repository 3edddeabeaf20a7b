"""
``CREATE DATABASE`` (issue 27) as Hive's Driver runs it: ``DDLTask.createDatabase`` (2.3) /
``CreateDatabaseOperation`` (3.1, 4.0) qualify the locations, then ``HMSHandler.create_database_core`` validates the
name (``MetaStoreUtils.validateName(name, null)``: word characters only), refuses an existing database
(``AlreadyExistsException``; ``IF NOT EXISTS`` makes that a no-op), makes the directory when it is missing
(``wh.mkdirs``; an existing one is kept) and ``ObjectStore.createDatabase`` writes the DBS row (the name lower-cased)
and its DATABASE_PARAMS, with the CREATE_DATABASE event.
"""

from __future__ import annotations

from typing import Any

from catalog_admin.hive.names import is_valid_name
from catalog_admin.locations import filesystem_for
from catalog_admin.selectors.metastores import Metastore
from operations.database_specs import CreateDatabase
from operations.events.databases import CREATE_DATABASE
from operations.planners.databases.locations import RULE, default_locations, location_blockers, qualified
from operations.planners.databases.plan import DatabasePlan, DirectoryAction
from operations.planners.databases.state import ABSENT, DatabaseState
from operations.risk import RiskCriterion
from operations.rules import Finding, check_database_name

__all__ = ("plan_create_database",)

# Column widths of the official schemas (DBS.NAME 128, DBS.DESC and PARAM_VALUE 4000, PARAM_KEY 180).
WIDTHS = {"name": 128, "comment": 4000, "key": 180, "value": 4000}


def plan_create_database(metastore: Metastore, state: DatabaseState | None, spec: CreateDatabase) -> DatabasePlan:
    """The plan of ``spec`` on ``metastore``, where the database is ``state`` (``None``: it does not exist)."""
    version = metastore.schema.version
    if state is not None:
        if spec.if_not_exists:
            return _noop(metastore, state, spec)
        exists = Finding(
            "already_exists", RULE, f"Database {spec.name} already exists (Hive's AlreadyExistsException)."
        )
        return DatabasePlan(
            metastore.name, str(version), spec, spec.name, state.fingerprint, state.id, blockers=(exists,)
        )
    location, managed = _locations(metastore, spec)
    blockers = _blockers(metastore, spec, location, managed)
    wanted = [d for d in (location, managed) if d] if not blockers else []
    directories = tuple(_directory(d) for d in wanted)
    row = _row(metastore, spec, location, managed)
    params = tuple(sorted(dict(spec.properties).items()))
    diff = tuple((column, None, value) for column, value in row.items() if value is not None)
    diff += tuple((f"param:{key}", None, value) for key, value in params)
    return DatabasePlan(
        metastore=metastore.name,
        schema_version=str(version),
        spec=spec,
        database=spec.name,
        state_fingerprint=ABSENT,
        insert=row,
        params_set=params,
        directories=tuple(d for d in directories if d is not None),
        event=CREATE_DATABASE if metastore.config.events else "",
        diff=diff,
        blockers=tuple(blockers),
        warnings=tuple(_kept(wanted, directories)),
        criteria=(RiskCriterion("database_created", f"Database {spec.name} appears at {location}."),),
    )


def _locations(metastore: Metastore, spec: CreateDatabase) -> tuple[str, str | None]:
    default, default_managed = default_locations(metastore, spec.name)
    location = qualified(spec.location) if spec.location is not None else default
    if not metastore.schema.capabilities.managed_locations:
        return location, None
    if spec.managed_location is not None:
        return location, qualified(spec.managed_location)
    return location, default_managed if default_managed != location else None


def _blockers(metastore: Metastore, spec: CreateDatabase, location: str, managed: str | None) -> list[Finding]:
    version = metastore.schema.version
    found = []
    if not is_valid_name(spec.name, version, special_characters=False) or len(spec.name) > WIDTHS["name"]:
        found.append(
            Finding(
                "invalid_name",
                RULE,
                f"{spec.name} is not a valid database name (Hive's validateName: "
                "letters, digits and '_', at most 128 characters).",
            )
        )
    found += check_database_name(spec.name)
    if spec.managed_location is not None and not metastore.schema.capabilities.managed_locations:
        found.append(
            Finding(
                "not_in_version",
                RULE,
                f"MANAGEDLOCATION is Hive 4.0's; this metastore's schema is {version}: Hive's parser refuses it.",
            )
        )
    if managed is not None and managed.lower() == location.lower():
        found.append(
            Finding(
                "same_locations", RULE, "Managed and external locations for database cannot be the same (Hive 4.0)."
            )
        )
    found += location_blockers(metastore, location, "database location")
    if managed is not None:
        found += location_blockers(metastore, managed, "managed location")
    found += _width_blockers(spec)
    return found


def _width_blockers(spec: CreateDatabase) -> list[Finding]:
    found = []
    if spec.comment is not None and len(spec.comment) > WIDTHS["comment"]:
        found.append(Finding("too_long", RULE, "The comment is longer than DBS.DESC's 4,000 characters."))
    for key, value in spec.properties:
        if len(key) > WIDTHS["key"] or len(value) > WIDTHS["value"]:
            found.append(
                Finding(
                    "too_long",
                    RULE,
                    f"The property {key[:40]!r} is longer than DATABASE_PARAMS allows "
                    "(keys 180, values 4,000 characters).",
                )
            )
    return found


def _directory(location: str) -> DirectoryAction | None:
    """``wh.mkdirs`` when the directory is missing (an existing one is kept, as ``wh.isDir`` does)."""
    exists = filesystem_for(location).exists(location)
    return DirectoryAction("create", location) if exists is False else None


def _kept(wanted: list[str], directories: tuple[DirectoryAction | None, ...]) -> list[Finding]:
    """A directory that exists already is kept with what it holds (Hive's ``wh.isDir``): say so."""
    return [
        Finding("directory_exists", RULE, f"{location} exists already: Hive keeps it and what it holds.", "warning")
        for location, action in zip(wanted, directories, strict=True)
        if action is None
    ]


def _row(metastore: Metastore, spec: CreateDatabase, location: str, managed: str | None) -> dict[str, Any]:
    """The DBS row ``ObjectStore.createDatabase`` writes (``DB_ID``, ``OWNER_NAME`` and ``CREATE_TIME`` filled at
    execution: a new id, the executing user as ``SessionState.getUserFromAuthenticator``, the time)."""
    capabilities = metastore.schema.capabilities
    row: dict[str, Any] = {
        "DB_ID": None,
        "DESC": spec.comment,
        "DB_LOCATION_URI": location,
        "NAME": spec.name,
        "OWNER_NAME": None,
        "OWNER_TYPE": "USER",
    }
    if capabilities.catalogs:
        row["CTLG_NAME"] = "hive"
    if capabilities.managed_locations:
        row.update({"CREATE_TIME": None, "DB_MANAGED_LOCATION_URI": managed, "TYPE": "NATIVE"})
    return row


def _noop(metastore: Metastore, state: DatabaseState, spec: CreateDatabase) -> DatabasePlan:
    why = Finding(
        "exists_noop", RULE, f"Database {spec.name} already exists: IF NOT EXISTS makes this a no-op.", "warning"
    )
    return DatabasePlan(
        metastore.name,
        str(metastore.schema.version),
        spec,
        spec.name,
        state.fingerprint,
        state.id,
        warnings=(why,),
        noop=True,
    )
