"""
Partition changes on every metastore: ``RENAME TO PARTITION`` (rule 17) and ``DROP PARTITION`` by exact spec,
by ranges and by several specs; ranges on the integer key ``hour`` compare as numbers.

A renamed managed partition moves to its new directory and keeps its statistics. Dropped partitions lose every
dependent row; their managed data moves to the console's trash directory, never deleted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import (
    Partition,
    PartitionColumnStatistics,
    PartitionKeyValue,
    PartitionParam,
    SerDe,
    StorageDescriptor,
    Table,
)
from catalog_admin.selectors.metastores import Metastore
from operations.planners.partitions import TRASH_DIR
from operations.services.alter import alter_preview_statement
from tests.fixtures.operations import execute, location_of, path_of, row_changes, warehouse_tree

HOURLY = [f"dt={day}/hour={hour}" for day in ("2024-01-01", "2024-01-02", "2024-01-03") for hour in (0, 3, 6, 9)]
RELOCATED = {"dt=2024-01-01/hour=0", "dt=2024-01-01/hour=3"}
MISSING = {"dt=2024-01-03/hour=9"}  # seeded without a directory


def table_row(metastore: Metastore, database: str, name: str) -> Table:
    return Table.objects.on(metastore, "sd").get(database__name=database, name=name)


def partitions(metastore: Metastore, table_id: int) -> dict[str, dict]:
    rows = Partition.objects.using(metastore.alias).filter(table_id=table_id)
    return {row["name"]: row for row in rows.values("id", "name", "sd_id", "sd__location", "sd__serde_id")}


def test_renaming_a_managed_partition_moves_its_directory_and_keeps_its_statistics(
    metastore: Metastore, warehouse: Path
) -> None:
    """Name, key values and location change; the directory moves under the table root; the 4 statistics stay."""
    # given
    orders = table_row(metastore, "sales", "orders")
    before = partitions(metastore, orders.id)["dt=2024-01-02/hour=3"]
    tree = warehouse_tree(path_of(before["sd__location"]))
    target = f"{orders.sd.location}/dt=2024-02-01/hour=4"
    names_in_statistics = metastore.schema.has(PartitionColumnStatistics, "partition_name")

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE sales.orders PARTITION (dt='2024-01-02', hour=3) "
        "RENAME TO PARTITION (dt='2024-02-01', hour=4)",
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {"PARTITIONS": (0, 1, 0), "PARTITION_KEY_VALS": (0, 2, 0), "SDS": (0, 1, 0)} | (
        {"PART_COL_STATS": (0, 4, 0)} if names_in_statistics else {}
    )
    assert [(m.source, m.destination, m.files) for m in preview.moves] == [(before["sd__location"], target, 1)]
    assert (preview.risk, preview.partitions_touched, preview.blockers, preview.warnings) == ("high", 1, (), ())
    assert execution.actual_counts == execution.expected_counts
    after = partitions(metastore, orders.id)
    assert "dt=2024-01-02/hour=3" not in after
    renamed = after["dt=2024-02-01/hour=4"]
    assert (renamed["id"], renamed["sd__location"]) == (before["id"], target)
    values = PartitionKeyValue.objects.using(metastore.alias).filter(partition_id=before["id"]).order_by("position")
    assert list(values.values_list("value", flat=True)) == ["2024-02-01", "4"]
    statistics = PartitionColumnStatistics.objects.on(metastore).filter(partition_id=before["id"])
    assert statistics.count() == 4
    if names_in_statistics:
        assert set(statistics.values_list("partition_name", flat=True)) == {"dt=2024-02-01/hour=4"}
    assert not path_of(before["sd__location"]).exists()
    assert warehouse_tree(path_of(target)) == tree


def test_renaming_a_partition_of_an_external_table_keeps_its_location(metastore: Metastore, warehouse: Path) -> None:
    """Rule 17.3: external data stays; only the name and key values change."""
    # given
    clicks = table_row(metastore, "marketing", "clicks")
    before = partitions(metastore, clicks.id)["dt=2024-01-02/hour=3"]
    tree = warehouse_tree(warehouse)

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE marketing.clicks PARTITION (dt='2024-01-02', hour=3) "
        "RENAME TO PARTITION (dt='2024-01-02', hour=4)",
    )
    execution = execute(preview)

    # then
    assert (preview.moves, preview.risk) == ((), "medium")
    assert "SDS" not in row_changes(preview)
    assert execution.actual_counts == execution.expected_counts
    assert partitions(metastore, clicks.id)["dt=2024-01-02/hour=4"]["sd__location"] == before["sd__location"]
    assert warehouse_tree(warehouse) == tree


def test_dropping_one_partition_deletes_its_rows_and_moves_its_data_to_the_trash(
    metastore: Metastore, warehouse: Path
) -> None:
    """Every dependent row goes (params, key values, statistics, SD, SerDe); the shared columns stay."""
    # given
    orders = table_row(metastore, "sales", "orders")
    before = partitions(metastore, orders.id)["dt=2024-01-02/hour=3"]
    tree = warehouse_tree(path_of(before["sd__location"]))

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders DROP PARTITION (dt='2024-01-02', hour=3)"
    )
    trash = location_of(
        warehouse / "sales.db" / TRASH_DIR / "orders" / preview.fingerprint[:12] / "dt=2024-01-02/hour=3"
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {
        "PARTITIONS": (0, 0, 1),
        "PARTITION_KEY_VALS": (0, 0, 2),
        "PARTITION_PARAMS": (0, 0, 5),
        "PART_COL_STATS": (0, 0, 4),
        "SDS": (0, 0, 1),
        "SERDES": (0, 0, 1),
        "SERDE_PARAMS": (0, 0, 1),
    }
    assert [(m.source, m.destination) for m in preview.moves] == [(before["sd__location"], trash)]
    assert (preview.risk, preview.partitions_touched, preview.statistics_dropped) == ("high", 1, 4)
    assert execution.actual_counts == execution.expected_counts
    assert set(partitions(metastore, orders.id)) == set(HOURLY) - {"dt=2024-01-02/hour=3"}
    alias = metastore.alias
    assert not PartitionParam.objects.using(alias).filter(partition_id=before["id"]).exists()
    assert not PartitionKeyValue.objects.using(alias).filter(partition_id=before["id"]).exists()
    assert not PartitionColumnStatistics.objects.using(alias).filter(partition_id=before["id"]).exists()
    assert not StorageDescriptor.objects.using(alias).filter(id=before["sd_id"]).exists()
    assert not SerDe.objects.using(alias).filter(id=before["sd__serde_id"]).exists()
    assert StorageDescriptor.objects.using(alias).filter(cd_id=orders.sd.cd_id).count() == 12  # table + 11 partitions
    assert not path_of(before["sd__location"]).exists()
    assert warehouse_tree(path_of(trash)) == tree
    assert len(execution.before_image["deleted_rows"]["PARTITIONS"]) == 1


@pytest.mark.parametrize(
    ("predicates", "dropped"),
    [
        pytest.param("(hour < 10)", set(HOURLY), id="integer-less-than-10"),
        pytest.param("(hour > 3)", {p for p in HOURLY if p.endswith(("hour=6", "hour=9"))}, id="integer-greater"),
        pytest.param("(hour <> 0)", {p for p in HOURLY if not p.endswith("hour=0")}, id="integer-not-equal"),
        pytest.param(
            "(dt >= '2024-01-02', hour <= 3)",
            {"dt=2024-01-02/hour=0", "dt=2024-01-02/hour=3", "dt=2024-01-03/hour=0", "dt=2024-01-03/hour=3"},
            id="string-and-integer-range",
        ),
        pytest.param(
            "(dt < '2024-01-02'), PARTITION (hour >= 9)",
            {p for p in HOURLY if p.startswith("dt=2024-01-01") or p.endswith("hour=9")},
            id="two-specs",
        ),
    ],
)
def test_dropping_partitions_by_range(
    metastore: Metastore, warehouse: Path, predicates: str, dropped: set[str]
) -> None:
    """Ranges match by value (numbers for the int key: 'hour < 10' is every hour); each managed directory is trashed."""
    # given
    orders = table_row(metastore, "sales", "orders")
    before = partitions(metastore, orders.id)
    statistics = PartitionColumnStatistics.objects.using(metastore.alias).filter(partition__table_id=orders.id)
    params = PartitionParam.objects.using(metastore.alias).filter(partition__table_id=orders.id)

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.orders DROP PARTITION {predicates}"
    )
    expected_params = params.filter(partition__name__in=dropped).count()
    execution = execute(preview)

    # then
    n = len(dropped)
    assert row_changes(preview) == {
        "PARTITIONS": (0, 0, n),
        "PARTITION_KEY_VALS": (0, 0, 2 * n),
        "PARTITION_PARAMS": (0, 0, expected_params),
        "PART_COL_STATS": (0, 0, 4 * n),
        "SDS": (0, 0, n),
        "SERDES": (0, 0, n),
        "SERDE_PARAMS": (0, 0, n),
    }
    assert sorted(m.source for m in preview.moves) == sorted(before[p]["sd__location"] for p in dropped - MISSING)
    assert [w.code for w in preview.warnings] == (["directories_missing"] if dropped & MISSING else [])
    assert execution.actual_counts == execution.expected_counts
    assert set(partitions(metastore, orders.id)) == set(HOURLY) - dropped
    assert statistics.count() == 4 * (12 - n)
    for name in dropped - MISSING:
        assert not path_of(before[name]["sd__location"]).exists()
    for move in preview.moves:
        assert path_of(move.destination).is_dir()


def test_dropping_partitions_of_an_external_table_keeps_the_data(metastore: Metastore, warehouse: Path) -> None:
    """The rows go, the files stay where they are."""
    # given
    clicks = table_row(metastore, "marketing", "clicks")
    tree = warehouse_tree(warehouse)

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE marketing.clicks DROP PARTITION (dt='2024-01-03')"
    )
    execution = execute(preview)

    # then
    assert row_changes(preview)["PARTITIONS"] == (0, 0, 4)
    assert row_changes(preview)["SERDE_PARAMS"] == (0, 0, 8)
    assert (preview.moves, [w.code for w in preview.warnings]) == ((), ["external_data_kept"])
    assert execution.actual_counts == execution.expected_counts
    assert not any(name.startswith("dt=2024-01-03") for name in partitions(metastore, clicks.id))
    assert warehouse_tree(warehouse) == tree


def test_dropping_managed_partitions_whose_data_the_console_cannot_reach_is_refused(metastore: Metastore) -> None:
    # given: one partition of a managed table lives on HDFS, which this console has no client for
    table = table_row(metastore, "sales", "orders")
    partition = Partition.objects.on(metastore).filter(table_id=table.id).order_by("name").first()
    with allow_metastore_writes():
        StorageDescriptor.objects.using(metastore.alias).filter(id=partition.sd_id).update(
            location="hdfs://namenode:8020/warehouse/sales.db/orders/" + partition.name
        )
    values = dict(pair.split("=") for pair in partition.name.split("/"))

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders DROP PARTITION (dt='{values['dt']}', hour={values['hour']})",
    )

    # then
    assert [b.code for b in preview.blockers] == ["filesystem_unreachable"]
    assert "hdfs" in preview.blockers[0].message
