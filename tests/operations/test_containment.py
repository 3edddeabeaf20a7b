"""
Containment (issue 9, case 2): the console moves, trashes and points tables only inside a metastore's governed roots
(warehouse, external warehouse, database locations, extra roots), never a directory another table or partition also
uses, contains or encloses, and never to a destination that escapes its parent.

The reproductions run on real directories, on PostgreSQL and SQLite metastores, with a sacrificial directory outside
the roots that must stay exactly as it was. A property test over names and locations checks the pure guard: no plan
it lets through has a move source or destination outside the roots.
"""

from __future__ import annotations

import shutil
import string
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError
from catalog_admin.locations import normalize_location
from catalog_admin.metastores import as_location, local_path, parse_metastores
from catalog_admin.models import Database, Partition, StorageDescriptor, Table
from catalog_admin.selectors.locations import LocationUser
from catalog_admin.selectors.metastores import Metastore
from operations import containment
from operations.containment import (
    GovernedRoots,
    MoveContext,
    canonical,
    check_move,
    governed_roots,
    is_inside,
    plan_blockers,
    users_near,
)
from operations.preview import DirectoryMove, Preview
from operations.services.alter import alter_preview_statement
from tests.fixtures.operations import execute, location_of, path_of, warehouse_tree

PG_AND_SQLITE = pytest.mark.parametrize("metastore_alias", ["hive31_pg", "hive_sqlite"], indirect=True)
PARTITION = "dt=2024-01-03/hour=0"
PARTITION_SPEC = "(dt='2024-01-03', hour=0)"


def table_location(metastore: Metastore, database: str, name: str) -> str:
    return Table.objects.on(metastore, "sd").get(database__name=database, name=name).sd.location


def point_partition_at(metastore: Metastore, name: str, location: str) -> None:
    """Repoint a partition of sales.orders, as a Hive client could."""
    sd_id = Partition.objects.using(metastore.alias).get(table__name="orders", name=name).sd_id
    with allow_metastore_writes():
        StorageDescriptor.objects.using(metastore.alias).filter(id=sd_id).update(location=location)


def strict(metastore: Metastore) -> Metastore:
    """The metastore with the production default: SET LOCATION outside the roots refused."""
    return replace(metastore, config=replace(metastore.config, allow_outside_roots=False))


def codes(preview: Preview) -> list[str]:
    return [f.code for f in preview.blockers]


@pytest.fixture
def sacrificial(tmp_path: Path) -> Path:
    """A directory with data outside every governed root."""
    root = tmp_path / "outside" / "precious"
    (root / "sub").mkdir(parents=True)
    (root / "data.csv").write_text("1,2,3\n")
    (root / "sub" / "more.csv").write_text("4,5,6\n")
    return root


@PG_AND_SQLITE
def test_dropping_a_partition_that_points_at_another_tables_directory_is_blocked(
    metastore: Metastore, warehouse: Path
) -> None:
    """DROP PARTITION of a partition pointing at sales.customers' directory names customers and trashes nothing."""
    # given
    customers = table_location(metastore, "sales", "customers")
    tree = warehouse_tree(path_of(customers))
    point_partition_at(metastore, PARTITION, customers)

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.orders DROP PARTITION {PARTITION_SPEC}"
    )
    with pytest.raises(ApplicationError):
        execute(preview)

    # then
    assert "directory_in_use" in codes(preview)
    assert any("sales.customers" in f.message and customers in f.message for f in preview.blockers)
    assert warehouse_tree(path_of(customers)) == tree


@PG_AND_SQLITE
def test_dropping_or_renaming_a_partition_outside_the_roots_leaves_that_directory_alone(
    metastore: Metastore, warehouse: Path, sacrificial: Path
) -> None:
    """A partition pointing outside the warehouse is neither trashed nor moved: both plans are blocked."""
    # given
    tree = warehouse_tree(sacrificial)
    point_partition_at(metastore, PARTITION, location_of(sacrificial))

    # when
    drop = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.orders DROP PARTITION {PARTITION_SPEC}"
    )
    rename = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION {PARTITION_SPEC} RENAME TO PARTITION (dt='2030-01-01', hour=1)",
    )
    for preview in (drop, rename):
        with pytest.raises(ApplicationError):
            execute(preview)

    # then
    assert "outside_roots" in codes(drop)
    assert "outside_roots" in codes(rename)
    assert warehouse_tree(sacrificial) == tree


@PG_AND_SQLITE
def test_renaming_a_partition_whose_directory_holds_another_tables_data_is_blocked(
    metastore: Metastore, warehouse: Path
) -> None:
    """A partition pointing at a directory that contains sales.customers' directory does not move it."""
    # given
    customers = table_location(metastore, "sales", "customers")
    parent = customers.rsplit("/", 1)[0]  # the sales database directory
    point_partition_at(metastore, PARTITION, parent)

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION {PARTITION_SPEC} RENAME TO PARTITION (dt='2030-01-01', hour=1)",
    )

    # then
    assert preview.blockers
    assert "outside_roots" in codes(preview) or "directory_in_use" in codes(preview)
    assert any("contains" in f.message for f in preview.blockers if f.code == "directory_in_use")


@PG_AND_SQLITE
@pytest.mark.parametrize("inside", ["", "/part-0"], ids=["onto", "inside"])
def test_set_location_onto_or_inside_another_tables_directory_is_blocked(metastore: Metastore, inside: str) -> None:
    """SET LOCATION of a table or a partition onto sales.customers' directory (or into it) names its owner."""
    # given
    customers = table_location(metastore, "sales", "customers")
    target = customers + inside

    # when
    table = alter_preview_statement(metastore=metastore, statement=f"ALTER TABLE sales.orders SET LOCATION '{target}'")
    partition = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION {PARTITION_SPEC} SET LOCATION '{target}'",
    )

    # then
    for preview in (table, partition):
        assert set(codes(preview)) == {"location_in_use"}
        assert any("sales.customers" in f.message for f in preview.blockers)


@PG_AND_SQLITE
def test_set_location_outside_the_roots_is_blocked_unless_the_metastore_allows_it(
    metastore: Metastore, sacrificial: Path
) -> None:
    """Outside the governed roots, SET LOCATION is refused by default; METASTORE_ALLOW_OUTSIDE_ROOTS allows it."""
    # given
    statement = f"ALTER TABLE sales.customers SET LOCATION '{location_of(sacrificial)}'"

    # when
    refused = alter_preview_statement(metastore=strict(metastore), statement=statement)
    allowed = alter_preview_statement(metastore=metastore, statement=statement)

    # then
    assert codes(refused) == ["outside_roots"]
    assert codes(allowed) == []


@PG_AND_SQLITE
def test_a_prefix_rewrite_into_another_tables_directory_is_blocked(metastore: Metastore) -> None:
    """Rewriting partition locations into sales.customers' directory is refused and names it."""
    # given
    orders = table_location(metastore, "sales", "orders")
    customers = table_location(metastore, "sales", "customers")

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION LOCATIONS REPLACE PREFIX '{orders}/' WITH '{customers}/x/'",
    )

    # then
    assert set(codes(preview)) == {"location_in_use"}
    assert any("sales.customers" in f.message for f in preview.blockers)


@pytest.mark.parametrize("metastore_alias", ["hive40_pg", "hive_sqlite"], indirect=True)
@pytest.mark.parametrize("name", ["`../../../../../../tmp/outside/x`", "`x?y`", "`a/b`"])
def test_a_renamed_tables_destination_never_escapes_the_database_directory(
    metastore: Metastore, warehouse: Path, name: str
) -> None:
    """A new name that would leave its database's directory (``..``, ``?``, ``/``) is blocked, whatever the name
    rules of the version say; nothing moves."""
    # given
    customers = table_location(metastore, "sales", "customers")
    tree = warehouse_tree(warehouse)

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.customers RENAME TO sales.{name}"
    )
    with pytest.raises(ApplicationError):
        execute(preview)

    # then
    assert "destination_escapes" in codes(preview)
    assert path_of(customers).is_dir()
    assert warehouse_tree(warehouse) == tree


@PG_AND_SQLITE
def test_governed_roots_are_the_configured_roots_and_the_database_locations_inside_them(
    metastore: Metastore, tmp_path: Path
) -> None:
    """Configured roots (written as paths or URIs) and the databases' locations, canonical."""
    # given
    config = replace(metastore.config, extra_roots=(f"file://{tmp_path}/extra/",), external_warehouse="s3a://b/ext")

    # when
    roots = governed_roots(replace(metastore, config=config))

    # then
    warehouse = location_of(Path(metastore.config.warehouse))
    assert roots.locations[:3] == (warehouse, "s3a://b/ext", f"file:{tmp_path}/extra")
    assert f"{warehouse}/sales.db" in roots.locations
    assert roots.governs(f"{warehouse}/sales.db/orders")
    assert not roots.governs(warehouse)


@PG_AND_SQLITE
@pytest.mark.parametrize("database_location", ["file:/", "outside"])
def test_a_database_location_outside_the_configured_roots_does_not_widen_them(
    metastore: Metastore, warehouse: Path, sacrificial: Path, database_location: str
) -> None:
    """Issue 25, case 5: a database at ``file:/`` (or any directory outside the configured roots) is no root: an
    approved SET LOCATION outside the roots followed by DROP PARTITION trashes nothing there."""
    # given
    location = "file:/" if database_location == "file:/" else location_of(sacrificial.parent)
    with allow_metastore_writes():
        Database.objects.using(metastore.alias).filter(name="marketing").update(location_uri=location)
    tree = warehouse_tree(sacrificial)
    point_partition_at(metastore, PARTITION, location_of(sacrificial))

    # when
    roots = governed_roots(metastore)
    drop = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.orders DROP PARTITION {PARTITION_SPEC}"
    )
    with pytest.raises(ApplicationError):
        execute(drop)

    # then
    assert canonical(location) not in roots.locations
    assert not roots.governs(location_of(sacrificial))
    assert "outside_roots" in codes(drop)
    assert warehouse_tree(sacrificial) == tree


def test_warehouse_settings_accept_uris_and_paths_alike(tmp_path: Path) -> None:
    """``METASTORE_WAREHOUSE_<NAME>`` as ``file:/…``, ``file:///…``, ``hdfs://…`` or a path; extra roots and the
    allowance come from their own variables."""
    # given
    env = {
        "METASTORES": "a=sqlite:///a.db;b=sqlite:///b.db;c=sqlite:///c.db",
        "METASTORE_WAREHOUSE_A": f"file:///{tmp_path}/wh/",
        "METASTORE_WAREHOUSE_B": "hdfs://nn:8020/warehouse",
        "METASTORE_WAREHOUSE_C": str(tmp_path / "wh"),
        "METASTORE_EXTRA_ROOTS_A": "s3a://bucket/x, file:/data/y",
        "METASTORE_EXTERNAL_WAREHOUSE_B": "hdfs://nn:8020/external",
        "METASTORE_ALLOW_OUTSIDE_ROOTS_C": "true",
    }

    # when
    a, b, c = parse_metastores(env, tmp_path)[0]

    # then
    assert a.warehouse_location == c.warehouse_location == f"file:{tmp_path}/wh"
    assert a.warehouse_path == c.warehouse_path == tmp_path / "wh"
    assert (b.warehouse_location, b.warehouse_path) == ("hdfs://nn:8020/warehouse", None)
    assert a.root_locations == (f"file:{tmp_path}/wh", "s3a://bucket/x", "file:/data/y")
    assert b.root_locations == ("hdfs://nn:8020/warehouse", "hdfs://nn:8020/external")
    assert (a.allow_outside_roots, c.allow_outside_roots) == (False, True)
    assert as_location("") == "" and local_path("s3a://b/x") is None


# Property: no plan the guard lets through moves anything outside the roots ---------------------------------------

ROOTS = GovernedRoots(("file:/wh", "file:/wh/sales.db", "hdfs://nn/ext"))
segment_chars = string.ascii_letters + string.digits + "_-=.%?#/ "
names = st.text(alphabet=segment_chars, min_size=0, max_size=12)
bases = st.sampled_from(["file:/wh", "file:/wh/sales.db", "file:/", "file:/etc", "hdfs://nn/ext", "file:/tmp/x"])


@st.composite
def moves(draw: st.DrawFn) -> tuple[DirectoryMove, str, str, int]:
    """A move as the planners build one: a source location, and a destination of ``parent/leaf``."""
    source = f"{draw(bases).rstrip('/')}/{draw(names)}/{draw(names)}"
    parent = draw(bases)
    keys = draw(st.integers(min_value=1, max_value=2))
    leaf = "/".join(draw(names) for _ in range(keys))
    destination = f"{parent.rstrip('/')}/{leaf}"
    move = DirectoryMove(source, destination, 1, 0, None, None, True, True, True)
    return move, parent, leaf, keys


@given(moves())
@settings(max_examples=500, deadline=None, derandomize=True)
def test_no_move_the_guard_allows_leaves_the_roots_or_its_parent(case: tuple[DirectoryMove, str, str, int]) -> None:
    """For any names and locations, a move without blockers has both ends strictly inside a governed root, and its
    destination inside the parent the planner appended its leaf to."""
    # given
    move, parent, leaf, keys = case

    # when
    blockers = check_move(move, ROOTS, [], MoveContext(leaf=leaf, leaf_segments=keys))

    # then
    if not blockers:
        assert ROOTS.governs(move.source) and ROOTS.governs(move.destination)
        assert is_inside(move.destination, parent, strictly=True)
        assert canonical(move.destination) == normalize_location(move.destination)  # nothing left to resolve


def test_another_tables_directory_blocks_a_move_unless_it_moves_along() -> None:
    """A table at, inside or above a moving directory blocks it, unless the plan moves it (its own table) or it is
    the partition's own table root above it."""
    # given
    move = DirectoryMove("file:/wh/sales.db/t/dt=1", "file:/wh/sales.db/t/dt=2", 1, 0, None, None, True, True, True)
    other = LocationUser(7, "file:/wh/sales.db/t/dt=1/x", 2, "sales", "other")
    root = LocationUser(1, "file:/wh/sales.db/t", 1, "sales", "t")
    own = LocationUser(3, "file:/wh/sales.db/t/dt=1", 1, "sales", "t", "dt=1")
    context = MoveContext(sd_ids=frozenset({3}), enclosing=frozenset({1}), leaf="dt=2")

    # when
    blocked = check_move(move, ROOTS, [other, root, own], context)
    allowed = check_move(move, ROOTS, [root, own], context)

    # then
    assert [f.code for f in blocked] == ["directory_in_use"]
    assert "sales.other" in blocked[0].message
    assert allowed == []


# Property: the sorted sweep finds exactly the pairs the pairwise comparison finds ----------------------------------

sweep_segments = st.sampled_from(["a", "a b", "a0", "a-", "ab", "b", "..", ".", "", "dt=1", "dt=10", "%2F", "x/y"])
sweep_bases = st.sampled_from(["file:/", "/", "file:///", "file:/wh", "/wh/", "s3a://b", "s3a://b/", "hdfs://nn:8020"])


@st.composite
def sweep_locations(draw: st.DrawFn) -> str:
    """A location spelled as a metastore may hold it: any scheme, trailing or doubled slashes, ``.`` and ``..``."""
    parts = draw(st.lists(sweep_segments, max_size=4))
    return draw(sweep_bases).rstrip("/") + "/" + "/".join(parts) + draw(st.sampled_from(["", "/", "//"]))


def pairwise_users_near(locations: list[str], users: list[LocationUser]) -> list[list[int]]:
    """The oracle: the guard's old pairwise comparison of every location with every user (at, inside or above)."""
    return [
        [i for i, user in enumerate(users) if is_inside(user.location, location) or is_inside(location, user.location)]
        for location in locations
    ]


@given(st.lists(sweep_locations(), max_size=12), st.lists(sweep_locations(), max_size=30))
@settings(max_examples=400, deadline=None, derandomize=True)
def test_the_sorted_sweep_finds_what_the_pairwise_comparison_finds(locations: list[str], others: list[str]) -> None:
    """For any moved or dropped directories and other tables' locations (the same directory spelled several ways,
    siblings sharing a prefix such as ``a``/``a0``/``a b``), the sweep returns the same users, in the same order, as
    comparing every pair."""
    # given
    users = [LocationUser(i, location, i, "db", f"t{i}") for i, location in enumerate(others)]

    # when
    found = users_near(locations, users)

    # then
    assert found == pairwise_users_near(locations, users)


# The plan's moves against one another ------------------------------------------------------------------------------


def trash_move(source: str, destination: str) -> DirectoryMove:
    return DirectoryMove(source, destination, 1, 0, None, None, True, True, True)


def test_nested_moves_of_one_plan_are_blocked() -> None:
    """Two moves of one plan whose directories nest block it: a source inside another, even with a sibling such as
    ``dt=1-b`` sorting between them and no row of the metastore to find; a partition's directory inside another
    move's destination, which that move does not take along."""
    # given
    base, trash = "file:/wh/sales.db/t", "file:/wh/sales.db/.catalog-admin-trash/t/f"
    nested = [
        trash_move(f"{base}/dt=1", f"{trash}/dt=1"),
        trash_move(f"{base}/dt=1-b", f"{trash}/dt=1-b"),
        trash_move(f"{base}/dt=1/x", f"{trash}/dt=1/x"),
    ]
    into = [trash_move(f"{base}/dt=1", f"{trash}/dt=1"), trash_move(f"{trash}/dt=1/y", f"{trash}/y")]
    rows = [LocationUser(index, move.source, 1, "sales", "t", f"p{index}") for index, move in enumerate(into)]
    contexts = {move.source: MoveContext(sd_ids=frozenset({index})) for index, move in enumerate(into)}
    apart = [trash_move(f"{base}/dt=1", f"{trash}/dt=1"), trash_move(f"{base}/dt=1-b", f"{trash}/dt=1-b")]

    # when
    found_nested = plan_blockers(nested, ROOTS, [], {})
    found_into = plan_blockers(into, ROOTS, rows, contexts)
    found_apart = plan_blockers(apart, ROOTS, [], {})

    # then
    assert [f.message for f in found_nested] == [
        f"{base}/dt=1/x is inside {base}/dt=1: the plan would move the same data twice."
    ]
    assert [f.code for f in found_into] == ["directory_in_use"]
    assert f"{trash}/dt=1/y is inside {trash}/dt=1" in found_into[0].message
    assert found_apart == []


def test_a_folder_moving_whole_takes_its_partitions_rows_along_and_no_other(monkeypatch: pytest.MonkeyPatch) -> None:
    """A day folder moving whole with its hours (their storage descriptors in its context): their rows, directly in
    the folder, block nothing and are not swept one by one (only the other table's row is); another table's row
    there blocks, naming it; and a partition row of the folder is still compared with the plan's other moves (here
    one moving a directory into the folder's place)."""
    # given
    swept: list[list[str]] = []
    real_users_near = containment.users_near

    def spy(locations: list[str], users: list[LocationUser]) -> list[list[int]]:
        swept.append([user.owner for user in users])
        return real_users_near(locations, users)

    monkeypatch.setattr(containment, "users_near", spy)
    base, trash = "file:/wh/sales.db/t", "file:/wh/sales.db/.catalog-admin-trash/t/f"
    folder = trash_move(f"{base}/dt=1", f"{trash}/dt=1")
    hours = [
        LocationUser(index, f"{base}/dt=1/hour={index}", 1, "sales", "t", f"dt=1/hour={index}") for index in (1, 2)
    ]
    contexts = {folder.source: MoveContext(sd_ids=frozenset({1, 2}), leaf="dt=1")}
    stranger = LocationUser(9, f"{base}/dt=1/hour=3", 2, "sales", "other")
    into = trash_move(f"{trash}/old", f"{base}/dt=1")

    # when
    alone = plan_blockers([folder], ROOTS, hours, contexts)
    beside_a_stranger = plan_blockers([folder], ROOTS, [*hours, stranger], contexts)
    crossed = plan_blockers([folder, into], ROOTS, hours, contexts)

    # then
    assert alone == []
    assert swept[:2] == [[], ["sales.other"]]
    assert [f.code for f in beside_a_stranger] == ["directory_in_use"]
    assert "sales.other" in beside_a_stranger[0].message
    assert [f.code for f in crossed] == ["directory_in_use"]


drop_paths = st.sampled_from(["file:/wh/t/a", "file:/wh/t/a/b", "file:/wh/t/a-b", "file:/wh/t/c", "file:/wh/x"])


@given(
    st.lists(st.tuples(drop_paths, drop_paths, st.sets(st.integers(0, 4))), min_size=1, max_size=5),
    st.lists(drop_paths, max_size=3),
)
@settings(max_examples=400, deadline=None, derandomize=True)
def test_leaving_each_moves_own_row_to_the_comparison_of_moves_blocks_what_comparing_every_row_blocks(
    plan: list[tuple[str, str, set[int]]], foreign: list[str]
) -> None:
    """The guard leaves each moved partition's own row out of the sweep and compares the moves with one another
    instead: for any nesting of sources, destinations and other tables' rows, and moves that take other moves' rows
    along (a swap), it blocks exactly the plans the old guard blocked, which compared every row (its own
    partitions' too) with every end, pairwise."""
    # given
    moves = [trash_move(source, destination) for source, destination, _ in plan]
    own = [LocationUser(index, move.source, 1, "db", "t", f"p{index}") for index, move in enumerate(moves)]
    others = [LocationUser(100 + index, location, 2, "db", "other") for index, location in enumerate(foreign)]
    along = {move.source: {i for i, m in enumerate(moves) if m.source == move.source} for move in moves}
    for move, (_, _, taken) in zip(moves, plan, strict=True):
        along[move.source] |= taken
    contexts = {source: MoveContext(sd_ids=frozenset(ids)) for source, ids in along.items()}
    roots = GovernedRoots(("file:/wh",))

    # when
    blocked = bool(plan_blockers(moves, roots, [*own, *others], contexts))

    # then
    touching = [
        user
        for move in moves
        for user in (*own, *others)
        if any(
            is_inside(user.location, end) or is_inside(end, user.location) for end in (move.source, move.destination)
        )
        and user.sd_id not in contexts[move.source].sd_ids
    ]
    outside = any(not roots.governs(end) for move in moves for end in (move.source, move.destination))
    overlapping = any(
        is_inside(first.source, second.source) or is_inside(second.source, first.source)
        for i, first in enumerate(moves)
        for second in moves[i + 1 :]
    )
    assert blocked == bool(touching or outside or overlapping)


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
@given(values=st.lists(st.text(alphabet=segment_chars, min_size=1, max_size=8), min_size=1, max_size=1))
@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_real_partition_renames_never_move_outside_the_roots(metastore: Metastore, values: list[str]) -> None:
    """Real previews of partition renames to generated values: every move of an executable plan stays governed."""
    # given
    roots = governed_roots(metastore)
    value = values[0].replace("'", "")

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION {PARTITION_SPEC} RENAME TO PARTITION (dt='{value}', hour=1)",
    )

    # then
    for move in preview.moves if not preview.blockers else ():
        assert roots.governs(move.source) and roots.governs(move.destination)


@PG_AND_SQLITE
@pytest.mark.parametrize("link", ["partition", "parent"])
def test_dropping_a_partition_reached_through_a_symlink_is_blocked_naming_it(
    metastore: Metastore, warehouse: Path, sacrificial: Path, link: str
) -> None:
    """Issue 25, case 4: a partition directory that is a link (or lies below a linked parent) inside the warehouse is
    neither trashed nor moved through the link: DROP PARTITION is blocked naming it and the target stays."""
    # given
    partition = path_of(Partition.objects.on(metastore, "sd").get(table__name="orders", name=PARTITION).sd.location)
    linked = partition if link == "partition" else partition.parent
    shutil.rmtree(linked)
    (sacrificial / "hour=0").mkdir()
    linked.symlink_to(sacrificial)
    tree = warehouse_tree(sacrificial)

    # when
    drop = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.orders DROP PARTITION {PARTITION_SPEC}"
    )
    with pytest.raises(ApplicationError):
        execute(drop)

    # then
    links = [f for f in drop.blockers if f.code == "symlink_in_path"]
    assert len(links) == 1, drop.blockers
    assert location_of(linked) in links[0].message
    assert warehouse_tree(sacrificial) == tree
    assert linked.is_symlink()
