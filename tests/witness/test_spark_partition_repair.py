"""
Issue 27's proof for ``MSCK REPAIR TABLE`` and ``ALTER TABLE … ADD PARTITION``: the console writes the rows Hive 2.3's
own Driver writes for the same statement on an identical table (``spark_twins``, compared by
``tests/witness/differential.py``), and Spark's Hive client reads the partitions it added.

Directories are written by Spark (``DataFrameWriter.parquet``: data files, a ``_SUCCESS`` marker and hidden ``.crc``
files) into both copies' folders; Hive's Driver runs the statement (``DDLTask.msck`` → ``HiveMetaStoreChecker`` →
``createPartitions``; ``DDLTask.addPartitions``) on one copy, the console on the other.

Documented differences: none in the rows compared here (ids, creation times and ``transient_lastDdlTime`` are the
clock and left out by the image). Not compared, and different on purpose: ``ADD PARTITION`` without LOCATION onto a
directory that already holds files gets its quick statistics from the console, where Hive's client writes zeros marked
accurate; a partition directory holding no file is not seen by the console's MSCK (its listing is of files, as on an
object store), where Hive's listing of directories adds it; a directory whose key differs from the partition key only
in case is refused (``hive.msck.path.validation``) where Hive's checker accepts it and then names the partition
without that key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from catalog_admin.selectors.metastores import Metastore
from operations.models import Execution
from operations.services.alter import alter_execute, alter_preview_statement
from tests.fixtures.spark import TWIN_ROWS, TableCopy, Twins
from tests.witness.differential import differences, metastore_image, orphans, read_rows, tree_image

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True, databases=["default", "spark_pg"])]

NEW_ROWS = ((6, "f", 6.5), (7, "g", 7.5))
NEW_PARTITION = ("2024-02-01", 5)


def write_partition(spark: Any, copy: TableCopy, dt: str, hour: int) -> Path:
    """Spark writes a partition's directory (no metastore row), as a job writing files would."""
    target = copy.root / f"dt={dt}" / f"hour={hour}"
    frame = spark.createDataFrame(list(NEW_ROWS), "id int, name string, amount double").coalesce(1)
    frame.write.parquet(str(target))
    return target


def console(metastore: Metastore, statement: str) -> Execution:
    preview = alter_preview_statement(metastore=metastore, statement=statement)
    assert not preview.blockers, preview.blockers
    return alter_execute(preview=preview, actor="spark-witness", source=Execution.Source.CLI, reason="witness")


def both(hive_ql: Any, metastore: Metastore, twins: Twins, statement: str) -> dict:
    """``statement`` through Hive's Driver on the Hive copy, through the console on the other; their differences."""
    before = orphans()
    hive_ql.using(twins.hive.database)(statement.format(table=twins.hive.qualified, elsewhere=twins.hive.elsewhere))
    execution = console(
        metastore, statement.format(table=twins.console.qualified, elsewhere=f"file:{twins.console.elsewhere}")
    )
    assert execution.state == Execution.State.SUCCEEDED
    assert orphans() == before, "neither side leaves rows that nothing refers to"
    return {
        "metastore": differences(metastore_image(twins.hive), metastore_image(twins.console)),
        "trees": differences(tree_image(twins.hive), tree_image(twins.console)),
    }


def test_msck_repair_adds_what_spark_wrote_as_hive_does_and_spark_reads_it(
    spark, hive_ql, spark_metastore, spark_twins
) -> None:
    """The partition Spark wrote is added with the rows Hive's MSCK writes (storage descriptor, SerDe, key values,
    numFiles/totalSize of its visible files); Spark reads its rows from the console's copy as from Hive's."""
    # given
    twins = spark_twins("msck_repair")
    for copy in (twins.hive, twins.console):
        write_partition(spark, copy, *NEW_PARTITION)

    # when
    found = both(hive_ql, spark_metastore, twins, "MSCK REPAIR TABLE {table}")

    # then
    assert found == {"metastore": {}, "trees": {}}
    image = metastore_image(twins.console)
    assert "dt=2024-02-01/hour=5" in image["partitions"]
    expected = sorted([*TWIN_ROWS, *((*row, *NEW_PARTITION) for row in NEW_ROWS)])
    assert read_rows(spark, twins.console) == read_rows(spark, twins.hive) == expected


def test_add_partition_writes_what_hive_writes_and_creates_the_directory(
    spark, hive_ql, spark_metastore, spark_twins
) -> None:
    """ADD PARTITION without LOCATION: the same rows as Hive's, and the same new empty directory; Spark reads the
    table (no new rows) from both copies alike."""
    # given
    twins = spark_twins("add_partition")

    # when
    found = both(hive_ql, spark_metastore, twins, "ALTER TABLE {table} ADD PARTITION (dt='2024-03-01', hour=2)")

    # then
    assert found == {"metastore": {}, "trees": {}}
    assert (twins.console.root / "dt=2024-03-01" / "hour=2").is_dir()
    assert read_rows(spark, twins.console) == read_rows(spark, twins.hive) == sorted(TWIN_ROWS)


def test_add_partition_at_a_location_spark_wrote_takes_its_quick_statistics_as_hive_does(
    spark, hive_ql, spark_metastore, spark_twins
) -> None:
    """ADD PARTITION … LOCATION onto data Spark wrote elsewhere: the metastore's quick statistics, as Hive's; Spark
    reads the new rows from both copies."""
    # given
    twins = spark_twins("add_located")
    for copy in (twins.hive, twins.console):
        frame = spark.createDataFrame(list(NEW_ROWS), "id int, name string, amount double").coalesce(1)
        frame.write.parquet(str(copy.elsewhere / "p"))
    statement = "ALTER TABLE {table} ADD PARTITION (dt='2024-02-01', hour=5) LOCATION '{elsewhere}/p'"

    # when
    found = both(hive_ql, spark_metastore, twins, statement)

    # then
    assert found == {"metastore": {}, "trees": {}}
    expected = sorted([*TWIN_ROWS, *((*row, *NEW_PARTITION) for row in NEW_ROWS)])
    assert read_rows(spark, twins.console) == read_rows(spark, twins.hive) == expected
