"""
Issue 12's rules checked against Hive 2.3's own Driver (``hive_ql``: parser → DDLSemanticAnalyzer → DDLTask →
HiveAlterHandler, in Spark's JVM, on ``spark_pg``):

* the column changes Hive's client refuses by serde (REPLACE COLUMNS dropping ORC columns, REPLACE COLUMNS on Avro,
  CHANGE … FIRST|AFTER on ORC) are refused by the console's preview with Hive's own message, and neither side writes;
  the same changes on Parquet and text tables are allowed by both;
* SET LOCATION on an unpartitioned table leaves numFiles/totalSize counted from the new directory on both sides;
* renaming a column of a Spark data-source table (bucketed and sorted by it) is refused, as Spark SQL refuses it:
  its files hold the old name, so Spark would read NULL (issue 25, case 9); Spark keeps reading the same rows.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from catalog_admin.errors import ApplicationError
from operations.models import Execution
from operations.services.alter import alter_execute, alter_preview_statement
from tests.fixtures.spark import HiveQLError, TableCopy
from tests.witness.differential import ABSENT, differences, metastore_image, orphans, read_rows

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True, databases=["default", "spark_pg"])]

DATABASE = "diff_hive"
HIVE_CLIENT_STAMPS = ("last_modified_by", "last_modified_time")


@pytest.fixture(autouse=True)
def _databases(_diff_databases: tuple[str, str]) -> None:
    """The twins' databases, where these tests create their tables."""


def create(hive_ql, name: str, stored_as: str, *, partitioned: bool = False) -> str:
    """A table ``diff_hive.<name>`` (id int, name string, amount double) created by Hive's Driver."""
    qualified = f"{DATABASE}.{name}"
    partitions = " PARTITIONED BY (dt string)" if partitioned else ""
    hive_ql(f"CREATE TABLE {qualified} (id int, name string, amount double){partitions} STORED AS {stored_as}")
    return qualified


REFUSED = [
    pytest.param(
        "orc_replace",
        "ORC",
        "REPLACE COLUMNS (id int, name string)",
        "Replacing columns cannot drop columns for table {table}. SerDe may be incompatible",
        id="orc-replace-drops",
    ),
    pytest.param(
        "orc_first",
        "ORC",
        "CHANGE COLUMN amount amount double FIRST",
        "Reordering columns is not supported for table {table}. SerDe may be incompatible",
        id="orc-change-first",
    ),
    pytest.param(
        "orc_after",
        "ORC",
        "CHANGE COLUMN id id int AFTER name",
        "Reordering columns is not supported for table {table}. SerDe may be incompatible",
        id="orc-change-after",
    ),
    pytest.param(
        "avro_replace",
        "AVRO",
        "REPLACE COLUMNS (id int, name string, amount double)",
        "Replace columns is not supported for table {table}. SerDe may be incompatible.",
        id="avro-replace",
    ),
]


@pytest.mark.parametrize(("name", "stored_as", "clause", "message"), REFUSED)
def test_column_changes_hive_refuses_by_serde_are_refused_with_hives_message(
    hive_ql, spark_metastore, name, stored_as, clause, message
):
    """Hive's Driver refuses the statement with its message and writes nothing; the console's preview is blocked
    with the same message first."""
    # given
    table = create(hive_ql, name, stored_as)
    before = metastore_image_of(table)
    expected = message.format(table=table)

    # when
    with pytest.raises(HiveQLError) as refused:
        hive_ql(f"ALTER TABLE {table} {clause}")
    preview = alter_preview_statement(metastore=spark_metastore, statement=f"ALTER TABLE {table} {clause}")

    # then
    assert expected in str(refused.value)
    assert preview.blockers[0].message == expected
    assert metastore_image_of(table) == before


ALLOWED = [
    pytest.param("parquet_replace", "PARQUET", False, "REPLACE COLUMNS (id int, name string)", id="parquet-replace"),
    pytest.param(
        "parquet_part_replace",
        "PARQUET",
        True,
        "REPLACE COLUMNS (id int, name string)",
        id="partitioned-parquet-replace-2.3",
    ),
    pytest.param("text_replace", "TEXTFILE", False, "REPLACE COLUMNS (id int)", id="text-replace"),
    pytest.param("parquet_after", "PARQUET", False, "CHANGE COLUMN amount amount double AFTER id", id="parquet-after"),
    pytest.param("orc_in_place", "ORC", False, "CHANGE COLUMN name name string COMMENT 'n'", id="orc-in-place"),
]


@pytest.mark.parametrize(("name", "stored_as", "partitioned", "clause"), ALLOWED)
def test_the_same_changes_on_other_serdes_run_on_both_and_leave_the_same_columns(
    hive_ql, spark_metastore, name, stored_as, partitioned, clause
):
    """Where Hive's client lets the change through (Parquet, text; on 2.3 a partitioned Parquet table drops columns
    without CASCADE too), the console does and leaves the same columns."""
    # given
    hive_table = create(hive_ql, f"{name}_h", stored_as, partitioned=partitioned)
    console_table = create(hive_ql, f"{name}_c", stored_as, partitioned=partitioned)

    # when
    hive_ql(f"ALTER TABLE {hive_table} {clause}")
    preview = alter_preview_statement(metastore=spark_metastore, statement=f"ALTER TABLE {console_table} {clause}")
    assert preview.blockers == ()
    alter_execute(preview=preview, actor="hive-witness", source=Execution.Source.CLI, reason="witness")

    # then
    assert columns_of(hive_table) == columns_of(console_table)


def test_set_location_of_an_unpartitioned_table_counts_the_new_directory_as_hive_does(
    hive_ql, spark, spark_metastore, spark_twins
):
    """SET LOCATION: Hive's metastore recounts numFiles/totalSize in the new directory, hidden files left out (its
    DDLTask lets it, for this alter only) and drops COLUMN_STATS_ACCURATE; the console writes the same values. Only
    the client's stamps differ."""
    # given: each copy's data copied to a new directory with one more data file and two hidden ones Hive skips
    twins = spark_twins("location_stats", partitioned=False)
    for copy in (twins.hive, twins.console):
        target = copy.elsewhere / "t"
        shutil.copytree(copy.root, target)
        data = next(f for f in sorted(target.iterdir()) if f.suffix == ".parquet")
        shutil.copyfile(data, target / "extra-copy.parquet")
        (target / "_SUCCESS").write_bytes(b"")
        (target / ".hidden").write_bytes(b"x" * 50)
    orphans_before = orphans()
    before = metastore_image(twins.console)

    # when
    hive_ql(f"ALTER TABLE {twins.hive.qualified} SET LOCATION 'file:{twins.hive.elsewhere / 't'}'")
    preview = alter_preview_statement(
        metastore=spark_metastore,
        statement=f"ALTER TABLE {twins.console.qualified} SET LOCATION 'file:{twins.console.elsewhere / 't'}'",
    )
    alter_execute(preview=preview, actor="hive-witness", source=Execution.Source.CLI, reason="witness")

    # then
    hive, console = metastore_image(twins.hive), metastore_image(twins.console)
    found = differences(hive, console)
    assert found == {("params", key): (hive["params"][key], ABSENT) for key in HIVE_CLIENT_STAMPS}
    assert console["params"]["numFiles"] != before["params"].get("numFiles")
    assert {k: dict(preview.after.params)[k] for k in ("numFiles", "totalSize")} == {
        k: console["params"][k] for k in ("numFiles", "totalSize")
    }
    assert orphans() == orphans_before
    assert read_rows(spark, twins.console) == read_rows(spark, twins.hive)


def test_renaming_a_column_of_a_bucketed_data_source_table_is_refused_and_spark_keeps_reading(spark, spark_metastore):
    """CHANGE id ident int on a bucketed, sorted USING parquet table: the files hold ``id``, so Spark would read the
    renamed column as NULL (issue 25, case 9); the console refuses it, naming why, and Spark reads the same rows."""
    # given
    table = "diff_console.bucketed"
    spark.sql(
        f"CREATE TABLE {table} (id int, name string) USING parquet CLUSTERED BY (id) SORTED BY (id) INTO 2 BUCKETS"
    )
    spark.sql(f"INSERT INTO {table} VALUES (1, 'a'), (2, 'b')")

    # when
    preview = alter_preview_statement(metastore=spark_metastore, statement=f"ALTER TABLE {table} CHANGE id ident int")
    with pytest.raises(ApplicationError) as refused:
        alter_execute(preview=preview, actor="hive-witness", source=Execution.Source.CLI, reason="witness")
    spark.sql(f"REFRESH TABLE {table}")

    # then
    assert [b.code for b in preview.blockers] == ["spark_by_name_columns"]
    assert "read NULL" in refused.value.message
    assert sorted(tuple(r) for r in spark.sql(f"SELECT name, id FROM {table}").collect()) == [("a", 1), ("b", 2)]


# Helpers ----------------------------------------------------------------------------------------------------------


def metastore_image_of(qualified: str) -> dict:
    """The normalized rows of a table Hive's Driver created (no twin folders to mask)."""
    database, name = qualified.split(".")
    nowhere = Path("/nonexistent")
    return metastore_image(TableCopy(database, name, name, nowhere, nowhere, nowhere))


def columns_of(qualified: str) -> list[tuple]:
    return metastore_image_of(qualified)["storage"]["columns"]
