"""
Why the console refuses ``CREATE VIEW`` and ``ALTER VIEW … AS`` (README, "Views"): what Hive 2.3's own Driver
(``SemanticAnalyzer`` with its ``UnparseTranslator``) stores as ``VIEW_EXPANDED_TEXT`` for a few views over a table
created by Spark's Hive client. The expanded text is the product of Hive's analysis against the metastore: ``*``
becomes the table's columns as they are now, every table is named `` `db`.`table` ``, every column qualified with its
table or alias and back-quoted, names folded to lower case. The console refuses the same statements, naming that
reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connections

from operations.ddl.errors import DdlParseError
from operations.ddl.parser import parse_alter

pytest.importorskip("pyspark")

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True, databases=["default", "spark_pg"])]

DB = "view_text_witness"
VIEWS = {
    "star": f"CREATE VIEW {DB}.star AS SELECT * FROM {DB}.t",
    "qualified": f"CREATE VIEW {DB}.qualified AS SELECT t.id, `Name` FROM {DB}.t WHERE amount > 1",
    "aliases": f"CREATE VIEW {DB}.aliases AS SELECT x.id AS ident, upper(x.name) n, amount * 2 FROM {DB}.t x",
}


@pytest.fixture
def viewed(spark: Any) -> Iterator[None]:
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")
    spark.sql(f"CREATE DATABASE {DB}")
    spark.sql(f"CREATE TABLE {DB}.t (id int, Name string, amount double) STORED AS PARQUET")
    yield
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")


def texts(name: str) -> tuple[str, str]:
    with connections["spark_pg"].cursor() as cursor:
        cursor.execute(
            'SELECT t."VIEW_ORIGINAL_TEXT", t."VIEW_EXPANDED_TEXT" FROM "TBLS" t JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
            'WHERE d."NAME" = %s AND t."TBL_NAME" = %s',
            [DB, name],
        )
        original, expanded = cursor.fetchone()
    return original, expanded


def test_hives_driver_expands_view_texts_and_the_console_refuses_to_write_them(hive_ql: Any, viewed: None) -> None:
    # when
    for statement in VIEWS.values():
        hive_ql.using(DB)(statement)

    # then: the original text is the query (back-quotes dropped); the expanded one Hive's own rewrite of it
    written = {name: texts(name) for name in VIEWS}
    assert written == EXPECTED
    assert all(original != expanded for original, expanded in written.values())
    for statement in VIEWS.values():
        with pytest.raises(DdlParseError, match="VIEW_EXPANDED_TEXT"):
            parse_alter(statement)


# What Hive 2.3.10's Driver wrote (VIEW_ORIGINAL_TEXT, VIEW_EXPANDED_TEXT): `*` expanded into the table's columns,
# `Name` folded to `name`, every column qualified with its table or alias, every name back-quoted, the database named.
EXPECTED = {
    "star": (
        f"SELECT * FROM {DB}.t",
        f"SELECT `t`.`id`, `t`.`name`, `t`.`amount` FROM `{DB}`.`t`",
    ),
    "qualified": (
        f"SELECT t.id, Name FROM {DB}.t WHERE amount > 1",
        f"SELECT `t`.`id`, `t`.`name` FROM `{DB}`.`t` WHERE `t`.`amount` > 1",
    ),
    "aliases": (
        f"SELECT x.id AS ident, upper(x.name) n, amount * 2 FROM {DB}.t x",
        f"SELECT `x`.`id` AS `ident`, upper(`x`.`name`) `n`, `x`.`amount` * 2 FROM `{DB}`.`t` `x`",
    ),
}
