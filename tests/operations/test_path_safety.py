"""
No path is followed out of its place (issue 25, cases 4 and 5), as a property over real files and a real metastore.

For random trees of symbolic links (to files and to directories, pointing outside the roots or at another table's
data, as the partition directory itself, a parent of it, or an entry inside it), random database locations (``file:/``,
outside the roots, inside the warehouse) and the data operations (DROP PARTITION, a partition rename, relocation,
CONCATENATE, convert), every executable plan's reads, copies, moves and deletes resolve where they are written (no link
on the way), inside the configured roots, and never at or in a directory another table uses. A second property checks
the filesystem layer alone on random trees: listings, reads, copies and deletes never reach past a link; a third that
the sizes of many directories found in one descent are each one's own answer, a link on the way reported as itself.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError
from catalog_admin.hive.locations import is_inside
from catalog_admin.locations import LocalFileSystem, SymlinkRefused, TreeSize, local_tree_sizes
from catalog_admin.models import Database, Partition, StorageDescriptor, Table
from catalog_admin.selectors.locations import governed_roots
from catalog_admin.selectors.metastores import Metastore
from operations.preview import Preview
from operations.services.alter import alter_preview_statement
from operations.services.relocate import relocation_copy_plan
from tests.fixtures.operations import location_of, path_of

PARTITION = "dt=2024-01-02/hour=3"
LINKS = ("none", "partition_outside", "partition_to_table", "parent_outside", "file_outside", "file_to_table", "dir")
DATABASE_LOCATIONS = ("unchanged", "file:/", "outside", "inside", "extra")
PARTITION_LOCATIONS = ("own", "customers", "outside", "database", "extra")
OPERATIONS = {
    "drop": "ALTER TABLE sales.orders DROP PARTITION (dt='2024-01-02', hour=3)",
    "rename": "ALTER TABLE sales.orders PARTITION (dt='2024-01-02', hour=3) "
    "RENAME TO PARTITION (dt='2030-01-01', hour=1)",
    "relocate": "ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET LOCATION '{target}' WITH DATA",
    "concatenate": "ALTER TABLE sales.orders PARTITION (dt='2024-01-02') CONCATENATE",
    "convert": "ALTER TABLE sales.orders PARTITION (dt='2024-01-02') SET FILEFORMAT ORC WITH DATA",
}


def resolves_in_place(location: str) -> bool:
    """Whether the path (or, when it does not exist yet, its nearest existing parent) has no link on the way."""
    path = path_of(location)
    while not os.path.lexists(path) and path != path.parent:
        path = path.parent
    return os.path.realpath(path) == str(path)


def planned_locations(preview: Preview) -> list[tuple[str, str]]:
    """(kind, location) of everything an executable plan reads, copies, moves or deletes."""
    planned = [(kind, end) for m in preview.moves for kind, end in (("move", m.source), ("move", m.destination))]
    if preview.data_copy is None:
        return planned
    try:
        plan = relocation_copy_plan(preview=preview)
    except ApplicationError:
        return planned  # refused when planned (a link found in a unit the preview's sample left out)
    for unit in plan["units"]:
        planned += [("delete", unit["source"]), ("write", unit["destination"])]
        planned += [("read", f["source"]) for f in unit["files"]]
        planned += [("write", f["destination"]) for f in unit["files"] if "destination" in f]
    return planned


def other_tables_locations(metastore: Metastore) -> list[str]:
    orders = Table.objects.using(metastore.alias).get(database__name="sales", name="orders")
    own = {orders.sd_id, *Partition.objects.using(metastore.alias).filter(table_id=orders.id).values_list("sd_id")}
    own = {sd if isinstance(sd, int) else sd[0] for sd in own}
    rows = StorageDescriptor.objects.using(metastore.alias).exclude(id__in=own).values_list("location", flat=True)
    return [location for location in rows if location]


@contextmanager
def linked(kind: str, partition: Path, customers: Path, outside: Path) -> Iterator[None]:
    """The partition's tree with one kind of link in it, put back as it was afterwards."""
    undo: list[Callable[[], None]] = []
    try:
        if kind in ("partition_outside", "parent_outside", "partition_to_table"):
            moved = partition if kind != "parent_outside" else partition.parent
            kept = outside / "moved" if kind != "partition_to_table" else moved.with_name(moved.name + "-real")
            shutil.move(moved, kept)
            undo.append(lambda: shutil.move(kept, moved))
            moved.symlink_to(kept if kind != "partition_to_table" else customers)
            undo.append(moved.unlink)
        elif kind != "none":
            target = {"file_outside": outside / "passwd", "file_to_table": next(customers.iterdir()), "dir": outside}
            (partition / "leak").symlink_to(target[kind])
            undo.append((partition / "leak").unlink)
        yield
    finally:
        for step in reversed(undo):
            step()


def set_database_location(metastore: Metastore, choice: str, original: str, outside: Path, warehouse: Path) -> None:
    value = {"unchanged": original, "file:/": "file:/", "outside": location_of(outside),
             "inside": location_of(warehouse / "lake" / "marketing"),
             "extra": location_of(outside.parent / "lake" / "marketing")}[choice]  # fmt: skip
    with allow_metastore_writes():
        Database.objects.using(metastore.alias).filter(name="marketing").update(location_uri=value)


def set_partition_location(metastore: Metastore, choice: str, own: str, customers: Path, outside: Path) -> None:
    """Point the partition where a Hive client could: its own directory, another table's, outside the roots, its
    database's directory (above other tables), or a directory in the extra root."""
    value = {"own": own, "customers": location_of(customers), "outside": location_of(outside),
             "database": location_of(customers.parent),
             "extra": location_of(outside.parent / "lake" / "p")}[choice]  # fmt: skip
    sd_id = Partition.objects.using(metastore.alias).get(table__name="orders", name=PARTITION).sd_id
    with allow_metastore_writes():
        StorageDescriptor.objects.using(metastore.alias).filter(id=sd_id).update(location=value)


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
@given(
    link=st.one_of(st.just("none"), st.sampled_from(LINKS)),  # about half the trees without a link
    database_location=st.sampled_from(DATABASE_LOCATIONS),
    partition_location=st.one_of(st.just("own"), st.sampled_from(PARTITION_LOCATIONS)),
    extra_root=st.booleans(),
    operation=st.sampled_from(sorted(OPERATIONS)),
)
@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_no_planned_read_copy_or_delete_leaves_its_place(
    metastore: Metastore,
    warehouse: Path,
    tmp_path: Path,
    link: str,
    database_location: str,
    partition_location: str,
    extra_root: bool,
    operation: str,
) -> None:
    """Every executable plan touches only paths with no link on the way, inside the configured roots, and none at or
    in another table's directory; a database location never widens the roots."""
    # given
    outside, lake = tmp_path / "outside", tmp_path / "lake"
    extra = (location_of(lake),) if extra_root else ()
    strict = replace(metastore, config=replace(metastore.config, allow_outside_roots=False, extra_roots=extra))
    (lake / "p").mkdir(parents=True, exist_ok=True)
    outside.mkdir(exist_ok=True)
    (outside / "passwd").write_text("root:x:0:0\n")
    original = Database.objects.using(metastore.alias).get(name="marketing").location_uri
    set_database_location(metastore, database_location, original, outside, warehouse)
    own = Partition.objects.on(metastore, "sd").get(table__name="orders", name=PARTITION).sd.location
    partition = path_of(own)
    customers = path_of(Table.objects.on(metastore, "sd").get(database__name="sales", name="customers").sd.location)
    set_partition_location(metastore, partition_location, own, customers, outside)
    configured = strict.config.root_locations
    others = other_tables_locations(metastore)
    statement = OPERATIONS[operation].format(target=location_of(warehouse / "sales.db" / "orders_moved"))

    # when
    try:
        with linked(link, partition, customers, outside):
            preview = alter_preview_statement(metastore=strict, statement=statement)
            planned = planned_locations(preview) if not preview.blockers else []
            roots = governed_roots(strict)
    finally:  # the next example starts from the seeded layout
        set_partition_location(metastore, "own", own, customers, outside)
        set_database_location(metastore, "unchanged", original, outside, warehouse)

    # then
    event(f"{operation}: executable plan" if planned else f"{operation}: blocked")
    assert all(any(is_inside(root, c) for c in configured) for root in roots.locations)  # none widened them
    for kind, location in planned:
        assert resolves_in_place(location), (kind, location, link)
        assert any(is_inside(location, root) for root in configured), (kind, location)
        assert not any(is_inside(location, other) for other in others), (kind, location, link, partition_location)
        if kind in ("move", "delete"):
            assert not any(is_inside(other, location) for other in others), (kind, location)
    if link != "none" and partition_location == "own" and operation in ("relocate", "concatenate", "convert"):
        assert preview.blockers  # the link is in the data these operations read


# The filesystem layer alone ---------------------------------------------------------------------------------------

NAMES = st.sampled_from(["a", "b", "c", "d"])
ENTRY = st.tuples(st.lists(NAMES, min_size=1, max_size=3), st.sampled_from(["file", "dir", "link"]), st.integers(0, 99))


def build_tree(root: Path, outside: Path, entries: list[tuple[list[str], str, int]]) -> list[Path]:
    """Files, directories and links (to files and directories, inside ``root`` and outside it) under ``root``."""
    made: list[Path] = []
    targets = [outside / "secret", outside, root]
    for parts, kind, pick in entries:
        path = root.joinpath(*parts)
        if os.path.lexists(path) or not path.parent.is_dir() or os.path.realpath(path.parent) != str(path.parent):
            continue  # nothing is made through a link
        if kind == "file":
            path.write_bytes(b"data")
        elif kind == "dir":
            path.mkdir()
        else:
            inside = [p for p in made if p != path]
            choices = targets + inside
            path.symlink_to(choices[pick % len(choices)])
        made.append(path)
    return made


def outside_state(outside: Path) -> dict[str, bytes | None]:
    return {str(p): (p.read_bytes() if p.is_file() else None) for p in sorted(outside.rglob("*"))}


@given(entries=st.lists(ENTRY, max_size=14), picks=st.lists(st.integers(0, 99), min_size=3, max_size=3))
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_listings_reads_copies_and_deletes_never_reach_past_a_link(
    tmp_path_factory: pytest.TempPathFactory, entries: list, picks: list[int]
) -> None:
    """On a random tree with links, a listing reports each link and yields only paths that resolve in place; reads
    and copies through a link are refused; a delete anywhere leaves everything outside the deleted tree as it was."""
    # given
    base = tmp_path_factory.mktemp("tree")
    root, outside = base / "root", base / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret").write_bytes(b"SECRET")
    made = build_tree(root, outside, entries)
    filesystem, before = LocalFileSystem(), outside_state(outside)
    links = {location_of(p) for p in made if p.is_symlink()}
    candidates = [root, *made]
    source, destination, doomed = (candidates[p % len(candidates)] for p in picks)

    # when
    listed = filesystem.list_files(location_of(root)) or []
    try:
        filesystem.copy_file(location_of(source), location_of(destination.parent / "copied"))
        copied = True
    except (SymlinkRefused, IsADirectoryError, FileNotFoundError, NotADirectoryError, FileExistsError):
        copied = False
    kept = {p for p in root.rglob("*") if not p.is_relative_to(doomed)}
    try:
        filesystem.delete_tree(location_of(doomed))
    except SymlinkRefused:
        kept.add(doomed)

    # then
    for entry in listed:
        assert entry.symlink or os.path.realpath(path_of(entry.location)) == str(path_of(entry.location))
    assert {e.location for e in listed if e.symlink} == links
    if copied:
        assert os.path.realpath(source) == str(source)
    assert outside_state(outside) == before
    assert all(os.path.lexists(p) for p in kept)


@given(entries=st.lists(ENTRY, max_size=14), extra=st.lists(st.lists(NAMES, min_size=1, max_size=4), max_size=6))
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_sizes_found_in_one_descent_are_each_locations_own_and_never_past_a_link(
    tmp_path_factory: pytest.TempPathFactory, entries: list, extra: list[list[str]]
) -> None:
    """For every path of a random tree with links (and paths that do not exist), the sizes of one descent equal
    ``exists`` then ``tree_size`` of that location alone where no link lies above it, and one link of no bytes where
    one does (its target never asked); nothing outside changes."""
    # given
    base = tmp_path_factory.mktemp("sizes")
    root, outside = base / "root", base / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret").write_bytes(b"SECRET")
    made = build_tree(root, outside, entries)
    filesystem, before = LocalFileSystem(), outside_state(outside)
    wanted = sorted({location_of(p) for p in [root, *made, *(root.joinpath(*parts) for parts in extra)]})

    # when
    sizes = local_tree_sizes(reversed(wanted))

    # then
    for location in wanted:
        path = path_of(location)
        if os.path.realpath(path.parent) != str(path.parent):
            assert sizes.get(location) == TreeSize(files=1, bytes=0), location
        elif filesystem.exists(location):
            assert sizes.get(location) == filesystem.tree_size(location), location
        else:
            assert location not in sizes, location
    assert outside_state(outside) == before
