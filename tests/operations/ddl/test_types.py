"""Hive's column type grammar, line by line, and the text Hive stores for each type."""

from __future__ import annotations

import pytest

from catalog_admin.errors import ErrorCode
from catalog_admin.schema import SchemaVersion
from operations.ddl.errors import DdlParseError
from operations.ddl.parser import parse_alter
from operations.ddl.types import parse_type, type_problem
from operations.rules import check_column_types
from operations.specs import AddColumns, ColumnDef, TableRef

V23, V31, V40 = (SchemaVersion.parse(v) for v in ("2.3.0", "3.1.0", "4.0.0"))
ALL = (V23, V31, V40)

# (as written, as Hive stores it): accepted by every supported line
STORED = [
    ("tinyint", "tinyint"),
    ("SMALLINT", "smallint"),
    ("int", "int"),
    ("Integer", "int"),
    ("bigint", "bigint"),
    ("boolean", "boolean"),
    ("float", "float"),
    ("double", "double"),
    ("double   precision", "double"),
    ("string", "string"),
    ("binary", "binary"),
    ("date", "date"),
    ("timestamp", "timestamp"),
    ("decimal", "decimal(10,0)"),
    ("decimal(7)", "decimal(7,0)"),
    ("DECIMAL( 10 , 2 )", "decimal(10,2)"),
    ("decimal(1,0)", "decimal(1,0)"),
    ("decimal(38,38)", "decimal(38,38)"),
    ("varchar(1)", "varchar(1)"),
    ("varchar(65535)", "varchar(65535)"),
    ("char(1)", "char(1)"),
    ("char(255)", "char(255)"),
    ("array<int>", "array<int>"),
    ("ARRAY < array<string> >", "array<array<string>>"),
    ("map<string, array<int>>", "map<string,array<int>>"),
    ("map<decimal(5,1),struct<a:int>>", "map<decimal(5,1),struct<a:int>>"),
    ("struct<a:int, b : string>", "struct<a:int,b:string>"),
    ("struct<Mixed:int,`with space`:string>", "struct<Mixed:int,with space:string>"),
    ("struct<a:int COMMENT 'the a', b:varchar(3) comment \"b\">", "struct<a:int,b:varchar(3)>"),
    ("struct<integer:integer,comment:int>", "struct<integer:int,comment:int>"),
    ("uniontype<int, string, array<double precision>>", "uniontype<int,string,array<double>>"),
    (
        "map<int,map<string,uniontype<int,struct<x:array<char(2)>>>>>",
        "map<int,map<string,uniontype<int,struct<x:array<char(2)>>>>>",
    ),
]


@pytest.mark.parametrize("version", ALL, ids=str)
@pytest.mark.parametrize(("written", "stored"), STORED)
def test_every_construct_is_stored_as_hive_stores_it(written: str, stored: str, version: SchemaVersion) -> None:
    """Primitives with their parameters, arrays, maps, structs and union types, in Hive's lower-case stored text."""
    # given / when / then
    assert parse_type(written, version=version) == stored


# (type, the versions that accept it, as stored)
PER_VERSION = [
    ("numeric(10,2)", {V31, V40}, "decimal(10,2)"),  # HIVE-16764, 3.0.0
    ("numeric", {V31, V40}, "decimal(10,0)"),
    ("dec(4,1)", {V40}, "decimal(4,1)"),  # the 4.x lexer
    ("timestamp with local time zone", {V31, V40}, "timestamp with local time zone"),  # HIVE-16614, 3.0.0
    ("TIMESTAMP WITH LOCAL TIME ZONE", {V31, V40}, "timestamp with local time zone"),
    ("timestamplocaltz", {V31, V40}, "timestamp with local time zone"),
    ("array<timestamp with local time zone>", {V31, V40}, "array<timestamp with local time zone>"),
    ("map<numeric,int>", {V31, V40}, "map<decimal(10,0),int>"),
    ("real", {V40}, "float"),  # KW_REAL -> TOK_FLOAT, the 4.x parser
    ("REAL", {V40}, "float"),
    ("struct<a:real,b:double precision>", {V40}, "struct<a:float,b:double>"),
]


@pytest.mark.parametrize("version", ALL, ids=str)
@pytest.mark.parametrize(("written", "accepted_by", "stored"), PER_VERSION)
def test_each_hive_line_accepts_its_own_type_words(
    written: str, accepted_by: set[SchemaVersion], stored: str, version: SchemaVersion
) -> None:
    """NUMERIC and TIMESTAMP WITH LOCAL TIME ZONE came with Hive 3.0, DEC and REAL with 4.x; older lines refuse
    them."""
    # given / when
    if version in accepted_by:
        result = parse_type(written, version=version)

        # then
        assert result == stored
    else:
        with pytest.raises(DdlParseError) as caught:
            parse_type(written, version=version)

        # then
        assert f"is not a column type of Hive {version.major}.{version.minor}" in caught.value.message


def test_without_a_version_any_supported_line_is_enough() -> None:
    """A request written before its metastore is known takes every line's words; the preview checks its own line."""
    # given / when / then
    assert parse_type("dec") == "decimal(10,0)"
    assert parse_type("timestamp with local time zone") == "timestamp with local time zone"


# (type, column of the error, what it says): refused by every line
BAD = [
    ("", 1, "expected a column type, found the end"),
    ("foo", 1, "'foo' is not a column type of Hive 4.0"),
    ("real precision", 6, "unexpected 'precision' after the column type float"),
    ("void", 1, "'void' is not a column type"),
    ("interval", 1, "'interval' is not a column type"),
    ("text", 1, "'text' is not a column type"),
    ("datetime", 1, "DATETIME type isn't supported yet."),
    ("int garbage words here", 5, "unexpected 'garbage' after the column type int"),
    ("int;drop table x", 4, "unexpected ';' after the column type int"),
    ("varchar", 8, "expected '(', found the end"),
    ("varchar(0)", 9, "Varchar length 0 out of allowed range [1, 65535]"),
    ("varchar(65536)", 9, "Varchar length 65536 out of allowed range [1, 65535]"),
    ("char(0)", 6, "Char length 0 out of allowed range [1, 255]"),
    ("char(256)", 6, "Char length 256 out of allowed range [1, 255]"),
    ("char(2.5)", 7, "expected ')', found '.'"),
    ("varchar(x)", 9, "expected a whole number, found 'x'"),
    ("decimal(0)", 9, "Decimal precision out of allowed range [1,38]"),
    ("decimal(39,2)", 9, "Decimal precision out of allowed range [1,38]"),
    ("decimal(10,11)", 9, "Decimal scale must be less than or equal to precision"),
    ("decimal(10,2,1)", 13, "expected ')', found ','"),
    ("array<int", 10, "expected '>', found the end"),
    ("array<>", 7, "expected a column type, found '>'"),
    ("array<int,string>", 10, "expected '>', found ','"),
    ("array<int>>", 11, "unbalanced brackets in column type: this '>' closes nothing"),
    ("map<int>", 8, "expected ',', found '>'"),
    ("map<array<int>,string>", 5, "a map's key must be a primitive type, found 'array'"),
    ("struct<>", 8, "expected a struct field name, found '>'"),
    ("struct<a int>", 10, "expected ':', found 'int'"),
    ("struct<a:int,a:string>", 14, "the struct field a is named twice"),
    ("struct<`a:b`:int>", 8, "the struct field name 'a:b' cannot be read back from the stored type"),
    ("struct<a:int COMMENT>", 21, "expected a quoted comment, found '>'"),
    ("uniontype<>", 11, "expected a column type, found '>'"),
    ("timestamp with time zone", 16, "expected LOCAL, found 'time'"),
    ("double precision precision", 18, "unexpected 'precision' after the column type double"),
    ("int $", 5, "unexpected '$' after the column type int"),
]


@pytest.mark.parametrize(("written", "column", "problem"), BAD)
def test_anything_else_is_a_parse_error_at_its_position(written: str, column: int, problem: str) -> None:
    """Everything outside the grammar and its bounds is refused, the message naming the column where it goes wrong."""
    # given / when
    with pytest.raises(DdlParseError) as caught:
        parse_type(written, version=V40)

    # then
    error = caught.value
    assert error.code == ErrorCode.DDL_PARSE_ERROR
    assert error.message.startswith(f"Cannot parse the statement at line 1, column {column}: ")
    assert problem in error.message
    assert error.details["position"] == column - 1


# The two statements of the issue, which wrote types Hive cannot read into COLUMNS_V2.
HOSTILE = [
    ("ALTER TABLE sales.orders ADD COLUMNS (c2 int;drop table x)", 45, "expected ')', found ';'"),
    (
        "ALTER TABLE sales.orders ADD COLUMNS (c3 int garbage words here)",
        46,
        "unexpected 'garbage' after the column type int",
    ),
    ("ALTER TABLE sales.orders CHANGE c c int garbage", 41, "unexpected 'garbage' after the column type int"),
    ("ALTER TABLE sales.orders ADD COLUMNS (c array<int>=1)", 51, "unexpected '=' after the column type array<int>"),
]


@pytest.mark.parametrize(("statement", "column", "problem"), HOSTILE)
def test_a_statement_with_text_after_a_type_is_refused_where_the_type_ends(
    statement: str, column: int, problem: str
) -> None:
    """Words or statements after a column's type are not part of it: the statement is refused, naming the place."""
    # given / when
    with pytest.raises(DdlParseError) as caught:
        parse_alter(statement)

    # then
    assert caught.value.message == f"Cannot parse the statement at line 1, column {column}: {problem}"


def test_a_statement_parses_its_types_in_the_metastore_line_when_given() -> None:
    """Given the metastore's version, the statement's types follow that line's grammar."""
    # given
    statement = "ALTER TABLE t ADD COLUMNS (a numeric(5,2))"

    # when
    parsed = parse_alter(statement, version=V31)
    with pytest.raises(DdlParseError) as caught:
        parse_alter(statement, version=V23)

    # then
    assert parsed.columns == (ColumnDef("a", "decimal(5,2)"),)
    assert "column 30: NUMERIC is not a column type of Hive 2.3" in caught.value.message


@pytest.mark.parametrize(
    ("version", "problem"),
    [(V23, "TIMESTAMP WITH LOCAL TIME ZONE is not a column type of Hive 2.3"), (V31, ""), (V40, "")],
    ids=str,
)
def test_type_problem_says_why_a_line_refuses_a_type(version: SchemaVersion, problem: str) -> None:
    # given / when / then
    assert type_problem("array<timestamp with local time zone>", version) == problem


def test_preview_rules_refuse_a_type_the_metastore_line_cannot_parse() -> None:
    """Rule 2.4 on the metastore's line: a request parsed in every line's grammar is checked again on its own line,
    and only the types the change brings in (the table's existing types are left alone)."""
    # given: an old column of a type the 2.3 grammar would not write today, and two new columns
    old = [("legacy", "decimal"), ("ts", "timestamp")]
    new = [*old, ("local", "timestamp with local time zone"), ("n", "decimal(5,2)")]

    # when
    on_23 = check_column_types(old, new, V23, is_view=False)
    on_31 = check_column_types(old, new, V31, is_view=False)

    # then
    assert [(f.code, f.rule, f.message) for f in on_23] == [
        (
            "invalid_type",
            "2.4",
            "Invalid column type: timestamp with local time zone "
            "(TIMESTAMP WITH LOCAL TIME ZONE is not a column type of Hive 2.3)",
        )
    ]
    assert on_31 == []


def test_the_column_list_of_a_spec_keeps_the_stored_types() -> None:
    """The parsed spec carries the stored text, so the rendered statement parses back to the same spec."""
    # given
    spec = parse_alter("ALTER TABLE t ADD COLUMNS (a Numeric, b STRUCT<x : INTEGER COMMENT 'x'>)")

    # when
    again = parse_alter(spec.to_ddl())

    # then
    assert (
        spec
        == again
        == AddColumns(
            target=TableRef("default", "t"),
            columns=(ColumnDef("a", "decimal(10,0)"), ColumnDef("b", "struct<x:int>")),
        )
    )
