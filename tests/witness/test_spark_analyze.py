"""
Issue 28's proof for ANALYZE, on tables Spark's Hive 2.3 client wrote (``spark_pg``), analyzed by the analyze program
on the run's Spark session (``mapInArrow``):

* column statistics of every primitive kind equal what Spark's own ``ANALYZE TABLE … COMPUTE STATISTICS FOR
  COLUMNS`` stores for a twin table of the same rows (min, max, nulls, distinct values, maximum length), with the
  differences of definition asserted: Spark's average length is a whole number over the non-null values, Hive's
  (``GenericUDAFComputeStats``) a double over every row; Hive's own Driver cannot run that ANALYZE here (it needs a
  MapReduce job), but it reads what the console wrote (``DESCRIBE FORMATTED t col``);
* basic statistics: Spark's planner reads the console's numRows/totalSize (``DESCRIBE EXTENDED``'s Statistics);
* NOSCAN on a text table: Spark reads each partition's size as the console wrote it, the same as it reads for a twin
  table after Spark's own ``ANALYZE TABLE … PARTITION (…) COMPUTE STATISTICS NOSCAN``; numFiles the visible files.
  Hive's own Driver cannot run ANALYZE here: it waits forever in ``Hive.registerAllFunctionsOnce`` (its
  FunctionRegistry needs LLAP classes Spark does not ship; ../shared/docs/spark-hive-witness.md).
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from catalog_admin.models import Partition, PartitionParam, Table, TableColumnStatistics, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.services.alter import alter_preview_statement
from operations.services.analyze import analyze_execute
from operations.spark.programs import analyze as analyze_program
from operations.spark.programs.analyze import EPOCH, hive_decimal

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True, databases=["default", "spark_pg"])]

DATABASE = "analyze_src"
KINDS = "id int, big bigint, price double, amount decimal(10,2), name string, flag boolean, day date"
ROWS = (
    "(1, 10000000000, 1.5, 12.50, 'alpha', true, DATE '2024-01-01')",
    "(2, NULL, -2.25, 100.00, 'bé', false, DATE '2023-12-31')",
    "(3, 7, NULL, NULL, NULL, NULL, NULL)",
    "(2, 7, 1.5, 0.05, 'gamma ray', true, DATE '2024-02-29')",
)


@pytest.fixture(scope="module")
def tables(spark) -> None:  # noqa: ANN001
    """``kinds`` and its twin ``kinds_spark`` (the same rows), ``lines`` and ``lines_hive`` (text, two partitions)."""
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
    for name in ("kinds", "kinds_spark"):
        spark.sql(f"CREATE TABLE {DATABASE}.{name} ({KINDS}) STORED AS PARQUET")
        spark.sql(f"INSERT INTO {DATABASE}.{name} VALUES {', '.join(ROWS)}")
    for name in ("lines", "lines_hive"):
        spark.sql(f"CREATE TABLE {DATABASE}.{name} (id string, note string) PARTITIONED BY (dt string) "
                  "ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' STORED AS TEXTFILE")  # fmt: skip
        for day in ("2024-01-01", "2024-01-02"):
            spark.sql(f"INSERT INTO {DATABASE}.{name} PARTITION (dt='{day}') VALUES ('1', 'one {day}'), ('2', NULL)")


def on_spark(spark):  # noqa: ANN001, ANN201 - a run_program
    return lambda plan: analyze_program.run(spark, plan, [].append)


def spark_column_stats(spark, table: str, column: str) -> dict[str, str]:  # noqa: ANN001
    rows = spark.sql(f"DESCRIBE EXTENDED {table} {column}").collect()
    return {r[0]: r[1] for r in rows}


def test_column_statistics_equal_sparks_own_analyze(spark, spark_metastore: Metastore, tables: None, hive_ql) -> None:  # noqa: ANN001
    """Per column: min, max, nulls, distinct values and maximum length as Spark's ANALYZE … FOR COLUMNS stores them
    for the same rows; the average length by Hive's definition; Hive's Driver reads the rows back."""
    # given
    columns = "id, big, price, amount, name, flag, day"
    spark.sql(f"ANALYZE TABLE {DATABASE}.kinds_spark COMPUTE STATISTICS FOR COLUMNS {columns}")
    preview = alter_preview_statement(metastore=spark_metastore, statement=f"ANALYZE TABLE {DATABASE}.kinds COMPUTE "
                                      "STATISTICS FOR COLUMNS")  # fmt: skip
    assert preview.blockers == (), preview.blockers

    # when
    analyze_execute(preview=preview, actor="steward", source="cli", run_program=on_spark(spark))

    # then
    table_id = Table.objects.using(spark_metastore.alias).get(database__name=DATABASE, name="kinds").id
    ours = {r.column_name: r for r in TableColumnStatistics.objects.using(spark_metastore.alias).filter(
        table_id=table_id)}  # fmt: skip
    theirs = {c: spark_column_stats(spark, f"{DATABASE}.kinds_spark", c) for c in columns.split(", ")}
    for column in ("id", "big", "price", "amount", "day"):
        low, high = ours[column].low_value, ours[column].high_value
        if column == "day":  # days since the epoch in the metastore, ISO dates in Spark's
            low, high = (str(EPOCH + timedelta(days=d)) for d in (low, high))
        assert (str(low), str(high)) == _spark_bounds(theirs[column]), column
    for column, row in ours.items():
        assert str(row.num_nulls) == theirs[column]["num_nulls"], column
        if row.num_distincts is not None:
            assert str(row.num_distincts) == theirs[column]["distinct_count"], column
    assert str(ours["name"].max_col_len) == theirs["name"]["max_col_len"] == "9"
    assert ours["name"].avg_col_len == (5 + 2 + 9) / 4  # Hive: over every row, in UTF-16 units
    assert theirs["name"]["avg_col_len"] == "6"  # Spark: over the non-null values only, rounded up to a whole number
    assert (ours["flag"].num_trues, ours["flag"].num_falses) == (2, 1)

    # and Hive's own client reads them
    described = " ".join(hive_ql(f"DESCRIBE FORMATTED {DATABASE}.kinds amount"))
    assert "0.05" in described and "100" in described, described


def _spark_bounds(stats: dict[str, str]) -> tuple[str, str]:
    """Spark's min and max as the metastore's text: decimals as HiveDecimal prints them (trailing zeros trimmed),
    doubles as Python prints them."""

    def text(value: str) -> str:
        if "." not in value:
            return value  # integers, dates
        number = Decimal(value)
        return hive_decimal(number) if value.endswith("0") or len(value.split(".")[1]) == 2 else str(float(value))

    return text(stats["min"]), text(stats["max"])


def test_sparks_planner_reads_the_basic_statistics(spark, spark_metastore: Metastore, tables: None) -> None:  # noqa: ANN001
    """After COMPUTE STATISTICS the table's Statistics line in Spark shows the console's totalSize and numRows."""
    # given
    preview = alter_preview_statement(metastore=spark_metastore, statement=f"ANALYZE TABLE {DATABASE}.kinds COMPUTE "
                                      "STATISTICS")  # fmt: skip

    # when
    analyze_execute(preview=preview, actor="steward", source="cli", run_program=on_spark(spark))

    # then
    table_id = Table.objects.using(spark_metastore.alias).get(database__name=DATABASE, name="kinds").id
    params = dict(TableParam.objects.using(spark_metastore.alias).filter(table_id=table_id).values_list("key", "value"))
    assert params["numRows"] == "4"
    spark.sql(f"REFRESH TABLE {DATABASE}.kinds")
    described = {r[0]: r[1] for r in spark.sql(f"DESCRIBE EXTENDED {DATABASE}.kinds").collect()}
    assert described["Statistics"] == f"{params['totalSize']} bytes, 4 rows"


def test_noscan_equals_sparks_own_noscan(spark, spark_metastore: Metastore, tables: None) -> None:  # noqa: ANN001
    """totalSize per partition as Spark's ANALYZE … NOSCAN measures the twin table; numFiles the visible files."""
    # given
    spark.sql(f"ANALYZE TABLE {DATABASE}.lines_hive PARTITION (dt) COMPUTE STATISTICS NOSCAN")
    preview = alter_preview_statement(metastore=spark_metastore, statement=f"ANALYZE TABLE {DATABASE}.lines "
                                      "PARTITION (dt) COMPUTE STATISTICS NOSCAN")  # fmt: skip

    # when
    analyze_execute(preview=preview, actor="steward", source="cli", run_program=on_spark(spark))

    # then
    def stats(table: str) -> dict[str, dict[str, str]]:
        rows = PartitionParam.objects.using(spark_metastore.alias).filter(
            partition__table__database__name=DATABASE, partition__table__name=table)  # fmt: skip
        found: dict[str, dict[str, str]] = {}
        for name, key, value in rows.values_list("partition__name", "key", "value"):
            found.setdefault(name, {})[key] = value
        return found

    ours, theirs = stats("lines"), stats("lines_hive")
    assert sorted(ours) == sorted(theirs) == ["dt=2024-01-01", "dt=2024-01-02"]
    for name in theirs:
        day = name.removeprefix("dt=")
        assert _partition_statistics(spark, "lines", day) == _partition_statistics(spark, "lines_hive", day)
        assert _partition_statistics(spark, "lines", day) == f"{ours[name]['totalSize']} bytes", name
        location = Partition.objects.using(spark_metastore.alias).get(
            table__database__name=DATABASE, table__name="lines", name=name).sd.location  # fmt: skip
        visible = [p for p in Path(location.removeprefix("file:")).iterdir() if not p.name.startswith(("_", "."))]
        assert ours[name]["numFiles"] == str(len(visible)), name


def _partition_statistics(spark, table: str, day: str) -> str:  # noqa: ANN001
    """The Partition Statistics line Spark's DESCRIBE EXTENDED prints (what its planner reads)."""
    spark.sql(f"REFRESH TABLE {DATABASE}.{table}")
    rows = spark.sql(f"DESCRIBE EXTENDED {DATABASE}.{table} PARTITION (dt='{day}')").collect()
    return next(r[1] for r in rows if r[0] == "Partition Statistics")
