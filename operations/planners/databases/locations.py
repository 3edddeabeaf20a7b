"""
Where a database's directories go (issue 27): Hive's default locations per version, the checks on a location a
steward gives (absolute, inside the governed roots, reached through no link), and the console's trash for a dropped
database's data.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from urllib.parse import urlsplit

from catalog_admin.hive.locations import canonical, normalize_location
from catalog_admin.locations import SampledSize, filesystem_for, linked_ancestors
from catalog_admin.metastores import as_location
from catalog_admin.selectors.locations import governed_roots
from catalog_admin.selectors.metastores import Metastore
from operations.planners.databases.plan import DirectoryAction
from operations.planners.drop_table import sampled_directory_size
from operations.planners.partitions.directories import TRASH_DIR
from operations.rules import Finding

__all__ = (
    "RULE",
    "default_locations",
    "location_blockers",
    "partitions_inside",
    "qualified",
    "removal",
    "trash_destination",
)

RULE = "database"
SUFFIX = ".db"  # Warehouse.DATABASE_WAREHOUSE_SUFFIX


def qualified(location: str) -> str:
    """``Utilities.getQualifiedPath`` on the default filesystem (``file:``): ``/x``, ``file:///x`` are ``file:/x``."""
    return normalize_location(location)


def default_locations(metastore: Metastore, name: str) -> tuple[str, str | None]:
    """The location and managed location Hive's Driver gives a database created without them.

    2.3/3.1 ``DDLTask.makeLocationQualified``: ``hive.metastore.warehouse.dir``/name.db, no managed location. 4.0
    ``CreateDatabaseOperation.makeLocationQualified``: ``metastore.warehouse.external.dir``/name.db (the warehouse
    when that is not set), and the warehouse's name.db as the managed location when it differs from the location."""
    config = metastore.config
    warehouse = as_location(config.warehouse)
    directory = name.lower() + SUFFIX
    if not metastore.schema.capabilities.managed_locations:
        return qualified(f"{warehouse}/{directory}"), None
    external = as_location(config.external_warehouse) if config.external_warehouse else warehouse
    location = qualified(f"{external}/{directory}")
    managed = qualified(f"{warehouse}/{directory}")
    return location, (managed if managed != location else None)


def location_blockers(metastore: Metastore, location: str, what: str) -> list[Finding]:
    """A location a database may take: absolute with a scheme once qualified, strictly inside the governed roots (a
    database elsewhere widens nothing), reached through no symbolic link."""
    if not urlsplit(location).scheme or not urlsplit(location).path.startswith("/"):
        return [
            Finding(
                "bad_location",
                RULE,
                f"{location} is not absolute. Please specify a complete absolute uri "
                f"for the {what} (Hive's BAD_LOCATION_VALUE).",
            )
        ]
    roots = governed_roots(metastore)
    if not roots.governs(location):
        return [
            Finding(
                "outside_roots",
                RULE,
                f"The {what} {location} is not inside the governed roots of "
                f"'{metastore.name}' ({roots.describe()}): the console creates and moves directories only "
                "there.",
            )
        ]
    links = linked_ancestors([location])
    if links:
        return [
            Finding(
                "symlink_in_path",
                RULE,
                f"The {what} {location} is reached through the symbolic link "
                f"{links[location]}: the console never creates or moves data through a link.",
            )
        ]
    return []


def trash_destination(location: str, database: str, fingerprint: str) -> str:
    """Where a dropped database's directory goes: ``<its parent>/.catalog-admin-trash/<name>.db/<fingerprint[:12]>``
    (the database's own directory goes away, so its trash is beside it, inside the same root)."""
    parent = canonical(location).rstrip("/").rpartition("/")[0]
    return f"{parent}/{TRASH_DIR}/{database}{SUFFIX}/{fingerprint[:12]}"


def removal(
    metastore: Metastore,
    location: str,
    database: str,
    fingerprint: str,
    *,
    destination: str = "",
    partitions: Sequence[str] = (),
) -> tuple[DirectoryAction | None, list[Finding]]:
    """What dropping the database does to the directory ``location``: nothing when it is missing or outside the roots
    (a warning), removed when empty (``Warehouse.deleteDir``), moved to the trash when it holds anything (to
    ``destination``, by default the database's place in the trash: :func:`trash_destination`)."""
    if not location:
        return None, []
    filesystem = filesystem_for(location)
    exists = filesystem.exists(location)
    if exists is None:
        return None, [
            Finding(
                "filesystem_unreachable",
                RULE,
                f"{location} is on a filesystem this console cannot reach: its data could not be moved to the trash.",
            )
        ]
    if not exists:
        return None, []
    if not governed_roots(metastore).governs(location):
        return None, [
            Finding(
                "left_outside_roots",
                RULE,
                f"{location} is outside the governed roots: the console leaves it (and anything in it) where it is.",
                "warning",
            )
        ]
    links = linked_ancestors([location])
    if links:
        return None, [
            Finding(
                "symlink_in_path",
                RULE,
                f"{location} is reached through the symbolic link "
                f"{links[location]}: the console never moves data through a link.",
            )
        ]
    size = sampled_directory_size(location, partitions) or filesystem.tree_size(location)
    if size is None or size.files == 0 and not filesystem.list_directory(location):
        return DirectoryAction("remove", location), []
    destination = destination or trash_destination(location, database, fingerprint)
    sampled = size.sample if isinstance(size, SampledSize) else None
    return DirectoryAction("trash", location, destination, size.files, size.bytes, sampled=sampled), []


def partitions_inside(location: str, partitions: Sequence[str]) -> Sequence[str]:
    """Those of the sorted canonical ``partitions`` strictly inside ``location`` (one slice: a bisection)."""
    prefix = canonical(location).rstrip("/") + "/"
    return partitions[bisect_left(partitions, prefix) : bisect_left(partitions, prefix[:-1] + "0")]
