"""The database statements of Hive's grammar (issue 27): every clause read, refusals naming what is wrong."""

from __future__ import annotations

import pytest

from catalog_admin.errors import ErrorCode
from operations.database_specs import AlterDatabase, CreateDatabase, DropDatabase, database_spec_from_dict
from operations.ddl.parser import DdlParseError, parse_alter


def test_every_clause_of_create_database_is_read() -> None:
    """Name lower-cased (HMSHandler normalizes it), comment, both locations and the properties in order."""
    # when
    spec = parse_alter(
        "CREATE DATABASE Fin COMMENT 'it\\'s' LOCATION 'file:/w/fin.db' MANAGEDLOCATION '/m/fin.db' "
        "WITH DBPROPERTIES ('b'='2', 'a'='1')"
    )
    # then
    assert spec == CreateDatabase(name="fin", comment="it's", location="file:/w/fin.db", managed_location="/m/fin.db",
                                  properties=(("b", "2"), ("a", "1")))  # fmt: skip


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("ALTER DATABASE d SET DBPROPERTIES ('k'='v')", AlterDatabase(name="d", properties=(("k", "v"),))),
        ("ALTER SCHEMA d SET OWNER USER bob", AlterDatabase(name="d", action="set_owner", principal_type="USER",
                                                            principal="bob")),
        ("ALTER DATABASE d SET LOCATION 'hdfs://nn/x'", AlterDatabase(name="d", action="set_location",
                                                                      location="hdfs://nn/x")),
        ("ALTER DATABASE d SET MANAGEDLOCATION '/m'", AlterDatabase(name="d", action="set_managed_location",
                                                                    location="/m")),
        ("DROP SCHEMA IF EXISTS d CASCADE", DropDatabase(name="d", if_exists=True, cascade=True)),
    ],
)  # fmt: skip
def test_alter_and_drop_database_are_read(statement: str, expected: object) -> None:
    """Each ALTER DATABASE clause and DROP's options become their spec."""
    assert parse_alter(statement) == expected


@pytest.mark.parametrize(
    ("statement", "problem"),
    [
        ("ALTER DATABASE d SET TBLPROPERTIES ('k'='v')", "expected DBPROPERTIES, OWNER, LOCATION or MANAGEDLOCATION"),
        ("ALTER DATABASE d SET OWNER TEAM x", "expected USER, ROLE or GROUP after SET OWNER"),
        ("CREATE DATABASE d WITH ('a'='b')", "expected DBPROPERTIES"),
        ("DROP DATABASE d PURGE", "unexpected 'PURGE' after the end of the statement"),
        ("CREATE DATABASE d LOCATION x", "expected a quoted string"),
    ],
)
def test_bad_database_statements_are_refused_naming_the_problem(statement: str, problem: str) -> None:
    """A clause Hive's grammar does not have is a parse error pointing at it."""
    # when
    with pytest.raises(DdlParseError) as raised:
        parse_alter(statement)
    # then
    assert raised.value.code == ErrorCode.DDL_PARSE_ERROR and problem in raised.value.message


def test_an_operation_payload_round_trips_and_a_bad_one_names_its_problem() -> None:
    """The structured form (the API's operation) is the spec's ``as_dict``; unknown fields are named."""
    # given
    spec = parse_alter("CREATE DATABASE d WITH DBPROPERTIES ('a'='1')")
    # then
    assert database_spec_from_dict(spec.as_dict()) == spec
    with pytest.raises(ValueError, match="has no field"):
        database_spec_from_dict({"kind": "drop_database", "name": "d", "purge": True})
