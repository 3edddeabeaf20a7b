"""
Location changes on every metastore, metadata only: ``SET LOCATION`` of a table or a partition, and the
console's rewrite of partition locations by prefix. No directory moves (rule 10.5).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import urlsplit

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Database, DatabaseParam, Partition, PartitionParam, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.revert import revert_preview
from tests.fixtures.factories import partition_locations, table_row
from tests.fixtures.operations import execute, location_of, row_changes, warehouse_tree


def test_set_location_of_a_table_repoints_the_table_only(metastore: Metastore, warehouse: Path) -> None:
    """One SDS row; the partitions keep their locations and no file moves."""
    # given
    orders = table_row(metastore, "sales", "orders")
    partitions = partition_locations(metastore, orders.id)
    tree = warehouse_tree(warehouse)
    target = location_of(warehouse / "relocated" / "orders")

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.orders SET LOCATION '{target}'"
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {"SDS": (0, 1, 0)}
    assert (preview.risk, preview.moves, preview.partitions_touched) == ("medium", (), 0)
    assert [c.name for c in preview.criteria] == ["location_missing"]
    assert [w.code for w in preview.warnings] == ["metadata_only", "partitions_keep_locations", "location_missing"]
    assert preview.diff == [("location", orders.sd.location, target)]
    assert execution.actual_counts == execution.expected_counts
    assert table_row(metastore, "sales", "orders").sd.location == target
    assert partition_locations(metastore, orders.id) == partitions
    assert warehouse_tree(warehouse) == tree


def test_set_location_of_a_partition_repoints_that_partition(metastore: Metastore, warehouse: Path) -> None:
    """PARTITION (…) SET LOCATION changes that partition's SDS row and nothing else: the partition has numFiles and
    totalSize, so Hive leaves its statistics and flags as they were (rule 13.1, as Hive 2.3's Driver does); Hive
    saves that one partition."""
    # given
    orders = table_row(metastore, "sales", "orders")
    partitions = partition_locations(metastore, orders.id)
    params = PartitionParam.objects.using(metastore.alias).filter(partition__table=orders.id)
    before = sorted(params.values_list("partition_id", "key", "value"))
    free = warehouse / "sales.db" / "orders" / "dt=2024-01-01" / "hour=6-new"
    free.mkdir()  # exists (no warning), and no other partition uses it (containment)
    target = location_of(free)

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION (dt='2024-01-01', hour=6) SET LOCATION '{target}'",
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {"SDS": (0, 1, 0)}
    assert (preview.risk, preview.partitions_touched, preview.hive.partition_round_trips) == ("medium", 1, 1)
    assert [w.code for w in preview.warnings] == ["metadata_only"]
    assert preview.inverse["location"] == partitions["dt=2024-01-01/hour=6"]
    assert execution.actual_counts == execution.expected_counts
    assert partition_locations(metastore, orders.id) == {**partitions, "dt=2024-01-01/hour=6": target}
    assert table_row(metastore, "sales", "orders").sd.location == orders.sd.location
    assert sorted(params.values_list("partition_id", "key", "value")) == before


def test_set_location_of_a_partition_without_quick_statistics_marks_it_inaccurate(
    metastore: Metastore, warehouse: Path
) -> None:
    """Rule 13.3: a partition without numFiles/totalSize is one Hive recounts (and whose COLUMN_STATS_ACCURATE it
    removes): the console removes the flag and says it leaves the count to ANALYZE."""
    # given
    orders = table_row(metastore, "sales", "orders")
    part = Partition.objects.using(metastore.alias).get(table_id=orders.id, name="dt=2024-01-01/hour=6")
    flags = PartitionParam.objects.using(metastore.alias).filter(partition_id=part.id, key="COLUMN_STATS_ACCURATE")
    with allow_metastore_writes():
        PartitionParam.objects.using(metastore.alias).filter(partition_id=part.id, key="numFiles").delete()
    assert flags.exists()

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE sales.orders PARTITION (dt='2024-01-01', hour=6) "
        f"SET LOCATION '{location_of(warehouse / 'p')}'",
    )
    execute(preview)

    # then
    assert row_changes(preview) == {"SDS": (0, 1, 0), "PARTITION_PARAMS": (0, 0, 1)}
    assert {"statistics_inaccurate", "partition_quick_stats"} <= {w.code for w in preview.warnings}
    assert not flags.exists()


def test_set_location_of_an_unknown_partition_or_a_view_is_blocked(metastore: Metastore) -> None:
    """The partition must exist with every key named; a view has no location."""
    # given / when
    unknown = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE sales.orders PARTITION (dt='2030-01-01', hour=0) SET LOCATION 'file:/x'",
    )
    partial = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders PARTITION (dt='2024-01-01') SET LOCATION 'file:/x'"
    )
    view = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE marketing.campaign_performance SET LOCATION 'file:/x'"
    )

    # then
    assert [b.code for b in unknown.blockers] == ["unknown_partition"]
    assert [b.code for b in partial.blockers] == ["partition_spec"]
    assert [b.code for b in view.blockers] == ["alter_table_on_view", "view_location"]
    assert unknown.steps == partial.steps == view.steps == ()


def test_prefix_rewrite_repoints_the_matching_partitions(metastore: Metastore, warehouse: Path) -> None:
    """The two partitions under archive/ get the new prefix in one statement; the others are untouched."""
    # given
    orders = table_row(metastore, "sales", "orders")
    partitions = partition_locations(metastore, orders.id)
    old_prefix = location_of(warehouse / "archive") + "/"
    tree = warehouse_tree(warehouse)

    # when
    preview = alter_preview_statement(
        metastore=metastore,
        statement=f"ALTER TABLE sales.orders PARTITION LOCATIONS REPLACE PREFIX '{old_prefix}' WITH 'hdfs://nn1/cold/'",
    )
    execution = execute(preview)

    # then
    assert row_changes(preview) == {"SDS": (0, 2, 0)}
    assert (preview.risk, preview.partitions_touched, preview.warnings) == ("medium", 2, ())
    assert execution.actual_counts == execution.expected_counts
    assert partition_locations(metastore, orders.id) == {
        name: location.replace(old_prefix, "hdfs://nn1/cold/", 1) if location.startswith(old_prefix) else location
        for name, location in partitions.items()
    }
    assert partition_locations(metastore, orders.id)["dt=2024-01-01/hour=0"] == (
        "hdfs://nn1/cold/sales/orders/dt=2024-01-01/hour=0"
    )
    assert warehouse_tree(warehouse) == tree


def test_prefix_rewrite_that_matches_nothing_or_changes_nothing(metastore: Metastore) -> None:
    """No match is a warning with no steps; equal prefixes and unpartitioned tables are blocked."""
    # given / when
    nothing = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE sales.orders PARTITION LOCATIONS REPLACE PREFIX 's3a://x/' WITH 's3a://y/'",
    )
    same = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE sales.orders PARTITION LOCATIONS REPLACE PREFIX 'file:' WITH 'file:'",
    )
    flat = alter_preview_statement(
        metastore=metastore,
        statement="ALTER TABLE sales.customers PARTITION LOCATIONS REPLACE PREFIX 'file:' WITH 'x:'",
    )

    # then
    assert (nothing.steps, [w.code for w in nothing.warnings], nothing.blockers) == ((), ["nothing_matches"], ())
    assert [b.code for b in same.blockers] == ["no_change"]
    assert [b.code for b in flat.blockers] == ["not_partitioned"]
    assert same.steps == flat.steps == ()


def test_set_location_of_an_unpartitioned_table_marks_its_statistics_inaccurate(
    metastore: Metastore, warehouse: Path
) -> None:
    """Rule 13.2: the table's basic statistics were counted at the old location: COLUMN_STATS_ACCURATE goes."""
    # given
    customers = table_row(metastore, "sales", "customers")
    flag = TableParam.objects.using(metastore.alias).filter(table_id=customers.id, key="COLUMN_STATS_ACCURATE")
    assert flag.exists(), "the seed marks the table's statistics accurate"

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.customers SET LOCATION '{location_of(warehouse / 'c')}'"
    )
    execute(preview)

    # then
    erasure_coded = int(metastore.schema.capabilities.quick_stats_count_erasure_coded_files)  # a new key on 4.x
    assert row_changes(preview) == {"SDS": (0, 1, 0), "TABLE_PARAMS": (erasure_coded, 2, 1)}
    assert "statistics_inaccurate" in [w.code for w in preview.warnings]
    assert not flag.exists()


def test_a_relative_location_is_refused(metastore: Metastore) -> None:
    """Rule 1.5: Hive qualifies a location against its default filesystem; a relative one is refused here."""
    # when
    preview = alter_preview_statement(metastore=metastore, statement="ALTER TABLE sales.customers SET LOCATION 'x/y'")

    # then
    assert [(b.code, b.message) for b in preview.blockers] == [
        (
            "relative_location",
            "'x/y' is not an absolute location: give a URI such as hdfs://namenode/path or file:/path, or an "
            "absolute path.",
        )
    ]


def test_hive_4_keeps_managed_locations_in_a_replication_source(metastore: Metastore, warehouse: Path) -> None:
    """Rules 4.1/4.3 (4.x): in a replication source, a managed table's and its partitions' locations are fixed;
    an external table's may change. Hive 3.1 has no such rule."""
    # given
    for name in ("sales", "marketing"):
        with allow_metastore_writes():
            DatabaseParam.objects.using(metastore.alias).create(
                database_id=Database.objects.on(metastore).get(name=name).id, key="repl.source.for", value="1"
            )
    elsewhere = location_of(warehouse / "elsewhere")

    # when
    statements = [
        f"ALTER TABLE sales.customers SET LOCATION '{elsewhere}'",
        f"ALTER TABLE sales.orders PARTITION (dt='2024-01-01', hour=6) SET LOCATION '{elsewhere}'",
        f"ALTER TABLE sales.orders PARTITION LOCATIONS REPLACE PREFIX '{location_of(warehouse)}' WITH 's3a://b/'",
        f"ALTER TABLE marketing.clicks SET LOCATION '{elsewhere}'",
    ]
    blocked = [[b.code for b in alter_preview_statement(metastore=metastore, statement=s).blockers] for s in statements]

    # then
    refused = ["replication_location"] if metastore.schema.version.major >= 4 else []
    assert blocked == [refused, refused, refused, []]


def test_set_location_of_an_unpartitioned_table_recomputes_its_quick_statistics(
    metastore: Metastore, warehouse: Path
) -> None:
    """Rule 13.2: after SET LOCATION Hive recounts numFiles and totalSize from the new directory, hidden files
    (``_…``, ``.…``) left out (4.x: numFilesErasureCoded too); the preview shows the new values and execution writes
    exactly them."""
    # given
    customers = table_row(metastore, "sales", "customers")
    target = warehouse / "customers_copy"
    shutil.copytree(urlsplit(customers.sd.location).path, target)
    (target / "_SUCCESS").write_bytes(b"")
    (target / ".part.crc").write_bytes(b"12345678")
    (target / "extra").mkdir()
    (target / "extra" / "more.parquet").write_bytes(b"x" * 10)
    visible = [f for f in target.rglob("*") if f.is_file() and not f.name.startswith(("_", "."))]
    expected = {"numFiles": str(len(visible)), "totalSize": str(sum(f.stat().st_size for f in visible))}
    if metastore.schema.capabilities.quick_stats_count_erasure_coded_files:
        expected["numFilesErasureCoded"] = "0"

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.customers SET LOCATION '{location_of(target)}'"
    )
    execute(preview)

    # then
    after = dict(preview.after.params)
    stored = dict(TableParam.objects.using(metastore.alias).filter(table_id=customers.id).values_list("key", "value"))
    assert len(visible) >= 2
    assert {key: after[key] for key in expected} == expected
    assert {key: stored[key] for key in expected} == expected
    assert "COLUMN_STATS_ACCURATE" not in after


def test_reverting_set_location_puts_the_quick_statistics_back(metastore: Metastore, warehouse: Path) -> None:
    """A revert of SET LOCATION restores the location and the table's parameters exactly as they were."""
    # given
    customers = table_row(metastore, "sales", "customers")
    params = TableParam.objects.using(metastore.alias).filter(table_id=customers.id)
    before = dict(params.values_list("key", "value"))
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.customers SET LOCATION '{location_of(warehouse / 'gone')}'"
    )
    execution = execute(preview)
    assert dict(params.values_list("key", "value"))["numFiles"] == "0"

    # when
    alter_execute(preview=revert_preview(execution=execution), actor="tester", source="cli")

    # then
    assert dict(params.values_list("key", "value")) == before
    assert table_row(metastore, "sales", "customers").sd.location == customers.sd.location


def test_set_location_of_a_partitioned_table_leaves_its_quick_statistics(metastore: Metastore, warehouse: Path) -> None:
    """A partitioned table's quick statistics are its partitions' business: SET LOCATION of the table leaves them."""
    # given
    orders = table_row(metastore, "sales", "orders")
    before = dict(TableParam.objects.using(metastore.alias).filter(table_id=orders.id).values_list("key", "value"))

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.orders SET LOCATION '{location_of(warehouse / 'o')}'"
    )

    # then
    assert dict(preview.after.params) == before
    assert all(step.metastore_table == "SDS" for step in preview.steps)
