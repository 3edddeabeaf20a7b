"""
Hive 2.3 as the witness for the table's data: ``SHOW CREATE TABLE`` run by Hive's own Driver (``DDLTask``) prints
exactly what the console prints, and the console's sample of a table Spark wrote (Parquet, partitioned) holds the rows
Spark SQL reads.
"""

from __future__ import annotations

import pytest

from catalog_admin.selectors.partitions import table_partition_keys
from catalog_admin.selectors.samples import table_sample
from catalog_admin.selectors.table_ddl import show_create_statement
from catalog_admin.selectors.tables import get_table, get_table_detail
from tests.fixtures.spark import SparkCatalog

pytestmark = [pytest.mark.spark, pytest.mark.django_db]


@pytest.mark.parametrize("kind", ["managed", "external", "view", "datasource"])
def test_show_create_table_is_what_hives_driver_prints(hive_ql, spark_metastore, spark_catalog: SparkCatalog, kind):
    # given
    table = getattr(spark_catalog, kind)
    hive = "\n".join(hive_ql(f"SHOW CREATE TABLE {spark_catalog.database}.{table}"))

    # when
    console = show_create_statement(spark_metastore, get_table_detail(spark_metastore, spark_catalog.database, table))

    # then
    assert console.rstrip("\n") == hive.rstrip("\n")


def test_the_sample_holds_the_rows_spark_reads(spark, spark_metastore, spark_catalog: SparkCatalog):
    # given
    db = spark_catalog.database
    rows = spark.sql(f"SELECT id, name, amount, tags, dt, hour FROM {db}.{spark_catalog.managed}").collect()
    expected = sorted(tuple(str(v) if v is not None else None for v in row) for row in rows)

    # when
    _database, table = get_table(spark_metastore, db, spark_catalog.managed)
    sample = table_sample(spark_metastore, table, table_partition_keys(spark_metastore, table), limit=100)

    # then
    assert sample.columns == ["id", "name", "amount", "tags", "dt", "hour"]
    assert sorted(tuple(str(v) if v is not None else None for v in row) for row in sample.rows) == expected
