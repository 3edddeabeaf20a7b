"""
Issue 27's proof for CREATE TABLE: the console writes the rows Hive 2.3's own Driver writes for the same statement.

Each test runs one CREATE TABLE through Hive's Driver (``hive_ql``: HiveQL parser → SemanticAnalyzer → DDLTask →
HMSHandler.create_table_core → ObjectStore, in Spark's JVM) in ``diff_hive`` and through the console
(``alter_preview_statement`` + ``alter_execute``, which commit) in ``diff_console``, on the same ``spark_pg``
metastore, then compares the two tables' normalized rows (``tests/witness/differential.py``: ids, creation times,
``transient_lastDdlTime`` and each copy's own location prefix left out) and their folders, and checks that neither
side leaves orphan rows. Spark's Hive client then inserts into the console's table and reads the rows back.

The one difference, by design: the owner. Hive writes its session user (here the OS user running the JVM); the
console writes the requester, ``hive`` when none is named (a statement run from the command line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from operations.models import Execution
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.revert import revert_preview
from tests.fixtures.spark import DIFF_DATABASES, TableCopy
from tests.witness.differential import differences, metastore_image, orphans, tree_image

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True, databases=["default", "spark_pg"])]

# name -> (statement: {table} is each copy's, {outside} its own folder outside the warehouse; a row Spark inserts)
STATEMENTS: dict[str, tuple[str, str]] = {
    "ct_text": ("CREATE TABLE {table} (id int COMMENT 'the id', name string) COMMENT 'a table' STORED AS TEXTFILE",
                "(1, 'a')"),
    "ct_orc": ("CREATE TABLE {table} (id int, v decimal(10,2)) PARTITIONED BY (dt string COMMENT 'day') STORED AS "
               "ORC TBLPROPERTIES ('team'='x')", "PARTITION (dt='2024-01-01') VALUES (1, 2.50)"),
    "ct_parquet": ("CREATE TABLE {table} (id bigint, m map<string,int>) STORED AS PARQUET", "(1, map('k', 1))"),
    "ct_avro": ("CREATE TABLE {table} (id int COMMENT 'c', s string) STORED AS AVRO", "(1, 'a')"),
    "ct_seq": ("CREATE TABLE {table} (id int) STORED AS SEQUENCEFILE", "(1)"),
    "ct_rc": ("CREATE TABLE {table} (id int) STORED AS RCFILE", "(1)"),
    "ct_delim": ("CREATE TABLE {table} (id int, s string) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' "
                 "ESCAPED BY '\\\\' COLLECTION ITEMS TERMINATED BY '|' MAP KEYS TERMINATED BY ':' "
                 "LINES TERMINATED BY '\\n' NULL DEFINED AS 'NA'", "(1, 'a,b')"),
    "ct_ctrl": ("CREATE TABLE {table} (id int, s string) ROW FORMAT DELIMITED FIELDS TERMINATED BY '\\001'",
                "(1, 'a')"),
    "ct_bucket": ("CREATE TABLE {table} (id int, s string) CLUSTERED BY (id) SORTED BY (s DESC, id) INTO 4 BUCKETS "
                  "STORED AS ORC", ""),
    "ct_prefix": ("CREATE TABLE {table} (id int, s string) CLUSTERED BY (id) SORTED BY (id) INTO 2 BUCKETS", ""),
    "ct_ext": ("CREATE EXTERNAL TABLE {table} (id int) STORED AS PARQUET LOCATION '{outside}'", "(1)"),
    "ct_acid": ("CREATE TABLE {table} (id int) CLUSTERED BY (id) INTO 2 BUCKETS STORED AS ORC "
                "TBLPROPERTIES ('Transactional'='TRUE')", ""),
    "ct_not_acid": ("CREATE TABLE {table} (id int) STORED AS ORC TBLPROPERTIES ('transactional'='false')", "(1)"),
    "ct_serde": ("CREATE TABLE {table} (a string) ROW FORMAT SERDE 'org.apache.hadoop.hive.serde2.OpenCSVSerde' "
                 "WITH SERDEPROPERTIES ('separatorChar'=',') STORED AS INPUTFORMAT "
                 "'org.apache.hadoop.mapred.TextInputFormat' OUTPUTFORMAT "
                 "'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'", "('a')"),
}  # fmt: skip
LIKE = {
    "ct_like": ("ct_like_src", "CREATE TABLE {table} LIKE {source}"),
    "ct_like_ext": ("ct_like_src", "CREATE EXTERNAL TABLE {table} LIKE {source} LOCATION '{outside}'"),
}
LIKE_SOURCE = ("CREATE TABLE {table} (id int, s string) PARTITIONED BY (dt string) CLUSTERED BY (id) INTO 2 "
               "BUCKETS STORED AS ORC TBLPROPERTIES ('team'='x')")  # fmt: skip
OWNER = {("table", "owner"): None}  # filled with (Hive's session user, the console's default) below


def _copies(name: str, spark_tmp: Path) -> tuple[TableCopy, TableCopy]:
    warehouse = Path(settings.SPARK_METASTORE_CONFIG.warehouse)
    hive, console = (
        TableCopy(database, name, name, warehouse, outside=spark_tmp / "outside" / database / name,
                  elsewhere=spark_tmp / "elsewhere" / database / name)
        for database in DIFF_DATABASES
    )  # fmt: skip
    return hive, console


def _for(statement: str, copy: TableCopy, source: str = "") -> str:
    return statement.format(table=copy.qualified, outside=f"file:{copy.outside}",
                            source=f"{copy.database}.{source}")  # fmt: skip


def create_both(hive_ql: Any, metastore: Any, statement: str, hive: TableCopy, console: TableCopy,
                source: str = "") -> Execution:  # fmt: skip
    """The statement through Hive's Driver on the Hive copy and through the console on the other."""
    hive_ql(_for(statement, hive, source))
    preview = alter_preview_statement(metastore=metastore, statement=_for(statement, console, source))
    assert not preview.blockers, preview.blockers
    execution = alter_execute(preview=preview, actor="spark-witness", source=Execution.Source.CLI, reason="witness")
    assert execution.state == Execution.State.SUCCEEDED
    return execution


def assert_same_as_hive(hive: TableCopy, console: TableCopy) -> None:
    hive_image, console_image = metastore_image(hive), metastore_image(console)
    assert hive_image and console_image
    found = differences(hive_image, console_image)
    assert set(found) <= set(OWNER), found
    assert found.get(("table", "owner"), (None, "hive"))[1] == "hive"
    assert differences(tree_image(hive), tree_image(console)) == {}


@pytest.mark.parametrize("name", STATEMENTS)
def test_create_table_writes_what_hives_driver_writes(spark, hive_ql, spark_metastore, _diff_databases, spark_tmp,
                                                      name):  # fmt: skip
    """The same statement through Hive's Driver and the console: equal rows (the owner aside) and folders; Spark's
    Hive client inserts into the console's table and reads the row back."""
    # given
    hive, console = _copies(name, spark_tmp)
    statement, row = STATEMENTS[name]
    orphans_before = orphans()

    # when
    create_both(hive_ql, spark_metastore, statement, hive, console)

    # then
    assert_same_as_hive(hive, console)
    assert orphans() == orphans_before
    if row:
        spark.sql(f"INSERT INTO {console.qualified} {row if row.startswith('PARTITION') else 'VALUES ' + row}")
        assert len(spark.sql(f"SELECT * FROM {console.qualified}").collect()) == 1


@pytest.mark.parametrize("name", LIKE)
def test_create_table_like_writes_what_hives_driver_writes(spark, hive_ql, spark_metastore, _diff_databases,
                                                           spark_tmp, name):  # fmt: skip
    """LIKE copies the source's columns, keys and storage and none of its properties, as Hive's Driver does."""
    # given
    source, statement = LIKE[name]
    for copy in _copies(source, spark_tmp):
        hive_ql(f"CREATE TABLE IF NOT EXISTS {copy.qualified} {LIKE_SOURCE.split('{table}', 1)[1]}")
    hive, console = _copies(name, spark_tmp)

    # when
    create_both(hive_ql, spark_metastore, statement, hive, console, source)

    # then
    assert_same_as_hive(hive, console)


def test_a_reverted_create_leaves_the_metastore_and_folders_as_before(spark, hive_ql, spark_metastore,
                                                                      _diff_databases, spark_tmp):  # fmt: skip
    """The revert deletes exactly the created rows and the directory the console made: no orphans, no folder."""
    # given
    _hive, console = _copies("ct_reverted", spark_tmp)
    orphans_before = orphans()
    preview = alter_preview_statement(metastore=spark_metastore, statement=_for(STATEMENTS["ct_orc"][0], console))
    execution = alter_execute(preview=preview, actor="spark-witness", source=Execution.Source.CLI)

    # when
    alter_execute(preview=revert_preview(execution=execution), actor="spark-witness", source=Execution.Source.CLI)

    # then
    assert metastore_image(console) == {}
    assert orphans() == orphans_before
    assert tree_image(console)["tables"] == []
