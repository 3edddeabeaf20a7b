"""
``ALTER TABLE … RENAME TO …`` on every metastore: the preview's counts, moves, risk and warnings, then the
execution's effect on the metastore rows (read through the models) and on the warehouse directories.

Statistics rows are re-labelled, never dropped; 4.0 keys them by id only, so nothing is rewritten there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import (
    CompactionMetric,
    CompactionQueueEntry,
    CompletedCompaction,
    CompletedTransactionComponent,
    HiveLock,
    NextWriteId,
    Partition,
    PartitionColumnStatistics,
    Table,
    TableColumnStatistics,
    TransactionComponent,
    TransactionWriteId,
    WriteSetEntry,
)
from catalog_admin.selectors.metastores import Metastore
from operations.models import DirectoryMoveRecord, Execution
from operations.services.alter import alter_preview_statement
from tests.fixtures.operations import execute, location_of, path_of, row_changes, sequences_behind, warehouse_tree

ACID_BOOKKEEPING = (
    NextWriteId,
    TransactionWriteId,
    CompactionQueueEntry,
    CompletedCompaction,
    TransactionComponent,
    CompletedTransactionComponent,
    WriteSetEntry,
    CompactionMetric,
    HiveLock,
)


def names_in_statistics(metastore: Metastore) -> bool:
    """Statistics rows carry the db and table names before 4.0."""
    return metastore.schema.has(TableColumnStatistics, "db_name")


def table_row(metastore: Metastore, database: str, name: str) -> Table:
    return Table.objects.on(metastore, "sd", "database").get(database__name=database, name=name)


def table_exists(metastore: Metastore, database: str, name: str) -> bool:
    return Table.objects.using(metastore.alias).filter(database__name=database, name=name).exists()


def partition_locations(metastore: Metastore, table_id: int) -> dict[str, str]:
    return dict(Partition.objects.using(metastore.alias).filter(table_id=table_id).values_list("name", "sd__location"))


def test_rename_of_a_partitioned_managed_table_moves_its_directory(metastore: Metastore, warehouse: Path) -> None:
    """Within a database: the table directory and the partitions under it move; relocated partitions stay."""
    # given
    orders = table_row(metastore, "sales", "orders")
    old_root, new_root = orders.sd.location, location_of(warehouse / "sales.db" / "orders_v2")
    before_locations = partition_locations(metastore, orders.id)
    before_tree = warehouse_tree(path_of(old_root))
    stats = 48 if names_in_statistics(metastore) else 0

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders RENAME TO orders_v2", default_database="sales"
    )

    # then
    assert preview.blockers == ()
    assert row_changes(preview) == {"TBLS": (0, 1, 0), "SDS": (0, 11, 0)} | (
        {"PART_COL_STATS": (0, stats, 0)} if stats else {}
    )
    assert [(m.source, m.destination, m.partitions_moving, m.partitions_staying) for m in preview.moves] == [
        (old_root, new_root, 10, 2)
    ]
    assert (preview.moves[0].files, preview.moves[0].source_exists, preview.moves[0].destination_free) == (
        9,
        True,
        True,
    )
    assert preview.risk == "high"
    assert [w.code for w in preview.warnings] == ["partitions_outside_root"]
    assert (preview.partitions_touched, preview.statistics_moved, preview.statistics_dropped) == (10, stats, 0)
    assert preview.diff == [("name", "orders", "orders_v2"), ("location", old_root, new_root)]

    # when
    execution = execute(preview)

    # then
    assert execution.state == Execution.State.SUCCEEDED
    assert execution.actual_counts == execution.expected_counts
    assert not table_exists(metastore, "sales", "orders")
    renamed = table_row(metastore, "sales", "orders_v2")
    assert (renamed.id, renamed.sd.location) == (orders.id, new_root)
    assert partition_locations(metastore, orders.id) == {
        name: location.replace(old_root + "/", new_root + "/") for name, location in before_locations.items()
    }
    assert (
        sum(location.startswith(new_root + "/") for location in partition_locations(metastore, orders.id).values())
        == 10
    )
    statistics = PartitionColumnStatistics.objects.on(metastore).filter(partition__table_id=orders.id)
    assert statistics.count() == 48
    if names_in_statistics(metastore):
        assert set(statistics.values_list("db_name", "table_name")) == {("sales", "orders_v2")}
    assert not path_of(old_root).exists()
    assert warehouse_tree(path_of(new_root)) == before_tree
    assert list(execution.moves.values_list("state", flat=True)) == [DirectoryMoveRecord.State.COMMITTED]
    assert sequences_behind(metastore) == {}


def test_rename_finds_partition_statistics_by_their_names_as_hive_does(metastore: Metastore, warehouse: Path) -> None:
    """Rows labelled with another table's names (or, on 3.x, another catalog) are not the table's for Hive."""
    if not names_in_statistics(metastore):
        pytest.skip("Hive 4 keys partition statistics by id only")
    # given: of the 48 statistics rows of sales.orders' partitions, one carries a stale name, one another catalog
    orders = table_row(metastore, "sales", "orders")
    rows = PartitionColumnStatistics.objects.using(metastore.alias).filter(partition__table_id=orders.id)
    stale, elsewhere = rows.order_by("id").values_list("id", flat=True)[:2]
    has_catalog = metastore.schema.has(PartitionColumnStatistics, "catalog_name")
    with allow_metastore_writes():
        rows.filter(id=stale).update(table_name="orders_2019")
        if has_catalog:
            rows.filter(id=elsewhere).update(catalog_name="spark")
    kept = 47 - has_catalog

    # when
    preview = alter_preview_statement(metastore=metastore, statement="ALTER TABLE sales.orders RENAME TO orders_v2")
    execution = execute(preview)

    # then
    assert row_changes(preview)["PART_COL_STATS"] == (0, kept, 0)
    assert execution.actual_counts == execution.expected_counts
    labels = rows.values_list("table_name", flat=True)
    assert sorted(labels.filter(id__in=(stale, elsewhere))) == sorted(
        ["orders_2019", "orders" if has_catalog else "orders_v2"]
    )
    assert labels.filter(table_name="orders_v2").count() == kept


def test_the_preview_shows_what_hive_would_do_and_cost(metastore: Metastore, settings) -> None:
    """Hive 2.3 rewrites each partition and deletes every statistics row; 3.1 deletes and re-inserts them partition by
    partition; 4.0 rewrites partitions only. The estimate follows CATALOG_HIVE_COST."""
    # given: sales.orders has 12 partitions (10 under its directory) and 48 partition statistics rows
    settings.CATALOG_HIVE_COST = {"base_seconds": 1.0, "partition_ms": 1000.0, "statistic_ms": 100.0}
    version = metastore.schema.version.major

    # when
    hive = alter_preview_statement(metastore=metastore, statement="ALTER TABLE sales.orders RENAME TO orders_v2").hive

    # then
    round_trips, deleted, rewritten = {2: (12, 48, 48), 3: (24, 0, 96), 4: (12, 0, 0)}[version]
    assert (hive.partition_round_trips, hive.statistics_deleted) == (round_trips, deleted)
    assert hive.estimated_seconds == 1.0 + round_trips + rewritten / 10
    assert bool(hive.notes)


def test_rename_across_databases_moves_to_the_new_database_directory(metastore: Metastore, warehouse: Path) -> None:
    """An unpartitioned managed table lands in ``<new db>/<name>``, with its table statistics."""
    # given
    customers = table_row(metastore, "sales", "customers")
    before_tree = warehouse_tree(path_of(customers.sd.location))
    new_root = location_of(warehouse / "marketing.db" / "clients")
    stats = 5 if names_in_statistics(metastore) else 0

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.customers RENAME TO marketing.clients"
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {"TBLS": (0, 1, 0), "SDS": (0, 1, 0)} | (
        {"TAB_COL_STATS": (0, stats, 0)} if stats else {}
    )
    assert [(m.source, m.destination) for m in preview.moves] == [(customers.sd.location, new_root)]
    assert preview.warnings == ()
    assert execution.actual_counts == execution.expected_counts
    renamed = table_row(metastore, "marketing", "clients")
    assert (renamed.id, renamed.sd.location, renamed.database.name) == (customers.id, new_root, "marketing")
    statistics = TableColumnStatistics.objects.on(metastore).filter(table_id=customers.id)
    assert statistics.count() == 5
    if names_in_statistics(metastore):
        assert set(statistics.values_list("db_name", "table_name")) == {("marketing", "clients")}
    assert warehouse_tree(path_of(new_root)) == before_tree
    assert not path_of(customers.sd.location).exists()


def test_rename_of_an_acid_table_renames_its_bookkeeping(metastore: Metastore, warehouse: Path) -> None:
    """Open transactions, locks, write ids and compactions follow the new name; the preview warns about them."""
    # given
    old = {
        m: m.objects.using(metastore.alias).filter(database="ops", table="job_runs_acid").count()
        for m in ACID_BOOKKEEPING
        if metastore.schema.has_table(m)
    }
    jobs = table_row(metastore, "ops", "job_runs_acid")
    assert all(old.values()), "the seed has rows in every ACID bookkeeping table the schema has"

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE ops.job_runs_acid RENAME TO ops.job_runs"
    )
    execution = execute(preview)

    # then
    assert [w.code for w in preview.warnings] == ["open_transactions", "locks_held"]
    assert {t: c for t, c in row_changes(preview).items() if t not in ("TBLS", "SDS", "PART_COL_STATS")} == {
        m._meta.db_table: (0, n, 0) for m, n in old.items() if n
    }
    assert row_changes(preview)["SDS"] == (0, 5, 0)  # the table and its four partitions
    assert execution.actual_counts == execution.expected_counts
    for model, count in old.items():
        assert model.objects.using(metastore.alias).filter(database="ops", table="job_runs_acid").count() == 0
        assert model.objects.using(metastore.alias).filter(database="ops", table="job_runs").count() == count
    assert table_row(metastore, "ops", "job_runs").sd.location == location_of(warehouse / "ops.db" / "job_runs")
    assert (path_of(jobs.sd.location).exists(), (warehouse / "ops.db" / "job_runs").is_dir()) == (False, True)


def test_rename_of_an_external_table_changes_metadata_only(metastore: Metastore, warehouse: Path) -> None:
    """Rule 8.2: the location and the directory stay; statistics follow the name."""
    # given
    clicks = table_row(metastore, "marketing", "clicks")
    locations = partition_locations(metastore, clicks.id)
    tree = warehouse_tree(warehouse)
    stats = 48 if names_in_statistics(metastore) else 0

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE marketing.clicks RENAME TO ops.clicks"
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {"TBLS": (0, 1, 0)} | ({"PART_COL_STATS": (0, stats, 0)} if stats else {})
    assert (preview.moves, preview.risk, preview.partitions_touched) == ((), "low", 0)
    assert execution.actual_counts == execution.expected_counts
    assert table_row(metastore, "ops", "clicks").sd.location == clicks.sd.location
    assert partition_locations(metastore, clicks.id) == locations
    assert warehouse_tree(warehouse) == tree


def test_rename_of_a_view_changes_its_name_only(metastore: Metastore) -> None:
    """Rule 7.6: a view has no location; only TBLS changes."""
    # given
    view = table_row(metastore, "marketing", "campaign_performance")

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE marketing.campaign_performance RENAME TO sales.performance"
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {"TBLS": (0, 1, 0)}
    assert (preview.moves, preview.risk) == ((), "low")
    assert execution.actual_counts == execution.expected_counts
    renamed = table_row(metastore, "sales", "performance")
    assert (renamed.id, renamed.type, renamed.view_original_text) == (view.id, "VIRTUAL_VIEW", view.view_original_text)
