"""
``DROP TABLE`` / ``DROP VIEW`` on every metastore: the rows Hive's ``ObjectStore.dropTable`` deletes go, one statement
per metastore table; a managed table's data goes to the console's trash (its directory and the partitions outside
it); an external table keeps its data; Hive's refusals (the wrong form, a missing table) are the preview's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog_admin.errors import ApplicationError
from catalog_admin.models import Partition, StorageDescriptor, Table
from catalog_admin.selectors.metastores import Metastore
from operations.planners.drop_table import trash_root
from operations.services.alter import alter_preview_statement
from operations.services.revert import revert_preview
from operations.specs import TableRef
from operations.table_state import read_table_state
from tests.fixtures.factories import table_row
from tests.fixtures.operations import execute, metastore_dump, path_of, row_changes, warehouse_tree


def preview_of(metastore: Metastore, statement: str):
    return alter_preview_statement(metastore=metastore, statement=statement)


def test_dropping_a_managed_partitioned_table_deletes_its_rows_and_moves_its_data_to_the_trash(
    metastore: Metastore, warehouse: Path
) -> None:
    """Twelve partitions, two outside the table's directory and one missing on disk: every row goes in one
    statement per metastore table, the table's directory and the two outside it go to the trash."""
    # given
    orders = table_row(metastore, "sales", "orders")
    state = read_table_state(metastore, TableRef("sales", "orders"))
    root = path_of(state.location)
    tree = warehouse_tree(root)

    # when
    preview = preview_of(metastore, "DROP TABLE sales.orders PURGE")
    execution = execute(preview)

    # then
    changes = row_changes(preview)
    assert changes["TBLS"] == (0, 0, 1)
    assert changes["PARTITIONS"] == (0, 0, 12)
    assert changes["SDS"] == (0, 0, 13)
    assert changes["PARTITION_KEYS"] == (0, 0, 2)
    assert changes["CDS"] == (0, 0, 1)
    assert all(step.action == "delete" for step in preview.steps)
    assert len({step.metastore_table for step in preview.steps}) == len(preview.steps)  # one statement per table
    trash = trash_root(state)
    assert [(m.source, m.destination) for m in preview.moves][0] == (state.location, f"{trash}/table")
    assert sorted(m.destination.rsplit("/", 2)[-2] for m in preview.moves[1:]) == ["dt=2024-01-01", "dt=2024-01-01"]
    assert preview.risk == "high"
    assert "table_dropped" in {c.name for c in preview.criteria}
    assert "purge_to_trash" in {f.code for f in preview.warnings}
    assert execution.actual_counts == execution.expected_counts
    alias = metastore.alias
    assert not Table.objects.using(alias).filter(id=orders.id).exists()
    assert not Partition.objects.using(alias).filter(table_id=orders.id).exists()
    assert not StorageDescriptor.objects.using(alias).filter(id=orders.sd_id).exists()
    assert not root.exists()
    assert warehouse_tree(path_of(f"{trash}/table")) == tree


def test_dropping_an_external_table_keeps_its_data(metastore: Metastore, warehouse: Path) -> None:
    """Metadata only, as in Hive; the view reading it is named."""
    # given
    state = read_table_state(metastore, TableRef("marketing", "campaigns"))

    # when
    preview = preview_of(metastore, "DROP TABLE marketing.campaigns")
    execute(preview)

    # then
    assert preview.moves == ()
    assert {f.code for f in preview.warnings} >= {"external_data_kept", "dependent_views"}
    assert path_of(state.location).exists()
    assert not Table.objects.using(metastore.alias).filter(id=state.table_id).exists()


@pytest.mark.parametrize(
    ("statement", "code", "message"),
    [
        ("DROP TABLE marketing.campaign_performance", "drop_table_on_view",
         "To drop a view you need to use the DROP VIEW command."),
        ("DROP VIEW sales.customers", "drop_view_on_table",
         "To drop a base table you need to use the DROP TABLE command."),
    ],
)  # fmt: skip
def test_the_wrong_form_is_refused_with_hives_message(
    metastore: Metastore, statement: str, code: str, message: str
) -> None:
    preview = preview_of(metastore, statement)

    assert [(f.code, f.message) for f in preview.blockers] == [(code, message)]
    assert preview.steps == ()


def test_dropping_a_view_deletes_its_rows_only(metastore: Metastore) -> None:
    preview = preview_of(metastore, "DROP VIEW marketing.campaign_performance")
    execute(preview)

    assert preview.moves == ()
    assert row_changes(preview)["TBLS"] == (0, 0, 1)
    assert not Table.objects.using(metastore.alias).filter(database__name="marketing", name="campaign_performance")


def test_a_table_that_does_not_exist_is_refused_naming_it(metastore: Metastore) -> None:
    with pytest.raises(ApplicationError, match="sales.nope"):
        preview_of(metastore, "DROP TABLE sales.nope")


@pytest.mark.parametrize(
    "statement", ["DROP TABLE IF EXISTS sales.nope", "DROP VIEW IF EXISTS marketing.nope", "DROP TABLE IF EXISTS no.t"]
)
def test_if_exists_on_a_missing_table_changes_nothing_and_says_so(metastore: Metastore, statement: str) -> None:
    """Hive does nothing and succeeds (its database missing too): the plan is empty, says so plainly, executes
    without writing anything, and has nothing to revert."""
    # given
    before = metastore_dump(metastore.alias)

    # when
    preview = preview_of(metastore, statement)
    execution = execute(preview)

    # then
    assert (preview.steps, preview.moves, preview.blockers, preview.events) == ((), (), (), None)
    assert [w.code for w in preview.warnings] == ["absent_noop"]
    assert "nothing will change" in preview.warnings[0].message
    assert preview.risk == "low"
    assert metastore_dump(metastore.alias) == before
    with pytest.raises(ApplicationError, match="changed nothing"):
        revert_preview(execution=execution)


def test_a_no_op_drop_is_refused_when_the_table_appeared_since(metastore: Metastore, warehouse: Path) -> None:
    # given
    preview = preview_of(metastore, "DROP TABLE IF EXISTS sales.late")
    execute(preview_of(metastore, "CREATE TABLE sales.late (id int)"))

    # when
    with pytest.raises(ApplicationError) as raised:
        execute(preview)

    # then
    assert raised.value.code == "stale_preview"
    assert Table.objects.using(metastore.alias).filter(database__name="sales", name="late").exists()


def test_open_transactions_block_the_drop_of_a_transactional_table(metastore: Metastore) -> None:
    """ops.job_runs_acid is seeded with an open write: Hive's EXCLUSIVE lock would wait for it."""
    preview = preview_of(metastore, "DROP TABLE ops.job_runs_acid")

    assert "open_transactions" in {f.code for f in preview.blockers}


def test_a_no_op_drop_after_the_drop_leaves_the_undrop_possible(metastore: Metastore, warehouse: Path) -> None:
    """The repeated ``DROP TABLE IF EXISTS`` changed nothing: it is not a later change standing in the undrop's way."""
    # given
    dropped = execute(preview_of(metastore, "DROP TABLE sales.customers"))
    execute(preview_of(metastore, "DROP TABLE IF EXISTS sales.customers"))

    # when
    execute(revert_preview(execution=dropped))

    # then
    assert Table.objects.using(metastore.alias).filter(database__name="sales", name="customers").exists()


def test_a_large_table_directory_is_sized_from_a_sample_of_its_partitions_and_still_moves_whole(
    metastore: Metastore, warehouse: Path, settings
) -> None:
    """Beyond ``CATALOG_DROP_SAMPLE_PARTITIONS`` partition directories inside the table's, the preview counts that
    many (evenly spaced) and scales them, says so ("about", the sample), and the directory still moves whole."""
    # given
    settings.CATALOG_DROP_SAMPLE_PARTITIONS = 2
    state = read_table_state(metastore, TableRef("sales", "orders"))
    root = path_of(state.location)
    tree = warehouse_tree(root)
    inside = [  # by name, the first and the last are the sample
        path_of(location)
        for location in Partition.objects.using(metastore.alias)
        .filter(table_id=state.table_id)
        .order_by("name")
        .values_list("sd__location", flat=True)
        if path_of(location).is_relative_to(root)
    ]
    on_disk = [path for path in inside if path.is_dir()]

    # when
    preview = preview_of(metastore, "DROP TABLE sales.orders")
    execute(preview)

    # then
    table_move = preview.moves[0]
    assert table_move.source == state.location
    assert len(on_disk) > 2
    assert table_move.sampled == (len({inside[0], inside[-1]} & set(on_disk)), len(on_disk))
    assert "about " in next(c.explanation for c in preview.criteria if c.name == "table_dropped")
    assert warehouse_tree(path_of(f"{trash_root(state)}/table")) == tree


def test_a_table_directory_that_is_a_link_is_refused_never_left_behind(
    metastore: Metastore, warehouse: Path, tmp_path: Path
) -> None:
    """The table's directory replaced by a link to data elsewhere: the move is planned and the containment guard
    refuses it, naming the link (the sampled count opens no link, and must not take it for a missing directory)."""
    # given
    state = read_table_state(metastore, TableRef("sales", "orders"))
    root = path_of(state.location)
    elsewhere = tmp_path / "elsewhere"
    root.rename(elsewhere)
    root.symlink_to(elsewhere)

    # when
    preview = preview_of(metastore, "DROP TABLE sales.orders")

    # then
    assert preview.moves[0].source == state.location
    assert any(str(root) in f.message and "link" in f.message for f in preview.blockers), preview.blockers
