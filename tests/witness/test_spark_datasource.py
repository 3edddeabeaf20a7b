"""
Issue 25, case 9, on tables Spark itself created (``CREATE TABLE … USING parquet|csv``, Spark's Hive 2.3 client on
``spark_pg``): the metastore rows are as Spark's HiveExternalCatalog writes them (``path`` in SERDE_PARAMS,
``spark.sql.sources.*`` in TABLE_PARAMS), a relocation moves Spark's ``path`` with the data so Spark still reads
every row after the source is cleaned up, and what would make Spark lose data is blocked with the reason.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from catalog_admin.models import SerDeParam, Table, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.services.alter import alter_preview_statement
from operations.services.relocate import relocate_execute, relocations_cleanup
from operations.spark.programs import relocate as relocate_program

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True, databases=["default", "spark_pg"])]

DATABASE = "datasource_src"


@pytest.fixture(scope="module")
def tables(spark) -> None:  # noqa: ANN001
    """``flat`` (USING parquet, 18 rows in three INSERTs), ``bucketed`` (USING parquet, 4 buckets), ``lines`` (USING
    csv)."""
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
    spark.sql(f"CREATE TABLE {DATABASE}.flat (id int, v string) USING parquet")
    for batch in range(3):
        values = ", ".join(f"({batch * 6 + i}, 'v{batch * 6 + i}')" for i in range(6))
        spark.sql(f"INSERT INTO {DATABASE}.flat VALUES {values}")
    spark.sql(f"CREATE TABLE {DATABASE}.bucketed (id int, v string) USING parquet CLUSTERED BY (id) INTO 4 BUCKETS")
    for batch in range(2):
        spark.sql(f"INSERT INTO {DATABASE}.bucketed VALUES ({batch}, 'a'), ({batch + 10}, 'b')")
    spark.sql(f"CREATE TABLE {DATABASE}.lines (id int, v string) USING csv")
    spark.sql(f"INSERT INTO {DATABASE}.lines VALUES (1, 'a'), (2, 'b')")


def rows(spark, table: str) -> list[tuple]:  # noqa: ANN001
    spark.sql(f"REFRESH TABLE {table}")
    return sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {table}").collect())


def stored(metastore: Metastore, name: str) -> tuple[str, dict[str, str], dict[str, str]]:
    """The table's location, TABLE_PARAMS and SerDe parameters as Spark wrote them."""
    table = Table.objects.using(metastore.alias).select_related("sd").get(database__name=DATABASE, name=name)
    params = dict(TableParam.objects.using(metastore.alias).filter(table_id=table.id).values_list("key", "value"))
    serde = dict(
        SerDeParam.objects.using(metastore.alias).filter(serde_id=table.sd.serde_id).values_list("key", "value")
    )
    return table.sd.location, params, serde


def codes(metastore: Metastore, statement: str) -> set[str]:
    return {b.code for b in alter_preview_statement(metastore=metastore, statement=statement).blockers}


def test_a_relocated_data_source_table_is_read_by_spark_after_the_source_is_cleaned(
    spark, spark_metastore: Metastore, tables: None
) -> None:  # noqa: ANN001
    """Spark reads a USING parquet table from its ``path``: the relocation moves it with the location, so after the
    cleanup removed the source Spark still reads all 18 rows (before: 0)."""
    # given
    table = f"{DATABASE}.flat"
    location, params, serde = stored(spark_metastore, "flat")
    assert params["spark.sql.sources.provider"] == "parquet" and serde["path"] == location
    before = rows(spark, table)
    target = f"{location}_moved"
    preview = alter_preview_statement(
        metastore=spark_metastore, statement=f"ALTER TABLE {table} SET LOCATION '{target}' WITH DATA"
    )
    assert preview.blockers == (), preview.blockers

    # when
    relocate_execute(
        preview=preview, actor="steward", source="cli",
        run_program=lambda plan: relocate_program.run(spark, plan, [].append),
    )  # fmt: skip
    cleaned = relocations_cleanup(now=timezone.now() + timedelta(days=365))

    # then
    assert cleaned and not Path(location.removeprefix("file:")).exists()
    moved_location, _params, moved_serde = stored(spark_metastore, "flat")
    assert moved_serde["path"] == moved_location == target
    assert len(before) == 18 and rows(spark, table) == before


@pytest.mark.parametrize(
    ("statement", "code"),
    [
        ("ALTER TABLE {db}.flat CHANGE COLUMN v w string", "spark_by_name_columns"),
        ("ALTER TABLE {db}.flat CHANGE COLUMN id id bigint", "spark_by_name_columns"),
        ("ALTER TABLE {db}.flat REPLACE COLUMNS (id int, w string)", "spark_by_name_columns"),
        ("ALTER TABLE {db}.flat SET FILEFORMAT ORC WITH DATA", "spark_datasource_convert"),
        ("ALTER TABLE {db}.bucketed CONCATENATE", "spark_bucketed_rewrite"),
        ("ALTER TABLE {db}.lines ADD COLUMNS (extra string)", "spark_placeholder_columns"),
    ],
    ids=["rename", "retype", "replace", "convert", "bucketed", "csv-add-columns"],
)
def test_what_spark_would_lose_data_on_is_blocked_with_the_reason(
    spark, spark_metastore: Metastore, tables: None, statement: str, code: str
) -> None:  # noqa: ANN001
    """Each statement Spark refuses on its own tables (its readers would read NULL, fail or lose the schema) is blocked
    by the console's preview, naming why."""
    # when
    found = codes(spark_metastore, statement.format(db=DATABASE))

    # then
    assert code in found, found
