"""
Issue 27's proof for ``DROP DATABASE … CASCADE``: Hive 2.3's own Driver (``DDLTask.dropDatabase`` →
``HMSHandler.drop_database_core``) drops one database, the console its twin (each: a partitioned managed table with a
partition outside the database's directory, a managed table, an external table, a view and a function; created by
Spark's Hive client alike). Then:

* the rows each drop deleted, per metastore table, are the same (counted over the whole metastore) and neither leaves
  orphans;
* both databases' directories are gone (Hive deleted them; the console moved them to its trash, with the outside
  partition's directory), and both external tables' data stays;
* after the console's undrop, Spark's Hive client reads exactly the rows it read before from every table and the view,
  and calls the function again.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from catalog_admin.selectors.metastores import Metastore
from operations.ddl.parser import parse_alter
from operations.models import Execution
from operations.planners.databases import plan_database
from operations.services.database import database_execute
from operations.services.database_kind import database_revert_plan
from tests.witness.differential import orphans
from tests.witness.test_spark_drop_table import deleted, row_counts

pytest.importorskip("pyspark")

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True, databases=["default", "spark_pg"])]

HIVE, CONSOLE = "cascade_hive", "cascade_console"
OBJECTS = ("events", "ext", "notes", "v")


@pytest.fixture
def twin_databases(spark: Any, spark_tmp: Path) -> Iterator[dict[str, Path]]:
    """Two identical databases; their outside partition directories by name. Dropped afterwards by Spark SQL."""
    outside = {name: spark_tmp / "outside" / "cascade" / name for name in (HIVE, CONSOLE)}
    for name in (HIVE, CONSOLE):
        spark.sql(f"DROP DATABASE IF EXISTS {name} CASCADE")
        spark.sql(f"CREATE DATABASE {name}")
        spark.sql(f"CREATE TABLE {name}.events (id int, name string) PARTITIONED BY (dt string) STORED AS PARQUET")
        location = f"file:{outside[name]}/dt=2024-01-02"
        spark.sql(f"ALTER TABLE {name}.events ADD PARTITION (dt='2024-01-02') LOCATION '{location}'")
        spark.sql(f"INSERT INTO {name}.events PARTITION (dt='2024-01-01') VALUES (1, 'a'), (2, 'b')")
        spark.sql(f"INSERT INTO {name}.events PARTITION (dt='2024-01-02') VALUES (3, 'c')")
        spark.sql(f"CREATE TABLE {name}.notes (id int, note string) STORED AS PARQUET")
        spark.sql(f"INSERT INTO {name}.notes VALUES (1, 'x'), (2, 'y')")
        ext = spark_tmp / "elsewhere" / "cascade" / name
        spark.sql(f"CREATE EXTERNAL TABLE {name}.ext (id int) STORED AS PARQUET LOCATION 'file:{ext}'")
        spark.sql(f"INSERT INTO {name}.ext VALUES (7)")
        spark.sql(f"CREATE VIEW {name}.v AS SELECT id, note FROM {name}.notes")
        spark.sql(f"CREATE FUNCTION {name}.strlen AS 'org.apache.hadoop.hive.ql.udf.generic.GenericUDFLength'")
    yield outside
    for name in (HIVE, CONSOLE):
        spark.sql(f"DROP DATABASE IF EXISTS {name} CASCADE")


def seen(spark: Any, name: str) -> dict[str, list[tuple[Any, ...]]]:
    spark.catalog.clearCache()
    return {obj: sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {name}.{obj}").collect()) for obj in OBJECTS}


def console(metastore: Metastore, statement: str) -> Execution:
    plan = plan_database(metastore, parse_alter(statement))  # type: ignore[arg-type]
    assert not plan.blockers, plan.blockers
    execution = database_execute(plan=plan, actor="spark-witness", source="cli", reason="witness")
    assert execution.state == Execution.State.SUCCEEDED
    return execution


def test_drop_database_cascade_deletes_the_rows_hive_deletes_and_the_undrop_gives_spark_the_same_rows(
    spark: Any, hive_ql: Any, spark_metastore: Metastore, twin_databases: dict[str, Path], spark_tmp: Path
) -> None:
    # given
    warehouse = Path(spark_metastore.config.warehouse)
    before = seen(spark, CONSOLE)
    assert before == seen(spark, HIVE)
    orphans_before = orphans()
    counts = [row_counts()]

    # when
    hive_ql(f"DROP DATABASE {HIVE} CASCADE")
    counts.append(row_counts())
    dropped = console(spark_metastore, f"DROP DATABASE {CONSOLE} CASCADE")
    counts.append(row_counts())

    # then
    by_hive, by_console = deleted(counts[0], counts[1]), deleted(counts[1], counts[2])
    assert by_console == by_hive
    assert {"DBS", "TBLS", "PARTITIONS", "SDS", "TABLE_PARAMS", "FUNCS"} <= set(by_hive)
    assert orphans() == orphans_before
    assert not (warehouse / f"{HIVE}.db").exists() and not (warehouse / f"{CONSOLE}.db").exists()
    assert not twin_databases[CONSOLE].joinpath("dt=2024-01-02").exists()  # in the console's trash
    for name in (HIVE, CONSOLE):
        assert any((spark_tmp / "elsewhere" / "cascade" / name).glob("*.parquet"))  # external data stays
    assert not spark.catalog.databaseExists(CONSOLE)

    # and when
    database_execute(plan=database_revert_plan(dropped), actor="spark-witness", source="cli", reason="undrop")

    # then
    assert seen(spark, CONSOLE) == before
    assert spark.sql(f"SELECT {CONSOLE}.strlen('abcd')").collect()[0][0] == 4  # the function is back
