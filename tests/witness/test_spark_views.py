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
