"""
The ALTER TABLE parser: every supported statement form normalizes to one exact DDL text (golden tests), the
normalized text parses back to the same spec, and bad input fails with the position, line and column of the
problem and the list of supported statements.
"""

from __future__ import annotations

import pytest

from catalog_admin.errors import ErrorCode
from operations.ddl.parser import SUPPORTED_STATEMENTS, DdlParseError, parse_alter
from operations.specs import (
    AddColumns,
    ChangeColumn,
    ColumnDef,
    DropPartitions,
    PartitionPredicate,
    RenamePartition,
    RenameTable,
    ReplaceColumns,
    SetLocation,
    SetSerdeProperties,
    TableRef,
    hive_column_type,
    spec_from_dict,
)

# (statement as typed, its normalized DDL)
GOLDEN = [
    pytest.param(
        "create external table if not exists S.T (Id INT comment 'k', m map<string , int>) comment 'c' "
        "partitioned by (dt string) clustered by (id) sorted by (id desc) into 2 buckets "
        "row format delimited fields terminated by '\\001' null defined as '' stored as orc "
        "location 'file:/w/t' tblproperties ('a'='b')",
        "CREATE EXTERNAL TABLE IF NOT EXISTS `s`.`t` (`id` int COMMENT 'k', `m` map<string,int>) COMMENT 'c' "
        "PARTITIONED BY (`dt` string) CLUSTERED BY (`id`) SORTED BY (`id` DESC) INTO 2 BUCKETS "
        "ROW FORMAT DELIMITED FIELDS TERMINATED BY '\\001' NULL DEFINED AS '' STORED AS ORC LOCATION 'file:/w/t' "
        "TBLPROPERTIES ('a'='b')",
        id="create-table",
    ),
    pytest.param(
        "alter table archive exchange partition (DT='2024-01-01', hour=1) with table Sales.Orders",
        "ALTER TABLE `default`.`archive` EXCHANGE PARTITION (`dt`='2024-01-01', `hour`='1') WITH TABLE "
        "`sales`.`orders`",
        id="exchange-partition",
    ),
    pytest.param(
        "CREATE TABLE t LIKE sales.orders LOCATION '/x'",
        "CREATE TABLE `default`.`t` LIKE `sales`.`orders` LOCATION '/x'",
        id="create-table-like",
    ),
    pytest.param(
        "alter table sales.orders add if not exists partition (dt='2024-05-01', hour=1) location '/d/x' "
        "partition (DT='2024-05-02', hour=2);",
        "ALTER TABLE `sales`.`orders` ADD IF NOT EXISTS PARTITION (`dt`='2024-05-01', `hour`='1') LOCATION '/d/x' "
        "PARTITION (`dt`='2024-05-02', `hour`='2')",
        id="add-partitions",
    ),
    pytest.param(
        "msck repair table sales.orders drop partitions",
        "MSCK REPAIR TABLE `sales`.`orders` DROP PARTITIONS",
        id="msck-drop",
    ),
    pytest.param(
        "alter view marketing.v rename to marketing.v2",
        "ALTER VIEW `marketing`.`v` RENAME TO `marketing`.`v2`",
        id="view-rename",
    ),
    pytest.param(
        "ALTER VIEW v UNSET TBLPROPERTIES IF EXISTS ('a')",
        "ALTER VIEW `default`.`v` UNSET TBLPROPERTIES IF EXISTS ('a')",
        id="view-unset-properties",
    ),
    pytest.param(
        "ALTER TABLE sales.orders RENAME TO sales.orders_v2",
        "ALTER TABLE `sales`.`orders` RENAME TO `sales`.`orders_v2`",
        id="rename-qualified",
    ),
    pytest.param(
        "alter table Orders rename to Marketing.Orders2;",
        "ALTER TABLE `default`.`orders` RENAME TO `marketing`.`orders2`",
        id="rename-lower-case-keywords-default-database-semicolon",
    ),
    pytest.param(
        "ALTER TABLE `my db`.`t``x` RENAME TO `t 2`",
        "ALTER TABLE `my db`.`t``x` RENAME TO `default`.`t 2`",
        id="rename-quoted-identifiers",
    ),
    pytest.param(
        "ALTER TABLE t ADD COLUMNS (a INT COMMENT 'it\\'s', b map<string , array<int>>) CASCADE",
        "ALTER TABLE `default`.`t` ADD COLUMNS (`a` int COMMENT 'it\\'s', `b` map<string,array<int>>) CASCADE",
        id="add-columns-cascade",
    ),
    pytest.param(
        "ALTER TABLE t ADD COLUMNS (A decimal( 10 , 2 )) RESTRICT",
        "ALTER TABLE `default`.`t` ADD COLUMNS (`a` decimal(10,2))",
        id="add-columns-restrict",
    ),
    pytest.param(
        "ALTER TABLE t ADD COLUMNS (u uniontype<int, string>, s array<struct<a:int,b:varchar(3)>>)",
        "ALTER TABLE `default`.`t` ADD COLUMNS (`u` uniontype<int,string>, `s` array<struct<a:int,b:varchar(3)>>)",
        id="add-columns-nested-types",
    ),
    pytest.param(
        "ALTER TABLE t ADD COLUMNS (a INTEGER, b Numeric(10, 2), c map<integer,array<NUMERIC>>, "
        "d struct<integer:integer>)",
        "ALTER TABLE `default`.`t` ADD COLUMNS (`a` int, `b` decimal(10,2), `c` map<int,array<decimal(10,0)>>, "
        "`d` struct<integer:int>)",
        id="add-columns-type-synonyms",
    ),
    pytest.param(
        "ALTER TABLE t REPLACE COLUMNS (a struct<x:int,y:string>, `b c` varchar(10))",
        "ALTER TABLE `default`.`t` REPLACE COLUMNS (`a` struct<x:int,y:string>, `b c` varchar(10))",
        id="replace-columns",
    ),
    pytest.param(
        "ALTER TABLE t REPLACE COLUMNS (a int) CASCADE",
        "ALTER TABLE `default`.`t` REPLACE COLUMNS (`a` int) CASCADE",
        id="replace-columns-cascade",
    ),
    pytest.param(
        "ALTER TABLE t CHANGE c d bigint COMMENT 'x' AFTER a CASCADE",
        "ALTER TABLE `default`.`t` CHANGE COLUMN `c` `d` bigint COMMENT 'x' AFTER `a` CASCADE",
        id="change-after-cascade",
    ),
    pytest.param(
        "ALTER TABLE t CHANGE COLUMN c c INT FIRST",
        "ALTER TABLE `default`.`t` CHANGE COLUMN `c` `c` int FIRST",
        id="change-first",
    ),
    pytest.param(
        "ALTER TABLE t CHANGE c d timestamp with local time zone",
        "ALTER TABLE `default`.`t` CHANGE COLUMN `c` `d` timestamp with local time zone",
        id="change-multi-word-type",
    ),
    pytest.param(
        "ALTER TABLE t SET TBLPROPERTIES ('a'='1', \"b\"='x\\'y')",
        "ALTER TABLE `default`.`t` SET TBLPROPERTIES ('a'='1', 'b'='x\\'y')",
        id="set-tblproperties",
    ),
    pytest.param(
        "ALTER TABLE t UNSET TBLPROPERTIES ('a')",
        "ALTER TABLE `default`.`t` UNSET TBLPROPERTIES ('a')",
        id="unset-tblproperties",
    ),
    pytest.param(
        "ALTER TABLE t UNSET TBLPROPERTIES IF EXISTS ('a', 'b')",
        "ALTER TABLE `default`.`t` UNSET TBLPROPERTIES IF EXISTS ('a', 'b')",
        id="unset-tblproperties-if-exists",
    ),
    pytest.param(
        "ALTER TABLE t SET SERDEPROPERTIES ('field.delim'='\\t', 'path'='C:\\\\x')",
        "ALTER TABLE `default`.`t` SET SERDEPROPERTIES ('field.delim'='\\t', 'path'='C:\\\\x')",
        id="set-serdeproperties-escapes",
    ),
    pytest.param(
        "ALTER TABLE t SET OWNER ROLE admins",
        "ALTER TABLE `default`.`t` SET OWNER ROLE `admins`",
        id="set-owner-role",
    ),
    pytest.param(
        "-- who owns it\nALTER TABLE t SET OWNER user `bob`",
        "ALTER TABLE `default`.`t` SET OWNER USER `bob`",
        id="set-owner-user-after-comment",
    ),
    pytest.param(
        "ALTER TABLE t SET OWNER GROUP etl",
        "ALTER TABLE `default`.`t` SET OWNER GROUP `etl`",
        id="set-owner-group",
    ),
    pytest.param(
        "ALTER TABLE t SET LOCATION 'file:/x'",
        "ALTER TABLE `default`.`t` SET LOCATION 'file:/x'",
        id="set-location-table",
    ),
    pytest.param(
        "ALTER TABLE t PARTITION (dt='2024-01-01', hour=3) SET LOCATION 'file:/y'",
        "ALTER TABLE `default`.`t` PARTITION (`dt`='2024-01-01', `hour`='3') SET LOCATION 'file:/y'",
        id="set-location-partition",
    ),
    pytest.param(
        "ALTER TABLE t PARTITION LOCATIONS REPLACE PREFIX 'hdfs://a' WITH 'hdfs://b'",
        "ALTER TABLE `default`.`t` PARTITION LOCATIONS REPLACE PREFIX 'hdfs://a' WITH 'hdfs://b'",
        id="rewrite-prefix",
    ),
    pytest.param(
        "ALTER TABLE t PARTITION (dt='2024-01-01', hour=3) RENAME TO PARTITION (dt='2024-01-05', hour=3)",
        "ALTER TABLE `default`.`t` PARTITION (`dt`='2024-01-01', `hour`='3') "
        "RENAME TO PARTITION (`dt`='2024-01-05', `hour`='3')",
        id="rename-partition",
    ),
    pytest.param(
        "ALTER TABLE t DROP PARTITION (dt='2024-01-01')",
        "ALTER TABLE `default`.`t` DROP PARTITION (`dt`='2024-01-01')",
        id="drop-partition",
    ),
    pytest.param(
        "ALTER TABLE t DROP IF EXISTS PARTITION (dt<'2024-01-02', hour>=6), PARTITION (hour != 3) PURGE",
        "ALTER TABLE `default`.`t` DROP IF EXISTS PARTITION (`dt`<'2024-01-02', `hour`>='6'), "
        "PARTITION (`hour`<>'3') PURGE",
        id="drop-partitions-ranges",
    ),
    pytest.param(
        "ALTER TABLE t DROP PARTITION (hour <= -1, hour > 10, hour <> 5)",
        "ALTER TABLE `default`.`t` DROP PARTITION (`hour`<='-1', `hour`>'10', `hour`<>'5')",
        id="drop-partition-numbers",
    ),
    pytest.param(
        "alter table t partition (dt='2024-01-01', hour=6) compact 'MAJOR';",
        "ALTER TABLE `default`.`t` PARTITION (`dt`='2024-01-01', `hour`='6') COMPACT 'major'",
        id="compact-partition",
    ),
    pytest.param("ALTER TABLE db.t COMPACT 'minor'", "ALTER TABLE `db`.`t` COMPACT 'minor'", id="compact-table"),
    pytest.param(
        "alter table db.t abort transactions 12 7 12", "ALTER TABLE `db`.`t` ABORT TRANSACTIONS 7 12", id="abort-txns"
    ),
    pytest.param(
        "analyze table db.t partition (dt>='2024', hour) compute statistics for columns a, b",
        "ANALYZE TABLE `db`.`t` PARTITION (`dt`>='2024') COMPUTE STATISTICS FOR COLUMNS `a`, `b`",
        id="analyze-columns",
    ),
    pytest.param(
        "ANALYZE TABLE t COMPUTE STATISTICS NOSCAN WITH ('only_stale'='true')",
        "ANALYZE TABLE `default`.`t` COMPUTE STATISTICS NOSCAN WITH ('only_stale'='true')",
        id="analyze-noscan-stale",
    ),
    pytest.param(
        "ALTER TABLE t SET LOCATION 's3a://lake/t' WITH DATA",
        "ALTER TABLE `default`.`t` SET LOCATION 's3a://lake/t' WITH DATA",
        id="relocate-table",
    ),
    pytest.param(
        "alter table t partition (dt < '2024-01-02', hour >= 6) set location 'file:/new' with data",
        "ALTER TABLE `default`.`t` PARTITION (`dt`<'2024-01-02', `hour`>='6') SET LOCATION 'file:/new' WITH DATA",
        id="relocate-partition-range",
    ),
    pytest.param(
        "ALTER TABLE t PARTITION (dt='2024-01-01') SET LOCATION 'file:/new' WITH DATA",
        "ALTER TABLE `default`.`t` PARTITION (`dt`='2024-01-01') SET LOCATION 'file:/new' WITH DATA",
        id="relocate-partition-exact",
    ),
    pytest.param("alter table db.t concatenate", "ALTER TABLE `db`.`t` CONCATENATE", id="concatenate-table"),
    pytest.param(
        "ALTER TABLE t PARTITION (dt <= '2024-01-02') CONCATENATE",
        "ALTER TABLE `default`.`t` PARTITION (`dt`<='2024-01-02') CONCATENATE",
        id="concatenate-partition-range",
    ),
    pytest.param(
        "ALTER TABLE t CONCATENATE WITH ('target_file_bytes'='1048576', 'min_files'='20')",
        "ALTER TABLE `default`.`t` CONCATENATE WITH ('min_files'='20', 'target_file_bytes'='1048576')",
        id="concatenate-options",
    ),
    pytest.param("drop table if exists s.t purge;", "DROP TABLE IF EXISTS `s`.`t` PURGE", id="drop-table"),
    pytest.param("DROP VIEW v", "DROP VIEW `default`.`v`", id="drop-view"),
    pytest.param(
        "alter table t set fileformat parquet with data",
        "ALTER TABLE `default`.`t` SET FILEFORMAT PARQUET WITH DATA",
        id="convert-table",
    ),
    pytest.param(
        "ALTER TABLE t PARTITION (dt='2024-01-01') SET FILEFORMAT orc WITH DATA",
        "ALTER TABLE `default`.`t` PARTITION (`dt`='2024-01-01') SET FILEFORMAT ORC WITH DATA",
        id="convert-partition",
    ),
    pytest.param(
        "alter table t set fileformat orc", "ALTER TABLE `default`.`t` SET FILEFORMAT ORC", id="set-fileformat"
    ),
    pytest.param(
        "ALTER TABLE t PARTITION (dt='1') SET FILEFORMAT avro",
        "ALTER TABLE `default`.`t` PARTITION (`dt`='1') SET FILEFORMAT AVRO",
        id="set-fileformat-partition",
    ),
    pytest.param(
        "create schema if not exists Lab comment 'x' location '/w/lab.db' with dbproperties ('a'='1')",
        "CREATE DATABASE IF NOT EXISTS `lab` COMMENT 'x' LOCATION '/w/lab.db' WITH DBPROPERTIES ('a'='1')",
        id="create-database",
    ),
    pytest.param(
        "ALTER DATABASE lab SET OWNER ROLE admins", "ALTER DATABASE `lab` SET OWNER ROLE `admins`", id="alter-database"
    ),
    pytest.param("drop database if exists lab;", "DROP DATABASE IF EXISTS `lab` RESTRICT", id="drop-database"),
    pytest.param("truncate table s.t;", "TRUNCATE TABLE `s`.`t`", id="truncate"),
    pytest.param(
        "TRUNCATE TABLE t PARTITION (dt='2024-01-01')",
        "TRUNCATE TABLE `default`.`t` PARTITION (`dt`='2024-01-01')",
        id="truncate-partial-spec",
    ),
    pytest.param("ALTER TABLE t PURGE TRASH", "ALTER TABLE `default`.`t` PURGE TRASH", id="purge-trash"),
    pytest.param(
        "alter table t purge trash older than 30 days",
        "ALTER TABLE `default`.`t` PURGE TRASH OLDER THAN 30 DAYS",
        id="purge-trash-older",
    ),
]


@pytest.mark.parametrize(("statement", "normalized"), GOLDEN)
def test_statement_normalizes_to_golden_ddl(statement: str, normalized: str) -> None:
    """Every supported form renders one exact normalized statement."""
    # given / when
    spec = parse_alter(statement)

    # then
    assert spec.to_ddl() == normalized


@pytest.mark.parametrize(("statement", "normalized"), GOLDEN)
def test_normalized_ddl_parses_back_to_the_same_spec(statement: str, normalized: str) -> None:
    """The normalized statement means exactly what was typed."""
    # given
    spec = parse_alter(statement)

    # when
    again = parse_alter(normalized)

    # then
    assert again == spec


def test_every_supported_statement_form_has_a_golden_case() -> None:
    """Each statement of the supported list is covered above (the kinds of the golden specs)."""
    # given
    kinds = {type(parse_alter(case.values[0])).kind for case in GOLDEN}

    # when / then
    assert (
        len(SUPPORTED_STATEMENTS) == 38
    )  # with COMPACT, ABORT TRANSACTIONS, ALTER VIEW's forms, FILEFORMAT, WITH DATA, CREATE TABLE (and LIKE), EXCHANGE,
    # CREATE/ALTER/DROP DATABASE, ADD PARTITION, MSCK, DROP TABLE / VIEW, TRUNCATE, PURGE TRASH, ANALYZE; 5
    # access-control forms (GRANT/REVOKE, roles: their golden cases are tests/operations/ddl/test_privileges.py's)
    assert kinds == {
        "drop_table",
        "analyze",
        "relocate",
        "compact_files",
        "convert_format",
        "set_fileformat",
        "rename_table",
        "add_columns",
        "replace_columns",
        "change_column",
        "set_tblproperties",
        "unset_tblproperties",
        "set_serdeproperties",
        "set_owner",
        "set_location",
        "rewrite_partition_locations",
        "rename_partition",
        "drop_partitions",
        "compact",
        "abort_transactions",
        "create_table",
        "exchange_partition",
        "create_database",
        "alter_database",
        "drop_database",
        "add_partitions",
        "msck_repair",
        "truncate_table",
        "purge_trash",
    }


def test_parsed_specs_hold_the_values() -> None:
    """Names are lower-cased, values unescaped, positions and options kept."""
    # given / when / then
    assert parse_alter("ALTER TABLE Sales.Orders RENAME TO Orders2", default_database="ops") == RenameTable(
        target=TableRef("sales", "orders"), new=TableRef("ops", "orders2")
    )
    assert parse_alter("ALTER TABLE t ADD COLUMNS (Note STRING COMMENT 'a\\nb')") == AddColumns(
        target=TableRef("default", "t"), columns=(ColumnDef("note", "string", "a\nb"),)
    )
    assert parse_alter("ALTER TABLE t CHANGE a B decimal(5,1) AFTER Z") == ChangeColumn(
        target=TableRef("default", "t"), old_name="a", column=ColumnDef("b", "decimal(5,1)"), after="Z"
    )
    assert parse_alter("ALTER TABLE t SET SERDEPROPERTIES ('k'='\\t')") == SetSerdeProperties(
        target=TableRef("default", "t"), properties=(("k", "\t"),)
    )
    assert parse_alter("ALTER TABLE t PARTITION (DT='d', Hour=3) SET LOCATION 'x'") == SetLocation(
        target=TableRef("default", "t"), location="x", partition=(("dt", "d"), ("hour", "3"))
    )
    assert parse_alter("ALTER TABLE t PARTITION (dt='a') RENAME TO PARTITION (dt='b')") == RenamePartition(
        target=TableRef("default", "t"), partition=(("dt", "a"),), new_partition=(("dt", "b"),)
    )
    assert parse_alter("ALTER TABLE t DROP PARTITION (hour != 3)") == DropPartitions(
        target=TableRef("default", "t"), specs=((PartitionPredicate("hour", "<>", "3"),),)
    )


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        ("integer", "int"),
        ("INTEGER", "int"),
        ("numeric", "decimal"),
        ("NUMERIC(10,2)", "decimal(10,2)"),
        ("array<integer>", "array<int>"),
        ("map<string,numeric(5,1)>", "map<string,decimal(5,1)>"),
        ("struct<integer:integer,numeric : string>", "struct<integer:int,numeric : string>"),
        ("int", "int"),
        ("bigint", "bigint"),
        ("my_integer", "my_integer"),
        ("integers", "integers"),
    ],
)
def test_type_synonyms_become_the_names_hive_stores(written: str, stored: str) -> None:
    """INTEGER is int and NUMERIC is decimal wherever they name a type (not a struct field), parameters kept."""
    # given / when / then
    assert hive_column_type(written) == stored


def test_parsed_and_structured_columns_carry_the_hive_type_names() -> None:
    """The parser and a structured operation build the same column definitions from INTEGER and NUMERIC."""
    # given
    operation = {
        "kind": "replace_columns",
        "target": {"database": "default", "table": "t"},
        "columns": [{"name": "a", "type": "INTEGER"}, {"name": "b", "type": "numeric(10,2)", "comment": "x"}],
    }

    # when
    parsed = parse_alter("ALTER TABLE t REPLACE COLUMNS (a INTEGER, b numeric(10,2) COMMENT 'x')")
    structured = spec_from_dict(operation)

    # then
    expected = ReplaceColumns(
        target=TableRef("default", "t"), columns=(ColumnDef("a", "int"), ColumnDef("b", "decimal(10,2)", "x"))
    )
    assert parsed == structured == expected


# (bad statement, line, column, what the message says)
BAD = [
    pytest.param("", 1, 1, "the statement is empty", id="empty"),
    pytest.param("   \n  ", 2, 3, "the statement is empty", id="blank"),
    pytest.param("ALTER", 1, 6, "expected TABLE, found the end of the statement", id="alter-alone"),
    pytest.param(
        "ALTER TABLE t DROP COLUMN c",
        1,
        15,
        "Hive has no DROP COLUMN: REPLACE COLUMNS (…) with the columns to keep drops the others",
        id="not-hive-drop-column",
    ),
    pytest.param("ALTER TABLE ;", 1, 13, "expected a name, found ';'", id="no-table"),
    pytest.param(
        "ALTER TABLE t",
        1,
        14,
        "expected RENAME, ADD COLUMNS, REPLACE COLUMNS, CHANGE, SET, UNSET, PARTITION, DROP, COMPACT, CONCATENATE, "
        "ABORT, EXCHANGE or PURGE TRASH, found the end of the statement",
        id="no-action",
    ),
    pytest.param("ALTER TABLE t RENAME t2", 1, 22, "expected TO, found 't2'", id="rename-without-to"),
    pytest.param("ALTER TABLE t ADD COLUMNS (a int", 1, 33, "expected ')', found the end", id="unclosed-columns"),
    pytest.param("ALTER TABLE t ADD COLUMNS ()", 1, 28, "expected a name, found ')'", id="no-columns"),
    pytest.param("ALTER TABLE t ADD COLUMNS (a int,)", 1, 34, "expected a name, found ')'", id="trailing-comma"),
    pytest.param("ALTER TABLE t ADD COLUMNS (a 'int')", 1, 30, "expected a column type, found ''int''", id="type"),
    pytest.param("ALTER TABLE t ADD COLUMNS (a int>)", 1, 33, "unbalanced brackets in column type", id="brackets"),
    pytest.param("ALTER TABLE t CHANGE a b", 1, 25, "expected a column type, found the end", id="change-no-type"),
    pytest.param(
        "ALTER TABLE t SET FOO",
        1,
        19,
        "expected TBLPROPERTIES, SERDEPROPERTIES, OWNER or LOCATION after SET, found 'FOO'",
        id="set-what",
    ),
    pytest.param(
        "ALTER TABLE t\n  SET OWNER PERSON x",
        2,
        13,
        "expected USER, ROLE or GROUP after SET OWNER, found 'PERSON'",
        id="owner-kind-second-line",
    ),
    pytest.param("ALTER TABLE t SET TBLPROPERTIES ('a'=1)", 1, 38, "expected a quoted string, found '1'", id="value"),
    pytest.param(
        "ALTER TABLE t\nSET LOCATION 'file:/x'\n  extra", 3, 3, "unexpected 'extra' after the end", id="trailing"
    ),
    pytest.param("ALTER TABLE t SET LOCATION 'x' ;;", 1, 33, "unexpected ';' after the end", id="double-semicolon"),
    pytest.param("ALTER TABLE t SET LOCATION 'open", 1, 28, 'unexpected character "\'"', id="unterminated"),
    pytest.param("ALTER TABLE t DROP PARTITION (a ~ 1)", 1, 33, "unexpected character '~'", id="bad-character"),
    pytest.param(
        "ALTER TABLE t DROP PARTITION (a LIKE '1')",
        1,
        33,
        "expected a comparison (=, <, <=, >, >=, <>) after a, found 'LIKE'",
        id="bad-comparison",
    ),
    pytest.param(
        "ALTER TABLE t DROP PARTITION (a < b)",
        1,
        35,
        "expected a value (quoted string or number), found 'b'",
        id="unquoted-value",
    ),
    pytest.param(
        "ALTER TABLE t PARTITION (a='1') SET TBLPROPERTIES ('a'='b')",
        1,
        37,
        "expected LOCATION or FILEFORMAT after PARTITION (…) SET, found 'TBLPROPERTIES'",
        id="partition-set-properties",
    ),
    pytest.param("ALTER TABLE t ABORT TRANSACTIONS", 1, 33, "expected a transaction id", id="abort-no-id"),
    pytest.param("ALTER TABLE t ABORT TRANSACTIONS 1.5", 1, 34, "a transaction id is a positive", id="abort-id"),
    pytest.param(
        "ALTER TABLE t COMPACT 'rebalance'", 1, 23, "the compaction type must be 'major' or 'minor'", id="compact-type"
    ),
    pytest.param(
        "ALTER TABLE t PARTITION (a='1') DROP",
        1,
        33,
        "expected RENAME TO PARTITION, SET LOCATION, SET FILEFORMAT, COMPACT or CONCATENATE, found 'DROP'",
        id="partition-drop",
    ),
]


@pytest.mark.parametrize(("statement", "line", "column", "problem"), BAD)
def test_bad_input_names_the_position_and_the_supported_statements(
    statement: str, line: int, column: int, problem: str
) -> None:
    """A parse error says where (position, line, column) and what was expected, and lists what is supported."""
    # given / when
    with pytest.raises(DdlParseError) as caught:
        parse_alter(statement)

    # then
    error = caught.value
    assert error.code == ErrorCode.DDL_PARSE_ERROR
    assert error.message.startswith(f"Cannot parse the statement at line {line}, column {column}: ")
    assert problem in error.message
    assert (error.details["line"], error.details["column"]) == (line, column)
    lines = statement[: error.details["position"]].split("\n")
    assert (len(lines), len(lines[-1]) + 1) == (line, column)
    assert error.details["supported"] == list(SUPPORTED_STATEMENTS)


# (Hive DDL the console does not run, column where it starts, the clause the error names)
UNSUPPORTED = [
    pytest.param("SELECT 1", 1, "SELECT", id="not-alter"),
    pytest.param("ALTER VIEW v AS SELECT 1", 14, "ALTER VIEW … AS", id="alter-view"),
    pytest.param("ALTER MATERIALIZED VIEW v REBUILD", 1, "ALTER MATERIALIZED", id="alter-materialized"),
    pytest.param("ALTER TABLE t ADD CONSTRAINT pk PRIMARY KEY (a)", 15, "ADD CONSTRAINT", id="add-constraint"),
    pytest.param("ALTER TABLE t SET FILEFORMAT TEXTFILE WITH DATA", 15, "SET FILEFORMAT", id="convert-to-text"),
    pytest.param("ALTER TABLE t CLUSTERED BY (id) INTO 4 BUCKETS", 15, "CLUSTERED BY", id="clustered"),
    pytest.param("TRUNCATE TABLE t COLUMNS (a)", 18, "TRUNCATE TABLE … COLUMNS", id="truncate-columns"),
    pytest.param("ALTER TABLE t PARTITION COLUMN (a int)", 15, "PARTITION COLUMN (a partition key's type)", id="key"),
    pytest.param(
        "ALTER TABLE t PARTITION (a='1') COMPACT 'major' AND WAIT", 49, "COMPACT … AND", id="compact-and-wait"
    ),
    pytest.param(
        "ALTER TABLE t PARTITION (a='1') SET SERDEPROPERTIES ('k'='v')",
        33,
        "PARTITION (…) SET SERDEPROPERTIES",
        id="partition-serde",
    ),
]


@pytest.mark.parametrize(("statement", "column", "clause"), UNSUPPORTED)
def test_hive_ddl_the_console_does_not_run_is_named_as_unsupported(statement: str, column: int, clause: str) -> None:
    """Valid Hive the console does not run is not a typo: the error says so and names the clause."""
    # given / when
    with pytest.raises(DdlParseError) as caught:
        parse_alter(statement)

    # then
    error = caught.value
    assert error.code == ErrorCode.DDL_PARSE_ERROR
    assert error.message.startswith(f"Unsupported statement at line 1, column {column}: ")
    assert clause in error.message
    assert (error.details["unsupported"], error.details["supported"]) == (clause, list(SUPPORTED_STATEMENTS))


@pytest.mark.parametrize(
    ("statement", "clause"),
    [
        ("CREATE VIEW v AS SELECT * FROM t", "CREATE VIEW"),
        ("CREATE OR REPLACE VIEW db.v AS SELECT `a` FROM t", "CREATE OR REPLACE VIEW"),
        ("ALTER VIEW v AS SELECT a FROM t", "ALTER VIEW … AS"),
    ],
)
def test_view_definitions_are_refused_naming_why(statement: str, clause: str) -> None:
    """CREATE VIEW and ALTER VIEW … AS are refused with the reason (the expanded text is Hive's semantic analysis)
    and what to use instead, not as a statement the console does not know."""
    # given / when
    with pytest.raises(DdlParseError) as caught:
        parse_alter(statement)

    # then
    error = caught.value
    assert error.details["unsupported"] == clause
    assert f"{clause} is refused: Hive's Driver stores a view's VIEW_EXPANDED_TEXT" in error.message
    assert "create or replace views with Hive (Beeline)" in error.message


def test_alter_view_takes_only_the_forms_hive_allows_on_a_view() -> None:
    """After ALTER VIEW only RENAME TO and SET/UNSET TBLPROPERTIES are run (HiveParser.g's alterViewStatementSuffix;
    its partition forms are for partitioned views, which the console does not alter)."""
    # when
    with pytest.raises(DdlParseError) as caught:
        parse_alter("ALTER VIEW v ADD COLUMNS (a int)")

    # then
    assert "expected RENAME TO, SET TBLPROPERTIES or UNSET TBLPROPERTIES after ALTER VIEW, found 'ADD'" in (
        caught.value.message
    )
    assert parse_alter("ALTER VIEW v RENAME TO v2").on_view is True


def test_a_partition_range_without_with_data_is_refused() -> None:
    """Hive's SET LOCATION names one partition exactly: a range is accepted only when the data moves too."""
    # given
    statement = "ALTER TABLE t PARTITION (dt < '2024-01-02') SET LOCATION 'file:/new'"

    # when
    with pytest.raises(DdlParseError) as raised:
        parse_alter(statement)

    # then
    assert "WITH DATA" in raised.value.message
