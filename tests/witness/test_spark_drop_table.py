"""
Issue 27's proof for DROP TABLE: Hive 2.3's own Driver (``DDLTask.dropTable`` → ``HMSHandler.drop_table_core`` →
``ObjectStore.dropPartitions`` / ``dropTable``) drops one twin, the console the other (``spark_twins``: parquet,
partitioned, a partition outside the table root, Hive-style column statistics). Then:

* the rows each drop deleted, per metastore table, are the same (counted over the whole metastore, so rows either
  side left behind or deleted elsewhere show); neither leaves orphans;
* Hive deleted the data; the console moved the table's folder and the outside partition's to its trash;
* after the console's undrop (the drop's revert) the table's rows are exactly those before the drop, its folders are
  back, and Spark's Hive client reads exactly the rows it read before.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connections

from catalog_admin.selectors.metastores import Metastore
from operations.models import Execution
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.revert import revert_preview
from tests.witness.differential import metastore_image, orphans, read_rows, tree_image

pytest.importorskip("pyspark")

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True, databases=["default", "spark_pg"])]

# The console writes Hive 3.1+'s notification events only where the metastore's events are on; Spark's embedded Hive
# 2.3 has no DbNotificationListener. Neither is a row of the table.
NOT_THE_TABLES = frozenset({"NOTIFICATION_LOG", "NOTIFICATION_SEQUENCE", "SEQUENCE_TABLE"})


def row_counts(alias: str = "spark_pg") -> dict[str, int]:
    """Rows per metastore table (every table of the schema)."""
    connection = connections[alias]
    with connection.cursor() as cursor:
        names = [n for n in connection.introspection.table_names(cursor) if n.upper() not in NOT_THE_TABLES]
        counts = {}
        for name in names:
            cursor.execute(f"SELECT COUNT(*) FROM {connection.ops.quote_name(name)}")
            counts[name] = cursor.fetchone()[0]
    return counts


def deleted(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {table: before[table] - after[table] for table in before if before[table] != after[table]}


def run(metastore: Metastore, preview: Any) -> Execution:
    assert not preview.blockers, preview.blockers
    execution = alter_execute(preview=preview, actor="spark-witness", source=Execution.Source.CLI, reason="witness")
    assert execution.state == Execution.State.SUCCEEDED
    return execution


def test_drop_table_deletes_the_rows_hive_deletes_and_the_undrop_gives_spark_the_same_rows(
    spark, hive_ql, spark_metastore, spark_twins
):
    # given
    twins = spark_twins("drop_table")
    rows_before = read_rows(spark, twins.console)
    image_before, tree_before = metastore_image(twins.console), tree_image(twins.console)
    orphans_before = orphans()
    counts = [row_counts()]

    # when
    hive_ql.using(twins.hive.database)(f"DROP TABLE {twins.hive.qualified}")
    counts.append(row_counts())
    statement = f"DROP TABLE {twins.console.qualified}"
    dropped = run(spark_metastore, alter_preview_statement(metastore=spark_metastore, statement=statement))
    counts.append(row_counts())
    console_tree = tree_image(twins.console)
    run(spark_metastore, revert_preview(execution=dropped))

    # then
    by_hive, by_console = deleted(counts[0], counts[1]), deleted(counts[1], counts[2])
    assert by_console == by_hive
    assert {"TBLS", "PARTITIONS", "SDS", "PART_COL_STATS"} <= set(by_hive)
    assert orphans() == orphans_before
    assert metastore_image(twins.hive) == {}
    assert tree_image(twins.hive)["tables"] == [] and tree_image(twins.hive)["outside"] == []  # Hive deleted them
    assert console_tree["tables"] == [] and console_tree["outside"] == []
    trash = console_tree["trash"]
    assert any(entry.endswith(".parquet") and "/table/" in entry for entry in trash)
    assert any(entry.endswith(".parquet") and "/partitions/dt=2024-01-03/hour=0/" in entry for entry in trash)
    assert metastore_image(twins.console) == image_before
    assert tree_image(twins.console)["tables"] == tree_before["tables"]
    assert tree_image(twins.console)["outside"] == tree_before["outside"]
    assert read_rows(spark, twins.console) == rows_before
