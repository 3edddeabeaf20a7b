"""
Issue 27's witness for ``TRUNCATE TABLE``: Spark's Hive client writes the rows, Hive 2.3's own Driver truncates one
twin and the console the other; the metastore images are compared, Spark reads no row from the truncated partitions,
and after the console's revert Spark reads exactly the rows it read before.

The differences the console makes on purpose, each asserted:

* the data: Hive deletes it (to Hadoop's trash when one is configured); the console moves it to
  ``<database>/.catalog-admin-trash``, leaving each directory empty as Hive does;
* the statistics, measured here: Hive 2.3 sets ``COLUMN_STATS_ACCURATE`` to ``{"BASIC_STATS":"true"}`` (as the
  console does) but leaves ``numFiles``/``totalSize`` counting the files it deleted; the console writes ``0``, as
  Hive 3.1 and 4.0's ``HMSHandler.updateStatsForTruncate`` does. Hive keeps the partitions' column statistics rows
  (only the flag's column part is cleared); the console deletes them (kept in the before-image for the revert).
"""

from __future__ import annotations

from typing import Any

import pytest

from catalog_admin.selectors.metastores import Metastore
from operations.models import Execution
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.revert import revert_preview
from tests.fixtures.spark import TWIN_ROWS, TableCopy, Twins
from tests.witness.differential import ABSENT, differences, metastore_image, read_rows

pytest.importorskip("pyspark.errors")

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True, databases=["default", "spark_pg"])]

DAY = "2024-01-01"
ACCURATE = '{"BASIC_STATS":"true"}'


def run_console(metastore: Metastore, statement: str, reverts: Execution | None = None) -> Execution:
    preview = (
        revert_preview(execution=reverts)
        if reverts is not None
        else alter_preview_statement(metastore=metastore, statement=statement)
    )
    assert not preview.blockers, preview.blockers
    execution = alter_execute(preview=preview, actor="spark-witness", source=Execution.Source.CLI, reason="witness")
    assert execution.state == Execution.State.SUCCEEDED
    return execution


def day_rows(copy: TableCopy, spark: Any) -> list[tuple[Any, ...]]:
    return [row for row in read_rows(spark, copy) if row[3] == DAY]


def test_truncate_matches_hive_and_spark_reads_the_rows_again_after_the_revert(
    spark: Any, hive_ql: Any, spark_metastore: Metastore, spark_twins: Any
) -> None:
    """Hive's Driver and the console truncate dt=2024-01-01 (two partitions) of identical tables: Spark reads no row
    of them from either, the other partitions' rows stay, the partitions' rows match Hive's apart from the
    statistics; reverted, Spark reads exactly the rows it read before."""
    # given
    twins: Twins = spark_twins("truncate_day")
    image_before = metastore_image(twins.console)
    before = read_rows(spark, twins.console)
    assert len([row for row in before if row[3] == DAY]) == 3
    statement = "TRUNCATE TABLE {table} PARTITION (dt='" + DAY + "')"

    # when
    hive_ql.using(twins.hive.database)(statement.format(table=twins.hive.qualified))
    truncated = run_console(spark_metastore, statement.format(table=twins.console.qualified))

    # then
    assert day_rows(twins.hive, spark) == [] and day_rows(twins.console, spark) == []
    assert read_rows(spark, twins.console) == [row for row in before if row[3] != DAY]
    for partition in ("dt=2024-01-01/hour=1", "dt=2024-01-01/hour=2"):
        folder = twins.console.root / partition
        assert folder.is_dir() and not any(folder.iterdir()), partition
        assert (twins.hive.root / partition).is_dir() and not any((twins.hive.root / partition).iterdir())
    found = differences(metastore_image(twins.hive), metastore_image(twins.console))
    day = [name for name in image_before["partitions"] if name.startswith(f"dt={DAY}/")]
    expected: dict[tuple[str, ...], tuple[Any, Any]] = {}
    for name in day:
        partition = image_before["partitions"][name]
        for key in ("numFiles", "totalSize"):  # Hive 2.3 leaves the deleted files' counts; the console writes 0
            expected[("partitions", name, "params", key)] = (partition["params"][key], "0")
        for column, row in partition["column_statistics"].items():  # Hive keeps them, the console deletes them
            expected[("partitions", name, "column_statistics", column)] = (row, ABSENT)
    assert found == expected
    for name in day:  # both: basic statistics accurate, the column part cleared (clearColumnStatsState)
        assert metastore_image(twins.hive)["partitions"][name]["params"]["COLUMN_STATS_ACCURATE"] == ACCURATE
        assert metastore_image(twins.console)["partitions"][name]["params"]["COLUMN_STATS_ACCURATE"] == ACCURATE

    # when
    run_console(spark_metastore, "", reverts=truncated)

    # then
    assert read_rows(spark, twins.console) == before
    assert metastore_image(twins.console) == image_before
    assert len(before) == len(TWIN_ROWS)
