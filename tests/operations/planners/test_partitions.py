"""
Partition changes on every metastore: ``RENAME TO PARTITION`` (rule 17) and ``DROP PARTITION`` by exact spec,
by ranges and by several specs; ranges on the integer key ``hour`` compare as numbers.

A renamed managed partition moves to its new directory and keeps its statistics. Dropped partitions lose every
dependent row; their managed data moves to the console's trash directory, never deleted. Partition names are
escaped exactly as Hive escapes them (``FileUtils.escapePathName``), and a renamed partition's directory keeps the
scheme and authority of its own location (``constructRenamedPath``). On a transactional table the partition's ACID
bookkeeping follows Hive: a rename re-labels it (``onRename``), a drop deletes what ``cleanupRecords`` deletes.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from dataclasses import asdict, replace
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.db import connections
from django.test.utils import CaptureQueriesContext

from catalog_admin.db import allow_metastore_writes
from catalog_admin.locations import FolderSizes, TreeSize, filesystem_for, local_entries
from catalog_admin.models import (
    CompactionMetric,
    CompactionQueueEntry,
    CompletedCompaction,
    CompletedTransactionComponent,
    HiveLock,
    Partition,
    PartitionColumnStatistics,
    PartitionKeyValue,
    PartitionParam,
    SerDe,
    StorageDescriptor,
    Table,
    TableParam,
    TransactionComponent,
    WriteSetEntry,
)
from catalog_admin.seeding.content import ABORTED_PARTITION, OPEN_PARTITION
from catalog_admin.selectors.metastores import Metastore
from catalog_admin.selectors.partitions import (
    PartitionFilter,
    get_partition_detail,
    list_partitions,
    table_partition_keys,
)
from operations.planners.partitions import TRASH_DIR, trash
from operations.preview import Preview
from operations.services.alter import alter_preview_statement
from operations.sql import MetastoreSql
from tests.fixtures.factories import table_row
from tests.fixtures.operations import execute, location_of, path_of, row_changes, warehouse_tree

HOURLY = [f"dt={day}/hour={hour}" for day in ("2024-01-01", "2024-01-02", "2024-01-03") for hour in (0, 3, 6, 9)]
RELOCATED = {"dt=2024-01-01/hour=0", "dt=2024-01-01/hour=3"}
MISSING = {"dt=2024-01-03/hour=9"}  # seeded without a directory


def partitions(metastore: Metastore, table_id: int) -> dict[str, dict]:
    rows = Partition.objects.using(metastore.alias).filter(table_id=table_id)
    return {row["name"]: row for row in rows.values("id", "name", "sd_id", "sd__location", "sd__serde_id")}


def rename(metastore: Metastore, table: str, new_spec: str, old_spec: str = "(dt='2024-01-02', hour=3)") -> Preview:
    """The preview of ``ALTER TABLE <table> PARTITION <old_spec> RENAME TO PARTITION <new_spec>``."""
    return alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE {table} PARTITION {old_spec} RENAME TO PARTITION {new_spec}"
    )


def findings(preview: Preview) -> list[tuple[str, str, str]]:
    return [(f.code, f.rule, f.message) for f in preview.blockers]


def updated(preview: Preview, metastore_table: str) -> list[tuple]:
    """The parameters of the preview's steps that update ``metastore_table``."""
    return [step.params for step in preview.steps if step.metastore_table == metastore_table]


def set_table_params(metastore: Metastore, table: Table, **params: str | None) -> None:
    """Set (or, for None, delete) table parameters."""
    rows = TableParam.objects.using(metastore.alias)
    with allow_metastore_writes():
        for key, value in params.items():
            rows.filter(table_id=table.id, key=key).delete()
            if value is not None:
                rows.create(table_id=table.id, key=key, value=value)


def set_partition_location(metastore: Metastore, sd_id: int, location: str) -> None:
    with allow_metastore_writes():
        StorageDescriptor.objects.using(metastore.alias).filter(id=sd_id).update(location=location)


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


def test_renaming_a_partition_drops_only_statistics_whose_column_type_no_longer_matches(
    metastore: Metastore, warehouse: Path
) -> None:
    """Rule 17.5: a statistics row recorded for a type the partition's column no longer has is deleted (Hive 3.1 and
    4.0 do not re-insert it); the others follow the partition. Hive's own cost: 2.3 deletes all 4 rows, later versions
    only the stale one."""
    # given
    orders = table_row(metastore, "sales", "orders")
    part = partitions(metastore, orders.id)["dt=2024-01-02/hour=3"]
    rows = PartitionColumnStatistics.objects.on(metastore).filter(partition_id=part["id"])
    stale = rows.order_by("column_name").first()
    with allow_metastore_writes():
        rows.filter(column_name=stale.column_name).update(column_type="binary")
    version = metastore.schema.version

    # when
    preview = rename(metastore, "sales.orders", "(dt='2024-02-01', hour=4)")
    execute(preview)

    # then
    assert row_changes(preview)["PART_COL_STATS"][2] == 1
    assert preview.statistics_dropped == 1
    assert sorted(rows.values_list("column_name", flat=True)) == sorted(
        c for c in ("id", "customer_id", "amount", "status") if c != stale.column_name
    )
    assert preview.hive.statistics_deleted == (4 if (version.major, version.minor) == (2, 3) else 1)


def test_a_configured_partition_name_whitelist_refuses_other_values(metastore: Metastore) -> None:
    """Rule 17.1: with the metastore's whitelist pattern set, a new value must match it in full (Hive's message names
    the value, the pattern and the setting of that version); without one, any value goes."""
    # given
    strict = replace(metastore, config=replace(metastore.config, partition_name_whitelist="[0-9-]*"))
    statement = "ALTER TABLE sales.orders PARTITION (dt='2024-01-02', hour=3) RENAME TO PARTITION (dt='{}', hour=4)"
    setting = "metastore.partition.name.whitelist.pattern"
    setting = setting if metastore.schema.capabilities.catalogs else f"hive.{setting}"

    # when
    refused = alter_preview_statement(metastore=strict, statement=statement.format("2024-02-01 x"))
    matching = alter_preview_statement(metastore=strict, statement=statement.format("2024-02-01"))
    unset = alter_preview_statement(metastore=metastore, statement=statement.format("2024-02-01 x"))

    # then
    assert findings(refused) == [
        (
            "partition_name_whitelist",
            "17.1",
            "Partition value '2024-02-01 x' contains a character not matched by whitelist pattern '[0-9-]*'.  "
            f"(configure with {setting})",
        )
    ]
    assert matching.blockers == unset.blockers == ()


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


ESCAPED_VALUE = "a'b*[c] café"  # Hive escapes ', * and [ ]; it keeps the space and the é
ESCAPED_NAME = "dt=a%27b%2A%5Bc%5D café"


def test_renaming_a_partition_to_values_hive_escapes_names_it_as_hive_does(metastore: Metastore) -> None:
    """Rule 17.4: the new PART_NAME and directory escape ', * and [ ] and keep the space and the é."""
    # given
    orders = table_row(metastore, "sales", "orders")

    # when
    preview = rename(metastore, "sales.orders", "(dt='a\\'b*[c] café', hour=3)")

    # then
    new_name = f"{ESCAPED_NAME}/hour=3"
    assert preview.blockers == ()
    assert [params[0] for params in updated(preview, "PARTITIONS")] == [new_name]
    assert [params[0] for params in updated(preview, "PARTITION_KEY_VALS")] == [ESCAPED_VALUE, "3"]
    assert [m.destination for m in preview.moves] == [f"{orders.sd.location}/{new_name}"]


def test_a_partition_with_an_escaped_name_is_found_by_its_values(metastore: Metastore) -> None:
    """Rename, SET LOCATION and the browser's key filter find ``dt=a%27b%2A%5Bc%5D café`` by its plain values."""
    # given: Hive's own name and key value for dt='a\'b*[c] café'
    orders = table_row(metastore, "sales", "orders")
    before = partitions(metastore, orders.id)["dt=2024-01-02/hour=3"]
    with allow_metastore_writes():
        Partition.objects.using(metastore.alias).filter(id=before["id"]).update(name=f"{ESCAPED_NAME}/hour=3")
        PartitionKeyValue.objects.using(metastore.alias).filter(partition_id=before["id"], position=0).update(
            value=ESCAPED_VALUE
        )
    spec = "(dt='a\\'b*[c] café', hour=3)"
    keys = table_partition_keys(metastore, orders)

    # when
    renamed = rename(metastore, "sales.orders", "(dt='2024-02-02', hour=3)", old_spec=spec)
    relocated = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.orders PARTITION {spec} SET LOCATION 'file:/elsewhere'"
    )
    listed = list_partitions(metastore, orders, keys, PartitionFilter(values=(("dt", ESCAPED_VALUE),)))
    detail = get_partition_detail(metastore, orders, f"{ESCAPED_NAME}/hour=3")

    # then
    assert (renamed.blockers, relocated.blockers) == ((), ())
    assert [m.source for m in renamed.moves] == [before["sd__location"]]
    assert [row.name for row in listed.items] == [f"{ESCAPED_NAME}/hour=3"]
    assert listed.items[0].values == (ESCAPED_VALUE, "3")
    assert detail.values == {"dt": ESCAPED_VALUE, "hour": "3"}


def test_renaming_a_missing_partition_is_refused_with_hives_message(metastore: Metastore) -> None:
    """Rule 17.2: 'Unable to rename partition because old partition does not exist'."""
    # given / when
    preview = rename(metastore, "sales.orders", "(dt='2024-02-02', hour=4)", old_spec="(dt='2024-01-01', hour=4)")

    # then
    assert findings(preview) == [
        (
            "unknown_partition",
            "17.2",
            "Unable to rename partition because old partition does not exist: `sales`.`orders` dt=2024-01-01/hour=4",
        )
    ]


def test_an_empty_value_moves_no_data_and_names_the_default_partition(metastore: Metastore) -> None:
    """
    Rule 17.4: a moving partition's directory needs every value (makePartPath: 'Partition spec is incorrect.');
    an external partition, which stays, is renamed to __HIVE_DEFAULT_PARTITION__ (makePartName).
    """
    # given / when
    managed = rename(metastore, "sales.orders", "(dt='', hour=3)")
    external = rename(metastore, "marketing.clicks", "(dt='', hour=3)")

    # then
    assert findings(managed) == [("partition_spec", "17.4", "Partition spec is incorrect. {dt=, hour=3}")]
    assert external.blockers == ()
    assert [params[0] for params in updated(external, "PARTITIONS")] == ["dt=__HIVE_DEFAULT_PARTITION__/hour=3"]
    assert [params[0] for params in updated(external, "PARTITION_KEY_VALS")] == ["", "3"]


@pytest.mark.parametrize(
    ("table", "params", "moves_before_4", "moves_on_4"),
    [
        pytest.param(
            "orders", {"EXTERNAL": "TRUE", "TRANSLATED_TO_EXTERNAL": "TRUE"}, True, True, id="managed-translated"
        ),
        pytest.param("orders", {"EXTERNAL": "true"}, True, False, id="managed-flagged-external"),
        pytest.param("clicks", {"TRANSLATED_TO_EXTERNAL": "TRUE"}, False, True, id="external-translated"),
        pytest.param("clicks", {"EXTERNAL": None}, False, True, id="external-type-without-parameter"),
        pytest.param("clicks", {}, False, False, id="external"),
    ],
)
def test_whether_a_renamed_partition_moves_follows_each_versions_rule(
    metastore: Metastore, table: str, params: dict[str, str | None], moves_before_4: bool, moves_on_4: bool
) -> None:
    """
    Rule 17.3: 4.x moves the data unless the EXTERNAL parameter is TRUE and TRANSLATED_TO_EXTERNAL is not (the table
    type does not count); 2.3 and 3.1 move it unless the table type is EXTERNAL_TABLE.
    """
    # given
    database = "sales" if table == "orders" else "marketing"
    row = table_row(metastore, database, table)
    set_table_params(metastore, row, **params)

    # when
    preview = rename(metastore, f"{database}.{table}", "(dt='2024-02-02', hour=3)")

    # then
    moves = moves_on_4 if metastore.schema.version.major >= 4 else moves_before_4
    destination = f"{row.sd.location}/dt=2024-02-02/hour=3"
    assert preview.blockers == ()
    assert [m.destination for m in preview.moves] == ([destination] if moves else [])
    assert [params[0] for params in updated(preview, "SDS")] == ([destination] if moves else [])


@pytest.mark.parametrize(
    "location",
    ["s3a://bucket/orders/dt=2024-01-02/hour=3", "hdfs://nn2:8020/archive/orders/p"],
    ids=["s3a", "hdfs-with-port"],
)
def test_a_renamed_partition_keeps_its_own_filesystem_which_the_console_cannot_reach(
    metastore: Metastore, location: str
) -> None:
    """
    Rule 17.4: the target is the table's path under the scheme and authority of the partition's own location
    (constructRenamedPath), so there is no cross-filesystem move; the console has no client there and refuses.
    """
    # given: the table stays on file:
    orders = table_row(metastore, "sales", "orders")
    sd_id = partitions(metastore, orders.id)["dt=2024-01-02/hour=3"]["sd_id"]
    set_partition_location(metastore, sd_id, location)

    # when
    preview = rename(metastore, "sales.orders", "(dt='2024-02-02', hour=3)")

    # then
    parts = urlsplit(location)
    destination = f"{parts.scheme}://{parts.netloc}{urlsplit(orders.sd.location).path}/dt=2024-02-02/hour=3"
    assert [(code, rule) for code, rule, _message in findings(preview)] == [("filesystem_unreachable", "17.4")]
    assert location in preview.blockers[0].message
    assert updated(preview, "SDS") == [(destination, sd_id)]
    assert preview.moves == ()


def test_renaming_onto_an_existing_directory_names_the_table_as_hive_does(
    metastore: Metastore, warehouse: Path
) -> None:
    """Rule 17.4: 'New location for this table <db>.<tbl> already exists : <target>'."""
    # given
    orders = table_row(metastore, "sales", "orders")
    target = f"{orders.sd.location}/dt=2024-02-02/hour=3"
    path_of(target).mkdir(parents=True)

    # when
    preview = rename(metastore, "sales.orders", "(dt='2024-02-02', hour=3)")

    # then
    assert findings(preview) == [
        ("destination_exists", "17.4", f"New location for this table sales.orders already exists : {target}")
    ]


def test_an_existing_target_blocks_a_partition_without_a_directory_only_on_hive_2_3(
    metastore: Metastore, warehouse: Path
) -> None:
    """
    Rule 17.4 with the source missing: 3.1 and 4.x check the target only before a move, so only the metadata changes;
    Hive 2.3 checks it first and refuses (the Spark witness shows it).
    """
    # given: dt=2024-01-03/hour=9 has no directory; its target exists
    orders = table_row(metastore, "sales", "orders")
    target = f"{orders.sd.location}/dt=2024-02-03/hour=9"
    path_of(target).mkdir(parents=True)

    # when
    preview = rename(metastore, "sales.orders", "(dt='2024-02-03', hour=9)", old_spec="(dt='2024-01-03', hour=9)")

    # then
    refused = metastore.schema.version.major < 3
    assert findings(preview) == (
        [("destination_exists", "17.4", f"New location for this table sales.orders already exists : {target}")]
        if refused
        else []
    )
    assert [w.code for w in preview.warnings] == ["source_missing"]
    assert preview.moves == ()


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
        warehouse / "sales.db" / TRASH_DIR / "orders" / preview.state_fingerprint[:12] / "dt=2024-01-02/hour=3"
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
    assert len(execution.read_before_image()["deleted_rows"]["PARTITIONS"]) == 1


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
    located = {before[p]["sd__location"] for p in dropped - MISSING}
    assert {at for at in located for m in preview.moves if at == m.source or at.startswith(m.source + "/")} == located
    assert sum(m.partitions_moving for m in preview.moves) == len(located)
    assert [w.code for w in preview.warnings] == (["directories_missing"] if dropped & MISSING else [])
    assert execution.actual_counts == execution.expected_counts
    assert set(partitions(metastore, orders.id)) == set(HOURLY) - dropped
    assert statistics.count() == 4 * (12 - n)
    for name in dropped - MISSING:
        assert not path_of(before[name]["sd__location"]).exists()
    for move in preview.moves:
        assert path_of(move.destination).is_dir()
    assert preview.affected is not None
    for partition in preview.affected.listed:  # each one's data where the preview said, as if moved alone
        trashed = partition.fate.removeprefix("to the trash: ")
        assert trashed.endswith(f"/{partition.name}") == (partition.name not in MISSING)
        assert path_of(trashed).is_dir() == (partition.name not in MISSING)


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


def sizes_one_by_one(
    trees: Iterable[str], folders: Iterable[str]
) -> tuple[dict[str, TreeSize | None], dict[str, FolderSizes | None]]:
    """The disk facts as the planner would read them without the one descent: ``exists`` then ``tree_size`` of each
    location, and each folder's entries listed, each directory's ``tree_size``."""
    found = {}
    for location in trees:
        filesystem = filesystem_for(location)
        if filesystem.exists(location):
            found[location] = filesystem.tree_size(location)
    listed: dict[str, FolderSizes | None] = {}
    for folder in folders:
        entries = local_entries(folder)
        listed[folder] = (
            None
            if entries is None
            else {
                name: filesystem_for(folder).tree_size(f"{folder}/{name}") if is_directory else None
                for name, is_directory in entries
            }
        )
    return found, listed


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
def test_a_drop_previewed_from_one_descent_is_the_plan_read_location_by_location(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same plan, fingerprint, stored summary and listing (files and bytes of every directory, nested ones and
    the partitions outside the table's directory included, the missing one left out) whether the disk facts come from
    one descent or from each location's own walk."""
    # given
    orders = table_row(metastore, "sales", "orders")
    nested = path_of(partitions(metastore, orders.id)["dt=2024-01-02/hour=6"]["sd__location"]) / "sub" / "deeper"
    nested.mkdir(parents=True)
    (nested / "part-1").write_bytes(b"x" * 321)
    (nested.parent / ".hidden").write_bytes(b"y" * 7)
    statement = "ALTER TABLE sales.orders DROP PARTITION (hour < 10)"

    # when
    batched = alter_preview_statement(metastore=metastore, statement=statement)
    monkeypatch.setattr(trash, "local_sizes", sizes_one_by_one)
    one_by_one = alter_preview_statement(metastore=metastore, statement=statement)

    # then
    assert batched.fingerprint == one_by_one.fingerprint
    assert batched.as_dict() == one_by_one.as_dict()
    assert batched.as_dict()["moves"] == [asdict(move) for move in batched.moves]  # the stored summary's spelling
    assert batched == one_by_one
    # dt=2024-01-01 holds two partitions placed elsewhere: its two others move alone; the other days move whole
    assert sorted(m.partitions_moving for m in batched.moves) == [1, 1, 1, 1, 3, 4]  # dt=2024-01-03/hour=9 missing
    (grown,) = [m for m in batched.moves if path_of(m.source) == nested.parent.parent.parent]
    assert grown.files is not None and grown.files >= 2 and grown.bytes is not None and grown.bytes >= 321 + 7


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
def test_a_drops_disk_facts_open_each_directory_once(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Previewing a drop opens every directory on the way to the dropped partitions once (a descent shared by all
    of them), not a walk from ``/`` per partition."""
    # given
    orders = table_row(metastore, "sales", "orders")
    locations = [path_of(p["sd__location"]) for p in partitions(metastore, orders.id).values()]
    on_the_way = {parent for location in locations for parent in (location, *location.parents)}  # each tried once
    opened: list[str] = []
    real_open = os.open

    def counting_open(path: str, flags: int, *args: object, **kwargs: object) -> int:
        if flags & os.O_DIRECTORY:
            opened.append(path)
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", counting_open)

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders DROP PARTITION (hour < 10)"
    )

    # then
    monkeypatch.undo()
    assert sum(m.partitions_moving for m in preview.moves) == len(locations) - len(MISSING)
    assert len(opened) <= len(on_the_way), "|".join(opened)


# ACID bookkeeping of ops.job_runs_acid: the seed's open transaction (with its locks, a committed write and the write
# set) is on OPEN_PARTITION; the aborted transaction, the compactions and (4.x) the delta metrics on ABORTED_PARTITION.
BOOKKEEPING = (
    TransactionComponent,
    CompletedTransactionComponent,
    HiveLock,
    CompactionQueueEntry,
    CompletedCompaction,
    WriteSetEntry,
    CompactionMetric,
)
BOOKKEEPING_TABLES = {model._meta.db_table for model in BOOKKEEPING}
OPEN_ROWS = {"TXN_COMPONENTS": 1, "COMPLETED_TXN_COMPONENTS": 1, "HIVE_LOCKS": 2, "WRITE_SET": 1}
ABORTED_ROWS = {"TXN_COMPONENTS": 1, "COMPACTION_QUEUE": 1, "COMPLETED_COMPACTIONS": 2}
METRICS_ROWS = {"COMPACTION_METRICS_CACHE": 1}  # on ABORTED_PARTITION, Hive 4 only


def bookkeeping(metastore: Metastore, partition: str) -> dict[str, int]:
    """How many rows of each ACID bookkeeping table carry ``partition`` of ops.job_runs_acid (tables with none left
    out)."""
    counts = {}
    for model in BOOKKEEPING:
        if not metastore.schema.has_table(model):
            continue
        rows = model.objects.using(metastore.alias).filter(database="ops", table="job_runs_acid", partition=partition)
        if rows.exists():
            counts[model._meta.db_table] = rows.count()
    return counts


def bookkeeping_changes(preview: Preview) -> dict[str, tuple[int, int, int]]:
    """The preview's ``(inserted, updated, deleted)`` rows per ACID bookkeeping table."""
    return {table: changes for table, changes in row_changes(preview).items() if table in BOOKKEEPING_TABLES}


def on_hive_4(metastore: Metastore, rows: dict[str, int]) -> dict[str, int]:
    return rows if metastore.schema.version.major >= 4 else {}


@pytest.mark.parametrize(
    ("old_spec", "old_name", "new_spec", "new_name"),
    [
        pytest.param(
            "(dt='2024-01-02', hour=6)", OPEN_PARTITION, "(dt='2024-01-03', hour=6)", "dt=2024-01-03/hour=6", id="open"
        ),
        pytest.param(
            "(dt='2024-01-01', hour=0)",
            ABORTED_PARTITION,
            "(dt='2023-12-31', hour=0)",
            "dt=2023-12-31/hour=0",
            id="aborted-and-compacted",
        ),
    ],
)
def test_renaming_a_partition_of_a_transactional_table_relabels_its_acid_bookkeeping(
    metastore: Metastore, warehouse: Path, old_spec: str, old_name: str, new_spec: str, new_name: str
) -> None:
    """
    Hive's onRename: the partition's rows in TXN_COMPONENTS, COMPLETED_TXN_COMPONENTS, HIVE_LOCKS, COMPACTION_QUEUE,
    COMPLETED_COMPACTIONS, WRITE_SET and (4.x) COMPACTION_METRICS_CACHE take the new name, one UPDATE per table that
    has rows; the other partitions' rows stay. The preview warns of the open transactions and locks.
    """
    # given
    rows = OPEN_ROWS if old_name == OPEN_PARTITION else ABORTED_ROWS | on_hive_4(metastore, METRICS_ROWS)
    other = ABORTED_PARTITION if old_name == OPEN_PARTITION else OPEN_PARTITION
    others = bookkeeping(metastore, other)

    # when
    preview = rename(metastore, "ops.job_runs_acid", new_spec, old_spec=old_spec)
    execution = execute(preview)

    # then
    assert bookkeeping_changes(preview) == {table: (0, count, 0) for table, count in rows.items()}
    assert preview.blockers == ()
    assert [w.code for w in preview.warnings] == ["open_transactions", "locks_held"]
    assert execution.actual_counts == execution.expected_counts
    assert bookkeeping(metastore, old_name) == {}
    assert bookkeeping(metastore, new_name) == rows
    assert bookkeeping(metastore, other) == others


def test_renaming_a_partition_of_a_table_that_is_not_transactional_leaves_acid_bookkeeping_alone(
    metastore: Metastore,
) -> None:
    """Hive's AcidEventListener acts on transactional tables only: rows that carry the partition's name stay."""
    # given: a stray row that names a partition of the non-transactional sales.orders
    with allow_metastore_writes():
        WriteSetEntry.objects.using(metastore.alias).create(
            database="sales",
            table="orders",
            partition="dt=2024-01-02/hour=3",
            txn_id=1,
            commit_id=1,
            operation_type="u",
        )

    # when
    preview = rename(metastore, "sales.orders", "(dt='2024-02-02', hour=3)")

    # then
    assert preview.blockers == ()
    assert bookkeeping_changes(preview) == {}


@pytest.mark.parametrize(
    ("model", "row"),
    [
        pytest.param(WriteSetEntry, {"txn_id": 1, "commit_id": 1, "operation_type": "u"}, id="write-set"),
        pytest.param(
            HiveLock,
            {"ext_id": 990_001, "int_id": 1, "txn_id": 1, "state": "a", "type": "r", "last_heartbeat": 0, "user": "etl"}
            | {"host": "etl-host-1.example.com"},
            id="hive-locks",
        ),
    ],
)
def test_bookkeeping_left_under_the_new_partition_name_blocks_the_rename(
    metastore: Metastore, model: type, row: dict
) -> None:
    """
    Rows that already carry the new name (left by an earlier partition of that name) would be taken for the renamed
    partition's after the rename, and a revert could not tell them from the rows it re-labelled: refused.
    """
    # given
    with allow_metastore_writes():
        model.objects.using(metastore.alias).create(
            database="ops", table="job_runs_acid", partition="dt=2024-01-03/hour=6", **row
        )

    # when
    preview = rename(metastore, "ops.job_runs_acid", "(dt='2024-01-03', hour=6)", old_spec="(dt='2024-01-02', hour=6)")

    # then
    assert findings(preview) == [
        (
            "names_in_use",
            "labels",
            f"1 row(s) of {model._meta.db_table} already carry the partition name dt=2024-01-03/hour=6 of "
            "ops.job_runs_acid (left by another partition of that name): Hive would take them for the renamed "
            "partition's. Remove them first.",
        )
    ]


def test_dropping_partitions_of_a_transactional_table_deletes_their_acid_bookkeeping_as_hive_does(
    metastore: Metastore, warehouse: Path
) -> None:
    """
    Hive's cleanupRecords(PARTITION): the dropped partitions' TXN_COMPONENTS, COMPLETED_TXN_COMPONENTS,
    COMPACTION_QUEUE, COMPLETED_COMPACTIONS and (4.x) COMPACTION_METRICS_CACHE rows go; their HIVE_LOCKS and WRITE_SET
    rows stay for Hive's AcidHouseKeeperService. The preview says both, after the open transaction and lock warnings.
    """
    # given
    deleted = {"TXN_COMPONENTS": 2, "COMPLETED_TXN_COMPONENTS": 1, "COMPACTION_QUEUE": 1, "COMPLETED_COMPACTIONS": 2}
    deleted |= on_hive_4(metastore, METRICS_ROWS)
    metrics = ", 1 COMPACTION_METRICS_CACHE" if metastore.schema.version.major >= 4 else ""

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE ops.job_runs_acid DROP PARTITION (dt='2024-01-02', hour=6), PARTITION (dt='2024-01-01', "
        "hour=0)",
    )
    execution = execute(preview)

    # then
    assert bookkeeping_changes(preview) == {table: (0, 0, count) for table, count in deleted.items()}
    assert [(w.code, w.message) for w in preview.warnings][:2] == [
        ("open_transactions", "2 open transaction(s) write to ops.job_runs_acid."),
        ("locks_held", "2 lock(s) are held or waited for on ops.job_runs_acid."),
    ]
    assert [(w.code, w.rule, w.message) for w in preview.warnings][2:] == [
        (
            "acid_cleanup",
            "acid",
            "The dropped partitions' ACID bookkeeping goes, as Hive's cleanupRecords removes it: 2 TXN_COMPONENTS, "
            f"1 COMPLETED_TXN_COMPONENTS, 1 COMPACTION_QUEUE, 2 COMPLETED_COMPACTIONS{metrics} row(s).",
        ),
        (
            "acid_housekeeping",
            "acid",
            "2 HIVE_LOCKS, 1 WRITE_SET row(s) of the dropped partitions stay, as in Hive: its AcidHouseKeeperService "
            "removes them.",
        ),
    ]
    assert execution.actual_counts == execution.expected_counts
    assert bookkeeping(metastore, OPEN_PARTITION) == {"HIVE_LOCKS": 2, "WRITE_SET": 1}
    assert bookkeeping(metastore, ABORTED_PARTITION) == {}
    assert len(execution.read_before_image()["deleted_rows"]["TXN_COMPONENTS"]) == 2


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
def test_a_drops_counts_read_each_metastore_table_once_on_postgresql(
    metastore: Metastore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With chunks of 5 ids, the 12 partitions' drop still counts each metastore table in one statement (the old code
    issued one per chunk, three here), and its plan (the statements per chunk, their counts, the fingerprint) is the
    one counted chunk by chunk."""
    # given
    monkeypatch.setattr(sys.modules["operations.planners.partitions.chunks"], "CHUNK", 5)
    statement = "ALTER TABLE sales.orders DROP PARTITION (hour < 10)"

    # when
    with CaptureQueriesContext(connections[metastore.alias]) as queries:
        batched = alter_preview_statement(metastore=metastore, statement=statement)
    monkeypatch.setattr(MetastoreSql, "counts_per_chunk", MetastoreSql.counts_chunk_by_chunk)
    chunk_by_chunk = alter_preview_statement(metastore=metastore, statement=statement)

    # then
    assert batched.fingerprint == chunk_by_chunk.fingerprint
    assert batched.as_dict() == chunk_by_chunk.as_dict()
    assert batched.steps == chunk_by_chunk.steps
    partition_deletes = [s for s in batched.steps if s.metastore_table == "PARTITIONS"]
    assert [(len(s.params), s.expected_rows) for s in partition_deletes] == [(5, 5), (5, 5), (2, 2)]
    for table in ("PARTITIONS", "PARTITION_KEY_VALS", "PARTITION_PARAMS", "PART_COL_STATS", "SERDE_PARAMS"):
        counted = [
            q["sql"] for q in queries.captured_queries if re.search(rf'COUNT\(\*\) FROM "{table}" WHERE ', q["sql"])
        ]
        assert len(counted) == 1, (table, counted)
