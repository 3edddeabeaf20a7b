"""
Where a renamed table's data goes: Hive's rules 7–8, per schema version.

The 2.3 and 3.1 schemas follow Hive 3.1 (rule 8.8): only managed tables move, judged against the old database's
location, and go to the new database's path (the warehouse root for ``default``). The 4.0 schema follows Hive 4
(rules 7.1–7.3, 8.2–8.6): a managed table is judged against its database's *managed* directory (the managed
location if set, else ``<warehouse>/<db>.db``, the warehouse root itself for ``default``), and a table that strict
managed mode translated to external moves to the new database's external directory.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from catalog_admin.locations import normalize_location
from catalog_admin.models import Database
from catalog_admin.selectors.metastores import Metastore
from operations.rules import Finding
from operations.table_state import TableState

__all__ = ("is_translated_external", "rename_destination", "with_scheme_of")

DEFAULT_CATALOG = "hive"


def rename_destination(
    metastore: Metastore, state: TableState, new_db: Database, new_table: str
) -> tuple[str | None, list[Finding]]:
    """The table's new location (None: the data stays) and warnings about how it was decided."""
    if state.is_view or not state.location:
        return None, []
    capabilities = metastore.schema.capabilities
    v4 = capabilities.rename_destination_from_managed_location
    translated = capabilities.moves_translated_external_on_rename and is_translated_external(state)
    if state.is_external and not translated:
        return None, []  # rule 8.2: an external table keeps its location
    old = _Place(state.ref.database, state.database_location, state.database_managed_location, state.catalog)
    old_root, warnings = _default_directory(metastore, old, v4)
    in_default = _relative(state.location, old_root).lower() == state.ref.table.lower()
    if translated:
        if in_default:
            return state.location, warnings  # rule 8.6: the caller's location, i.e. the old one ("already exists")
        return with_scheme_of(state.location, f"{new_db.location_uri.rstrip('/')}/{new_table}"), warnings
    if not in_default:
        return None, []  # rule 8.4: a managed table in a specified location keeps it
    new = _Place(new_db.name, new_db.location_uri, _managed_location(metastore, new_db), state.catalog)
    new_root, more = _new_root(metastore, new, v4)
    return with_scheme_of(state.location, f"{new_root.rstrip('/')}/{new_table}"), list(dict.fromkeys(warnings + more))


def is_translated_external(state: TableState) -> bool:
    """Rule 7.2: a managed table that strict managed mode turned external (EXTERNAL and TRANSLATED_TO_EXTERNAL)."""
    params = {key: (value or "").upper() for key, value in state.params.items()}
    return params.get("EXTERNAL") == "TRUE" and params.get("TRANSLATED_TO_EXTERNAL") == "TRUE"


def with_scheme_of(old: str, new: str) -> str:
    """``constructRenamedPath``: keep the old location's scheme and authority, take the new path."""
    old_parts, new_parts = urlsplit(old), urlsplit(new)
    if not old_parts.scheme:
        return new_parts.path
    authority = f"//{old_parts.netloc}" if old_parts.netloc else ""
    return f"{old_parts.scheme}:{authority}{new_parts.path}"


@dataclass(frozen=True)
class _Place:
    """What rule 8.3 reads of a database."""

    name: str
    location: str
    managed_location: str | None
    catalog: str | None


def _managed_location(metastore: Metastore, database: Database) -> str | None:
    return database.managed_location_uri if metastore.schema.has(Database, "managed_location_uri") else None


def _default_directory(metastore: Metastore, db: _Place, v4: bool) -> tuple[str, list[Finding]]:
    """The directory a managed table of ``db`` is created in (rule 8.3 for 4.x, 8.8 for 3.1)."""
    if not v4:
        return db.location, []  # 3.1: the database's plain location
    if db.managed_location:
        return db.managed_location, []
    if (db.catalog or DEFAULT_CATALOG) != DEFAULT_CATALOG:
        return db.location, []
    warehouse = _warehouse_root(metastore)
    if warehouse is None:
        return db.location, [_warehouse_unknown(metastore)]
    return (warehouse if db.name == "default" else f"{warehouse}/{db.name}.db"), []


def _new_root(metastore: Metastore, db: _Place, v4: bool) -> tuple[str, list[Finding]]:
    """Where the new database keeps managed tables: rule 8.5 (4.x), ``Warehouse.getDatabasePath`` (3.1, rule 8.8)."""
    if v4:
        return _default_directory(metastore, db, v4=True)
    if db.name != "default":
        return db.location, []
    warehouse = _warehouse_root(metastore)
    if warehouse is None:
        return db.location, [_warehouse_unknown(metastore)]
    return warehouse, []


def _warehouse_root(metastore: Metastore) -> str | None:
    root = metastore.config.warehouse
    return normalize_location(root).rstrip("/") if root else None


def _warehouse_unknown(metastore: Metastore) -> Finding:
    return Finding(
        "warehouse_unknown",
        "8.3",
        f"The warehouse root of metastore '{metastore.name}' is not configured "
        f"(METASTORE_WAREHOUSE_{metastore.name.upper()}): Hive's default directories were taken to be the databases' "
        "locations.",
        "warning",
    )


def _relative(location: str, root: str) -> str:
    """``location`` relative to ``root`` (the whole location when it is not under it), without a trailing slash."""
    location, root = normalize_location(location), normalize_location(root)
    return location.removeprefix(root.rstrip("/") + "/").rstrip("/")
