"""
``ADD COLUMNS``, ``REPLACE COLUMNS`` and ``CHANGE COLUMN``, with and without CASCADE, on every metastore.

The table gets one new column descriptor; with CASCADE every partition shares it and the old descriptor goes.
Statistics of renamed columns are kept under the new name; a type change or a drop removes that column's.
New descriptor ids come from SEQUENCE_TABLE, whose NEXT_VAL stays above every id in use.
"""

from __future__ import annotations

import json

from catalog_admin.models import (
    Column,
    ColumnDescriptor,
    Partition,
    PartitionColumnStatistics,
    PartitionParam,
    StorageDescriptor,
    Table,
    TableColumnStatistics,
    TableParam,
)
from catalog_admin.selectors.metastores import Metastore
from operations.models import Execution
from operations.services.alter import alter_preview_statement
from tests.fixtures.operations import execute, row_changes, sequences_behind

STATS_KEY = "COLUMN_STATS_ACCURATE"


def table_row(metastore: Metastore, database: str, name: str) -> Table:
    return Table.objects.on(metastore, "sd").get(database__name=database, name=name)


def columns(metastore: Metastore, cd_id: int) -> list[tuple[str, str, str | None]]:
    return list(
        Column.objects.using(metastore.alias)
        .filter(cd_id=cd_id)
        .order_by("position")
        .values_list("name", "type", "comment")
    )


def partition_descriptors(metastore: Metastore, table_id: int) -> set[int]:
    return set(Partition.objects.using(metastore.alias).filter(table_id=table_id).values_list("sd__cd_id", flat=True))


def partition_statistics(metastore: Metastore, table_id: int) -> dict[str, int]:
    rows = PartitionColumnStatistics.objects.using(metastore.alias).filter(partition__table_id=table_id)
    names = list(rows.values_list("column_name", flat=True))
    return {name: names.count(name) for name in set(names)}


def partition_flags(metastore: Metastore, table_id: int) -> list[set[str]]:
    """The column names flagged in each partition's COLUMN_STATS_ACCURATE."""
    values = PartitionParam.objects.using(metastore.alias).filter(partition__table_id=table_id, key=STATS_KEY)
    return [set(json.loads(value)["COLUMN_STATS"]) for value in values.values_list("value", flat=True)]


def table_flags(metastore: Metastore, table_id: int) -> set[str]:
    value = TableParam.objects.using(metastore.alias).get(table_id=table_id, key=STATS_KEY).value
    return set(json.loads(value)["COLUMN_STATS"])


ORDERS_COLUMNS = [
    ("id", "bigint", None),
    ("customer_id", "bigint", None),
    ("amount", "decimal(10,2)", None),
    ("status", "string", None),
]


def test_add_columns_without_cascade_leaves_partitions_on_their_descriptor(metastore: Metastore) -> None:
    """Only the table moves to a new descriptor; the old one stays, shared by the partitions (rule 10.4)."""
    # given
    orders = table_row(metastore, "sales", "orders")
    old_cd = orders.sd.cd_id

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders ADD COLUMNS (note string COMMENT 'free text')"
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {"CDS": (1, 0, 0), "COLUMNS_V2": (5, 0, 0), "SDS": (0, 1, 0)}
    assert (preview.risk, preview.partitions_touched, preview.moves) == ("medium", 0, ())
    assert [w.code for w in preview.warnings] == ["not_cascaded"]
    assert execution.actual_counts == execution.expected_counts
    new_cd = table_row(metastore, "sales", "orders").sd.cd_id
    assert new_cd != old_cd
    assert columns(metastore, new_cd) == [*ORDERS_COLUMNS, ("note", "string", "free text")]
    assert partition_descriptors(metastore, orders.id) == {old_cd}
    assert columns(metastore, old_cd) == ORDERS_COLUMNS
    assert partition_statistics(metastore, orders.id) == dict.fromkeys(["id", "customer_id", "amount", "status"], 12)
    assert sequences_behind(metastore) == {}


def test_add_columns_with_cascade_shares_one_descriptor(metastore: Metastore) -> None:
    """The table and all 12 partitions point at the same new descriptor; the unused old one is removed."""
    # given
    orders = table_row(metastore, "sales", "orders")
    old_cd = orders.sd.cd_id

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders ADD COLUMNS (note string) CASCADE"
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {"CDS": (1, 0, 1), "COLUMNS_V2": (5, 0, 4), "SDS": (0, 13, 0)}
    assert (preview.risk, preview.partitions_touched, preview.statistics_dropped) == ("medium", 12, 0)
    assert preview.warnings == ()
    assert execution.actual_counts == execution.expected_counts
    new_cd = table_row(metastore, "sales", "orders").sd.cd_id
    assert partition_descriptors(metastore, orders.id) == {new_cd}
    assert not ColumnDescriptor.objects.using(metastore.alias).filter(id=old_cd).exists()
    assert not Column.objects.using(metastore.alias).filter(cd_id=old_cd).exists()
    assert columns(metastore, new_cd) == [*ORDERS_COLUMNS, ("note", "string", None)]
    assert sum(partition_statistics(metastore, orders.id).values()) == 48
    assert sequences_behind(metastore) == {}


def test_renaming_a_column_with_cascade_keeps_its_statistics(metastore: Metastore) -> None:
    """CHANGE status state: the 12 partition statistics and the 9 accuracy flags follow the new name."""
    # given
    orders = table_row(metastore, "sales", "orders")

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders CHANGE status state string CASCADE"
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {
        "CDS": (1, 0, 1),
        "COLUMNS_V2": (4, 0, 4),
        "PARTITION_PARAMS": (0, 9, 0),
        "PART_COL_STATS": (0, 12, 0),
        "SDS": (0, 13, 0),
    }
    assert (preview.statistics_moved, preview.statistics_dropped) == (12, 0)
    assert [w.code for w in preview.warnings] == ["stats_kept"]
    assert execution.actual_counts == execution.expected_counts
    assert columns(metastore, table_row(metastore, "sales", "orders").sd.cd_id)[-1] == ("state", "string", None)
    assert partition_statistics(metastore, orders.id) == dict.fromkeys(["id", "customer_id", "amount", "state"], 12)
    assert partition_flags(metastore, orders.id) == [{"id", "customer_id", "amount", "state"}] * 9


def test_replace_columns_with_cascade_drops_the_statistics_of_dropped_and_retyped_columns(metastore: Metastore) -> None:
    """status disappears and amount changes type: their 24 statistics rows and flags go, the others stay."""
    # given
    orders = table_row(metastore, "sales", "orders")

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE sales.orders REPLACE COLUMNS "
        "(id bigint, customer_id bigint, amount decimal(12,2)) CASCADE",
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {
        "CDS": (1, 0, 1),
        "COLUMNS_V2": (3, 0, 4),
        "PARTITION_PARAMS": (0, 18, 0),
        "PART_COL_STATS": (0, 0, 24),
        "SDS": (0, 13, 0),
    }
    assert (preview.risk, preview.statistics_dropped) == ("high", 24)
    assert execution.actual_counts == execution.expected_counts
    new_cd = table_row(metastore, "sales", "orders").sd.cd_id
    assert partition_descriptors(metastore, orders.id) == {new_cd}
    assert partition_statistics(metastore, orders.id) == {"id": 12, "customer_id": 12}
    assert partition_flags(metastore, orders.id) == [{"id", "customer_id"}] * 9


def test_changing_a_column_of_an_unpartitioned_table_keeps_its_statistics_under_the_new_name(
    metastore: Metastore,
) -> None:
    """CHANGE email mail: the table's statistics row and accuracy flag are re-labelled, nothing is lost."""
    # given
    customers = table_row(metastore, "sales", "customers")

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.customers CHANGE email mail string AFTER country"
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {
        "CDS": (1, 0, 1),
        "COLUMNS_V2": (5, 0, 5),
        "SDS": (0, 1, 0),
        "TABLE_PARAMS": (0, 1, 0),
        "TAB_COL_STATS": (0, 1, 0),
    }
    assert execution.actual_counts == execution.expected_counts
    new_cd = table_row(metastore, "sales", "customers").sd.cd_id
    assert [name for name, _t, _c in columns(metastore, new_cd)] == ["id", "name", "country", "mail", "signup_date"]
    names = set(
        TableColumnStatistics.objects.using(metastore.alias)
        .filter(table_id=customers.id)
        .values_list("column_name", flat=True)
    )
    assert names == {"id", "name", "mail", "country", "signup_date"}
    assert table_flags(metastore, customers.id) == names
    assert not ColumnDescriptor.objects.using(metastore.alias).filter(id=customers.sd.cd_id).exists()
    assert sequences_behind(metastore) == {}


def test_replace_columns_of_an_unpartitioned_table_drops_the_missing_columns_statistics(metastore: Metastore) -> None:
    """REPLACE COLUMNS (id, name) without the other three: their three statistics rows and flags go."""
    # given
    customers = table_row(metastore, "sales", "customers")

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.customers REPLACE COLUMNS (id bigint, name string)"
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {
        "CDS": (1, 0, 1),
        "COLUMNS_V2": (2, 0, 5),
        "SDS": (0, 1, 0),
        "TABLE_PARAMS": (0, 1, 0),
        "TAB_COL_STATS": (0, 0, 3),
    }
    assert (preview.risk, preview.statistics_dropped) == ("high", 3)
    assert execution.actual_counts == execution.expected_counts
    assert execution.state == Execution.State.SUCCEEDED
    names = set(
        TableColumnStatistics.objects.using(metastore.alias)
        .filter(table_id=customers.id)
        .values_list("column_name", flat=True)
    )
    assert names == {"id", "name"} == table_flags(metastore, customers.id)


def test_a_column_moves_and_keeps_its_type_and_statistics(metastore: Metastore) -> None:
    """CHANGE … AFTER reorders the columns; a same-name, same-type change keeps every statistic."""
    # given
    customers = table_row(metastore, "sales", "customers")

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE sales.customers CHANGE country country string COMMENT 'ISO' AFTER id",
    )
    execute(preview)

    # then
    assert "TAB_COL_STATS" not in row_changes(preview)
    assert columns(metastore, table_row(metastore, "sales", "customers").sd.cd_id)[:3] == [
        ("id", "bigint", None),
        ("country", "string", "ISO"),
        ("name", "string", None),
    ]
    assert TableColumnStatistics.objects.using(metastore.alias).filter(table_id=customers.id).count() == 5


def test_column_change_allocates_descriptor_ids_above_the_sequence(metastore: Metastore) -> None:
    """The new descriptor id is NEXT_VAL's, and NEXT_VAL moves past it (a running Hive cannot reuse it)."""
    # given
    from catalog_admin.models import Sequence

    name = "org.apache.hadoop.hive.metastore.model.MColumnDescriptor"
    before = Sequence.objects.using(metastore.alias).filter(name=name).values_list("next_val", flat=True).first() or 0

    # when
    execution = execute(
        alter_preview_statement(metastore=metastore, statement="ALTER TABLE sales.customers ADD COLUMNS (vip boolean)")
    )

    # then
    new_cd = (
        StorageDescriptor.objects.using(metastore.alias).get(id=table_row(metastore, "sales", "customers").sd_id).cd_id
    )
    assert new_cd >= before
    assert Sequence.objects.using(metastore.alias).get(name=name).next_val > new_cd
    assert execution.before_image["allocated_ids"] == {"CDS:0": new_cd}
    assert sequences_behind(metastore) == {}
