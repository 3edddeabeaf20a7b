"""
``ALTER TABLE … RENAME TO …`` on every metastore: the preview's counts, moves, risk and warnings, then the
execution's effect on the metastore rows (read through the models) and on the warehouse directories.

Statistics rows are re-labelled, never dropped; 4.0 keys them by id only, so nothing is rewritten there.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import (
    CompactionMetric,
    CompactionQueueEntry,
    CompletedCompaction,
    CompletedTransactionComponent,
    Database,
    DatabaseParam,
    HiveLock,
    NextWriteId,
    Partition,
    PartitionColumnStatistics,
    StorageDescriptor,
    Table,
    TableColumnStatistics,
    TableParam,
    TransactionComponent,
    TransactionWriteId,
    WriteSetEntry,
)
from catalog_admin.selectors.metastores import Metastore
from operations.models import DirectoryMoveRecord, Execution
from operations.services.alter import alter_preview, alter_preview_statement
from operations.services.revert import revert_preview
from operations.specs import RenameTable, TableRef
from tests.fixtures.factories import partition_locations, table_exists, table_row
from tests.fixtures.operations import (
    execute,
    location_of,
    metastore_dump,
    path_of,
    row_changes,
    sequences_behind,
    warehouse_tree,
)

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
    """Hive 2.3 rewrites each partition inside the table directory and deletes its statistics rows (the two outside
    keep theirs); 3.1 deletes and re-inserts them partition by partition; 4.0 rewrites partitions only. The estimate
    follows CATALOG_HIVE_COST."""
    # given: sales.orders has 12 partitions (10 under its directory) and 48 partition statistics rows
    settings.CATALOG_HIVE_COST = {"base_seconds": 1.0, "partition_ms": 1000.0, "statistic_ms": 100.0}
    version = metastore.schema.version.major

    # when
    hive = alter_preview_statement(metastore=metastore, statement="ALTER TABLE sales.orders RENAME TO orders_v2").hive

    # then
    round_trips, deleted, rewritten = {2: (10, 40, 40), 3: (24, 0, 96), 4: (12, 0, 0)}[version]
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
    assert (preview.moves, preview.partitions_touched) == ((), 0)
    # the view marketing.campaign_performance reads it: a broken view makes the rename high risk
    assert (preview.risk, [c.name for c in preview.criteria]) == ("high", ["views_broken"])
    assert execution.actual_counts == execution.expected_counts
    assert table_row(metastore, "ops", "clicks").sd.location == clicks.sd.location
    assert partition_locations(metastore, clicks.id) == locations
    assert warehouse_tree(warehouse) == tree


def test_rename_of_a_view_changes_its_name_only(metastore: Metastore) -> None:
    """Rule 7.6: a view has no location; only TBLS changes. Written ALTER VIEW, as Hive asks for a view."""
    # given
    view = table_row(metastore, "marketing", "campaign_performance")

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER VIEW marketing.campaign_performance RENAME TO sales.performance"
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {"TBLS": (0, 1, 0)}
    assert (preview.moves, preview.risk) == ((), "low")
    assert execution.actual_counts == execution.expected_counts
    renamed = table_row(metastore, "sales", "performance")
    assert (renamed.id, renamed.type, renamed.view_original_text) == (view.id, "VIRTUAL_VIEW", view.view_original_text)


def test_alter_table_on_a_view_and_alter_view_on_a_table_are_refused_with_hives_messages(metastore: Metastore) -> None:
    """DDLSemanticAnalyzer.validateAlterTableType: ALTER TABLE … RENAME on a view is refused (ErrorMsg 10131), and
    ALTER VIEW on a base table too (10132); nothing would run."""
    # when
    table_form = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE marketing.campaign_performance RENAME TO marketing.cp"
    )
    view_form = alter_preview_statement(metastore=metastore, statement="ALTER VIEW sales.customers RENAME TO sales.c2")
    properties = alter_preview_statement(
        metastore=metastore, statement="ALTER VIEW marketing.campaign_performance SET TBLPROPERTIES ('team'='growth')"
    )

    # then
    assert [(b.code, b.message) for b in table_form.blockers] == [
        ("alter_table_on_view", "To alter a view you need to use the ALTER VIEW command.")
    ]
    assert [(b.code, b.message) for b in view_form.blockers] == [
        ("alter_view_on_table", "To alter a base table you need to use the ALTER TABLE command.")
    ]
    assert properties.blockers == () and properties.statement.startswith("ALTER VIEW `marketing`")


# Where the data goes, version by version (rules 7–8) -----------------------------------------------------------------


def set_location(metastore: Metastore, sd_id: int, location: str) -> None:
    with allow_metastore_writes():
        StorageDescriptor.objects.using(metastore.alias).filter(id=sd_id).update(location=location)


def set_database(metastore: Metastore, name: str, **fields: str) -> None:
    with allow_metastore_writes():
        Database.objects.using(metastore.alias).filter(name=name).update(**fields)


def make_replication_source(metastore: Metastore, database: str) -> None:
    with allow_metastore_writes():
        DatabaseParam.objects.using(metastore.alias).create(
            database_id=Database.objects.on(metastore).get(name=database).id, key="repl.source.for", value="1"
        )


def blockers_of(metastore: Metastore, statement: str) -> list[str]:
    return [b.code for b in alter_preview_statement(metastore=metastore, statement=statement).blockers]


def test_a_replication_source_refuses_only_the_renames_that_move_data(metastore: Metastore, warehouse: Path) -> None:
    """Rule 8.7: isRenameAllowed runs after the data move, so a replication source refuses a cross-database rename of
    a managed table in its default directory, not one of an external table or of a table in a specified location."""
    # given
    make_replication_source(metastore, "sales")
    customers = table_row(metastore, "sales", "customers")
    set_location(metastore, customers.sd_id, location_of(warehouse / "lake" / "customers"))

    # when
    moving = blockers_of(metastore, "ALTER TABLE sales.orders RENAME TO ops.orders")
    specified = blockers_of(metastore, "ALTER TABLE sales.customers RENAME TO ops.customers")
    external = blockers_of(metastore, "ALTER TABLE marketing.clicks RENAME TO sales.clicks")

    # then
    assert (moving, specified, external) == (["rename_not_allowed"], [], [])


def test_hive_4_finds_the_default_directory_under_the_warehouse(metastore: Metastore, warehouse: Path) -> None:
    """Rule 8.3 (4.x): a managed table is in its default directory when it is ``<warehouse>/<db>.db/<name>``, wherever
    the database's own location points; rule 8.8 (3.1): it is judged against the database's location."""
    # given: sales' location moved elsewhere; its tables stay under <warehouse>/sales.db
    set_database(metastore, "sales", location_uri=location_of(warehouse / "lake" / "sales"))

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.customers RENAME TO ops.customers"
    )

    # then
    customers = table_row(metastore, "sales", "customers")
    if metastore.schema.version.major >= 4:
        assert preview.after.location == location_of(warehouse / "ops.db" / "customers")
        assert [m.source for m in preview.moves] == [customers.sd.location]
    else:
        assert (preview.after.location, preview.moves) == (customers.sd.location, ())


def test_without_a_warehouse_root_hive_4_is_judged_by_the_database_location_and_says_so(
    metastore: Metastore, warehouse: Path
) -> None:
    """With no METASTORE_WAREHOUSE_<NAME> the console cannot know Hive 4's warehouse: it assumes the database's location
    and warns (on 3.1 the database's location is the rule itself)."""
    # given
    unconfigured = dataclasses.replace(metastore, config=dataclasses.replace(metastore.config, warehouse=""))
    spec = RenameTable(target=TableRef("sales", "customers"), new=TableRef("ops", "customers"))

    # when
    preview = alter_preview(metastore=unconfigured, spec=spec)

    # then
    assert preview.after.location == location_of(warehouse / "ops.db" / "customers")
    warned = [w.code for w in preview.warnings if w.code == "warehouse_unknown"]
    assert warned == (["warehouse_unknown"] if metastore.schema.version.major >= 4 else [])


def test_a_table_translated_to_external_moves_to_the_new_external_directory_on_hive_4(
    metastore: Metastore, warehouse: Path
) -> None:
    """Rules 7.2/8.6 (4.x): a managed table that strict managed mode made external moves to the new database's
    external directory (its location); Hive 3.1 keeps any external table where it is (rule 8.2)."""
    # given: sales.customers translated, its data in the external tree
    customers = table_row(metastore, "sales", "customers")
    external = warehouse / "external" / "sales.db" / "customers"
    external.parent.mkdir(parents=True)
    shutil.move(path_of(customers.sd.location), external)
    set_location(metastore, customers.sd_id, location_of(external))
    with allow_metastore_writes():
        Table.objects.using(metastore.alias).filter(id=customers.id).update(type="EXTERNAL_TABLE")
        for key in ("EXTERNAL", "TRANSLATED_TO_EXTERNAL"):
            TableParam.objects.using(metastore.alias).create(table_id=customers.id, key=key, value="TRUE")

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.customers RENAME TO ops.customers"
    )

    # then
    if metastore.schema.version.major >= 4:
        ops = Database.objects.on(metastore).get(name="ops")
        assert preview.after.location == f"{ops.location_uri}/customers"
        assert [(m.source, m.destination) for m in preview.moves] == [(location_of(external), preview.after.location)]
        execute(preview)
        assert (external.exists(), (warehouse / "ops.db" / "customers").is_dir()) == (False, True)
    else:
        assert (preview.after.location, preview.moves) == (location_of(external), ())


def test_a_translated_table_in_its_default_directory_cannot_move_onto_itself(metastore: Metastore) -> None:
    """Rule 8.6 (4.x): in its default managed directory, the destination is the location the caller gave (the old
    one), and Hive's "already exists" check refuses it."""
    # given
    customers = table_row(metastore, "sales", "customers")
    with allow_metastore_writes():
        for key in ("EXTERNAL", "TRANSLATED_TO_EXTERNAL"):
            TableParam.objects.using(metastore.alias).create(table_id=customers.id, key=key, value="TRUE")

    # when
    blockers = blockers_of(metastore, "ALTER TABLE sales.customers RENAME TO ops.customers")

    # then
    assert blockers == (["destination_exists"] if metastore.schema.version.major >= 4 else [])


# Reverting a rename touches only what the rename changed --------------------------------------------------------------


def rename_and_revert(metastore: Metastore, statement: str) -> tuple[Execution, Execution]:
    forward = execute(alter_preview_statement(metastore=metastore, statement=statement))
    return forward, execute(revert_preview(execution=forward))


def test_the_revert_leaves_partitions_the_rename_left_alone(metastore: Metastore, warehouse: Path) -> None:
    """A partition already under the new table root (not the old one) is not moved by the rename: the before-image
    names it and the revert leaves it there."""
    # given
    orders = table_row(metastore, "sales", "orders")
    straggler = Partition.objects.using(metastore.alias).get(table_id=orders.id, name="dt=2024-01-03/hour=9")
    set_location(metastore, straggler.sd_id, location_of(warehouse / "sales.db" / "orders_v2" / "dt=2024-01-03" / "x"))
    rows, tree = metastore_dump(metastore.alias, events=False), warehouse_tree(warehouse)

    # when
    forward, revert = rename_and_revert(metastore, "ALTER TABLE sales.orders RENAME TO sales.orders_v2")

    # then
    assert forward.before_image["keep_sd_ids"] == [straggler.sd_id]
    assert forward.expected_counts["SDS"]["update"] == revert.expected_counts["SDS"]["update"] == 10
    assert (metastore_dump(metastore.alias, events=False), warehouse_tree(warehouse)) == (rows, tree)


def test_the_revert_puts_the_table_back_at_its_recorded_location(metastore: Metastore, warehouse: Path) -> None:
    """The location as it was stored (here with a trailing slash), not one rebuilt from the rules."""
    # given
    customers = table_row(metastore, "sales", "customers")
    set_location(metastore, customers.sd_id, customers.sd.location + "/")
    rows, tree = metastore_dump(metastore.alias, events=False), warehouse_tree(warehouse)

    # when
    rename_and_revert(metastore, "ALTER TABLE sales.customers RENAME TO ops.customers")

    # then
    assert (metastore_dump(metastore.alias, events=False), warehouse_tree(warehouse)) == (rows, tree)


def test_rows_already_carrying_the_new_name_block_the_rename(metastore: Metastore) -> None:
    """Statistics (before 4.0) or ACID bookkeeping left under the new name by an earlier table would be taken for the
    renamed table's by Hive, and a revert could not tell them apart: refused."""
    # given: one statistics row (names exist before 4.0) and one completed-transaction row labelled with the new names
    orders = table_row(metastore, "sales", "orders")
    statistics = PartitionColumnStatistics.objects.using(metastore.alias)
    with allow_metastore_writes():
        if names_in_statistics(metastore):
            first = statistics.filter(partition__table_id=orders.id).values_list("id", flat=True).first()
            statistics.filter(id=first).update(table_name="orders_v2")
        CompletedTransactionComponent.objects.using(metastore.alias).filter(database="ops").update(table="job_runs")

    # when
    stats = alter_preview_statement(metastore=metastore, statement="ALTER TABLE sales.orders RENAME TO sales.orders_v2")
    acid = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE ops.job_runs_acid RENAME TO ops.job_runs"
    )

    # then
    assert [b.message for b in stats.blockers] == (
        [
            "1 row(s) of PART_COL_STATS already carry the name sales.orders_v2 (left by an earlier table of that "
            "name): Hive would take them for the renamed table's. Remove them first."
        ]
        if names_in_statistics(metastore)
        else []
    )
    assert [(b.code, b.message.split(" already")[0]) for b in acid.blockers] == [
        ("names_in_use", "1 row(s) of COMPLETED_TXN_COMPONENTS")
    ]
