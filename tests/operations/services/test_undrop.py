"""
Undrop: reverting a ``DROP TABLE`` puts back every row with its own ids (table, partitions, statistics, privileges)
and moves the data back from the console's trash; refused, naming what is missing, once the trash no longer holds it
or the name was taken.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from catalog_admin.errors import ApplicationError
from catalog_admin.models import Table
from catalog_admin.selectors.metastores import Metastore
from operations.services.alter import alter_preview_statement
from operations.services.revert import revert_preview
from operations.specs import TableRef
from operations.table_state import read_table_state
from tests.fixtures.operations import execute, metastore_dump, path_of, warehouse_tree


@pytest.mark.parametrize("table", ["sales.orders", "sales.payments_acid", "marketing.clicks"])
def test_undrop_restores_every_row_and_the_data_exactly(metastore: Metastore, warehouse: Path, table: str) -> None:
    """A managed partitioned table (data in and outside its directory), a transactional one (ACID bookkeeping)
    and an external one: after drop and undrop the metastore's rows and the warehouse are as before."""
    # given
    rows_before = metastore_dump(metastore.alias, events=False)
    tree_before = warehouse_tree(warehouse)

    # when
    dropped = execute(alter_preview_statement(metastore=metastore, statement=f"DROP TABLE {table}"))
    undrop = revert_preview(execution=dropped)
    restored = execute(undrop)

    # then
    assert undrop.blockers == ()
    assert restored.actual_counts == restored.expected_counts
    assert metastore_dump(metastore.alias, events=False) == rows_before
    assert warehouse_tree(warehouse) == tree_before


def test_undrop_is_refused_naming_the_data_no_longer_in_the_trash(metastore: Metastore, warehouse: Path) -> None:
    # given
    dropped = execute(alter_preview_statement(metastore=metastore, statement="DROP TABLE sales.orders"))
    emptied = dropped.before_image["trash"][0]
    shutil.rmtree(path_of(emptied))

    # when
    undrop = revert_preview(execution=dropped)

    # then
    assert [f.code for f in undrop.blockers] == ["trash_missing"]
    assert emptied in undrop.blockers[0].message
    with pytest.raises(ApplicationError, match="trash"):
        execute(undrop)
    assert not Table.objects.using(metastore.alias).filter(database__name="sales", name="orders").exists()


def test_undrop_is_refused_while_another_table_has_the_name(metastore: Metastore, warehouse: Path) -> None:
    # given
    dropped = execute(alter_preview_statement(metastore=metastore, statement="DROP TABLE sales.customers"))
    renamed = "ALTER TABLE sales.orders RENAME TO sales.customers"
    execute(alter_preview_statement(metastore=metastore, statement=renamed))

    # when
    undrop = revert_preview(execution=dropped)

    # then
    assert "name_in_use" in [f.code for f in undrop.blockers]
    assert read_table_state(metastore, TableRef("sales", "customers")).partition_keys  # the renamed orders


def test_undrop_is_refused_while_a_data_location_exists_again_and_its_move_says_so(
    metastore: Metastore, warehouse: Path
) -> None:
    """Something was put back where the data is to return: the undrop is blocked naming it, and its move back tells
    the truth (the destination is not free), as every revert's moves back do."""
    # given
    dropped = execute(alter_preview_statement(metastore=metastore, statement="DROP TABLE sales.orders"))
    record = dropped.moves.order_by("pk").first()
    assert record is not None
    path_of(record.source).mkdir(parents=True)

    # when
    undrop = revert_preview(execution=dropped)

    # then
    assert "location_taken" in [f.code for f in undrop.blockers]
    assert [m.destination_free for m in undrop.moves if m.destination == record.source] == [False]
    assert all(m.destination_free for m in undrop.moves if m.destination != record.source)
