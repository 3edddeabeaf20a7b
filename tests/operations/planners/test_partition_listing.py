"""
What a DROP PARTITION or a partition rename preview lists (``Preview.affected``): which partitions, their rows
(``numRows``) and bytes (files on disk, else ``totalSize``), a bounded list with the count of all, and what happens
to the data in the console and in Hive (trash, ``PURGE``, ``auto.purge``).
"""

from __future__ import annotations

import pytest

from catalog_admin.models import Partition, PartitionParam
from catalog_admin.selectors.metastores import Metastore
from operations.planners.partitions import listing
from operations.services.alter import alter_preview_statement
from tests.fixtures.factories import table_row

pytestmark = pytest.mark.django_db(databases="__all__")

DAY_ONE = [f"dt=2024-01-01/hour={hour}" for hour in (0, 3, 6, 9)]
MISSING = "dt=2024-01-03/hour=9"  # seeded without a directory


def statistic(metastore: Metastore, table_id: int, key: str, names: list[str]) -> int:
    rows = PartitionParam.objects.using(metastore.alias).filter(
        partition__table_id=table_id, partition__name__in=names, key=key
    )
    return sum(int(value) for value in rows.values_list("value", flat=True))


def test_a_drop_lists_the_partitions_their_rows_bytes_and_where_the_data_goes(metastore: Metastore) -> None:
    """Every dropped partition is listed with its rows and bytes; the totals are the sums; the data goes to the
    console's trash, which nothing empties; Hive would use the file system's trash."""
    # given
    orders = table_row(metastore, "sales", "orders")

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders DROP PARTITION (dt='2024-01-01')"
    )

    # then
    affected = preview.affected
    assert (affected.action, affected.count) == ("dropped", 4)
    assert [p.name for p in affected.listed] == sorted(DAY_ONE)
    assert affected.rows == statistic(metastore, orders.id, "numRows", DAY_ONE) > 0
    moved = {m.source: m for m in preview.moves}
    on_disk = {p.name: p.bytes for p in affected.listed if p.location in moved}
    assert all(on_disk[p.name] == moved[p.location].bytes for p in affected.listed if p.location in moved)
    assert affected.bytes == sum(p.bytes for p in affected.listed)
    assert all(
        p.fate.startswith("to the trash: ") and ".catalog-admin-trash/orders/" in p.fate for p in affected.listed
    )
    assert "never deletes data" in affected.data and "nothing empties the console's trash" in affected.data
    assert "fs.trash.interval" in affected.hive_data
    assert preview.as_dict()["affected"]["more"] == 0


def test_purge_and_auto_purge_are_stated_as_hive_would_do_them(metastore: Metastore) -> None:
    """PURGE: Hive would skip the trash; the console still moves the data to its own trash."""
    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders DROP PARTITION (dt='2024-01-02') PURGE"
    )

    # then
    assert "outright (PURGE" in preview.affected.hive_data
    assert "PURGE and auto.purge do not delete here" in preview.affected.data


def test_a_partition_without_a_directory_and_an_external_table_keep_their_files(metastore: Metastore) -> None:
    """A partition missing on disk loses only metadata; an external table's files stay."""
    # when
    missing = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders DROP PARTITION (dt='2024-01-03', hour=9)"
    )
    external = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE marketing.clicks DROP PARTITION (dt='2024-01-01')"
    )

    # then
    assert [(p.name, p.fate) for p in missing.affected.listed] == [(MISSING, "no directory on disk: metadata only")]
    assert {p.fate for p in external.affected.listed} == {"files kept (external table)"}
    assert "leaves every file where it is" in external.affected.data
    assert external.affected.hive_data == "Hive keeps an external table's files too."


def test_a_huge_drop_lists_a_bounded_page_and_counts_all(metastore: Metastore, monkeypatch) -> None:
    """Only the first LISTED partitions by name are listed; the count and totals still cover every one."""
    # given
    monkeypatch.setattr(listing, "LISTED", 3)
    orders = table_row(metastore, "sales", "orders")

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders DROP PARTITION (dt>='2024-01-01')"
    )

    # then
    affected = preview.affected
    names = [p.name for p in affected.listed]
    assert len(names) == 3 and names == sorted(names)
    assert affected.count == preview.partitions_touched > 3
    assert preview.as_dict()["affected"]["more"] == affected.count - 3
    all_names = list(Partition.objects.using(metastore.alias).filter(table_id=orders.id).values_list("name", flat=True))
    assert affected.rows == statistic(metastore, orders.id, "numRows", all_names)


def test_a_partition_rename_lists_the_partition_its_new_name_and_where_its_data_goes(metastore: Metastore) -> None:
    """One partition, its new name, its rows, and the directory its data moves to."""
    # given
    orders = table_row(metastore, "sales", "orders")

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE sales.orders PARTITION (dt='2024-01-02', hour=3) "
        "RENAME TO PARTITION (dt='2024-02-02', hour=3)",
    )

    # then
    (renamed,) = preview.affected.listed
    assert (renamed.name, renamed.new_name) == ("dt=2024-01-02/hour=3", "dt=2024-02-02/hour=3")
    assert renamed.rows == statistic(metastore, orders.id, "numRows", ["dt=2024-01-02/hour=3"])
    assert renamed.fate == f"moves to {preview.moves[0].destination} (journaled; a revert moves it back)"
    assert preview.affected.bytes == preview.moves[0].bytes
