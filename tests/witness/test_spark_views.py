"""
Views Spark creates over a table are named by the previews that would break them.

Spark stores a view's text as written (unqualified names included) and records the database it resolves them in;
after the console renames the table, Spark itself can no longer read the view, which is what the warning says.
"""

from __future__ import annotations

import pytest

from operations.services.alter import alter_execute, alter_preview_statement

AnalysisException = pytest.importorskip("pyspark.errors").AnalysisException

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True, databases=["default", "spark_pg"])]


def test_a_spark_view_over_a_renamed_table_is_named_and_then_fails_in_spark(spark, spark_metastore, spark_twins):
    # given: a view written without the database name, and one in another database that names it in full
    table = spark_twins("viewed").console
    spark.sql(f"USE {table.database}")
    try:
        spark.sql(f"CREATE VIEW viewed_names AS SELECT id, name FROM {table.name}")
    finally:
        spark.sql("USE default")
    spark.sql(f"CREATE VIEW default.viewed_amounts AS SELECT amount FROM {table.qualified}")

    # when
    preview = alter_preview_statement(
        metastore=spark_metastore, statement=f"ALTER TABLE {table.qualified} RENAME TO {table.database}.viewed_v2"
    )

    # then
    [warning] = [w for w in preview.warnings if w.code == "dependent_views"]
    assert warning.message.endswith(f": default.viewed_amounts, {table.database}.viewed_names.")

    # when: executed, Spark's own reading of the views fails, as the warning said
    alter_execute(preview=preview, actor="spark-witness", source="cli", reason="witness")
    spark.catalog.clearCache()

    # then
    for view in (f"{table.database}.viewed_names", "default.viewed_amounts"):
        with pytest.raises(AnalysisException):
            spark.sql(f"SELECT * FROM {view}").collect()


def test_alter_table_on_a_view_is_refused_as_hive_refuses_it_and_alter_view_renames_it(
    spark, hive_ql, spark_metastore, spark_twins
):
    """Hive 2.3's own Driver refuses ``ALTER TABLE <view> RENAME`` with ErrorMsg 10131 and runs ``ALTER VIEW … RENAME``;
    the console blocks the first with the same words and renames a view written ALTER VIEW, which Spark then reads
    under its new name."""
    from tests.fixtures.spark import HiveQLError

    # given: two views over one table
    table = spark_twins("renamed_views").console
    for name in ("by_hive", "by_console"):
        spark.sql(f"CREATE VIEW {table.database}.{name} AS SELECT id FROM {table.qualified}")
    refusal = "To alter a view you need to use the ALTER VIEW command."

    # when: Hive and the console are asked ALTER TABLE on a view, then ALTER VIEW
    with pytest.raises(HiveQLError) as hive_refused:
        hive_ql(f"ALTER TABLE {table.database}.by_hive RENAME TO {table.database}.by_hive_2")
    console_refused = alter_preview_statement(
        metastore=spark_metastore, statement=f"ALTER TABLE {table.database}.by_console RENAME TO {table.database}.v2"
    )
    hive_ql(f"ALTER VIEW {table.database}.by_hive RENAME TO {table.database}.by_hive_2")
    preview = alter_preview_statement(
        metastore=spark_metastore,
        statement=f"ALTER VIEW {table.database}.by_console RENAME TO {table.database}.by_console_2",
    )
    alter_execute(preview=preview, actor="spark-witness", source="cli", reason="witness")
    spark.catalog.clearCache()

    # then
    assert refusal in str(hive_refused.value)
    assert [(b.code, b.message) for b in console_refused.blockers] == [("alter_table_on_view", refusal)]
    assert preview.blockers == ()
    rows = spark.sql(f"SELECT COUNT(*) FROM {table.qualified}").collect()[0][0]
    for name in ("by_hive_2", "by_console_2"):  # both views read the table under their new names
        assert spark.sql(f"SELECT COUNT(*) FROM {table.database}.{name}").collect()[0][0] == rows
