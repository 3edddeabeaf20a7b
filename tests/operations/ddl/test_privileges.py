"""Hive's access-control statements parsed into specs, rendered back canonically; SQL-standard authorization's
refusals named at the position they concern."""

from __future__ import annotations

import pytest

from operations.ddl.errors import DdlParseError
from operations.ddl.privileges import is_privilege_statement, parse_privilege
from operations.privilege_specs import Principal, PrivilegeSpec

GOLDEN = {
    "grant select, Insert on table Sales.Orders to user Bob, role Analysts with grant option": (
        PrivilegeSpec(
            "grant",
            ("SELECT", "INSERT"),
            "sales",
            "orders",
            (Principal("USER", "Bob"), Principal("ROLE", "analysts")),
            option=True,
        ),
        "GRANT SELECT, INSERT ON TABLE sales.orders TO USER Bob, ROLE analysts WITH GRANT OPTION",
    ),
    "GRANT ALL ON orders TO GROUP eng;": (
        PrivilegeSpec("grant", ("ALL",), "default", "orders", (Principal("GROUP", "eng"),)),
        "GRANT ALL ON TABLE default.orders TO GROUP eng",
    ),
    "REVOKE GRANT OPTION FOR SELECT ON SCHEMA sales FROM USER `odd name`": (
        PrivilegeSpec("revoke", ("SELECT",), "sales", "", (Principal("USER", "odd name"),), option=True),
        "REVOKE GRANT OPTION FOR SELECT ON DATABASE sales FROM USER `odd name`",
    ),
    "CREATE ROLE Analysts": (PrivilegeSpec("create_role", roles=("analysts",)), "CREATE ROLE analysts"),
    "DROP ROLE etl": (PrivilegeSpec("drop_role", roles=("etl",)), "DROP ROLE etl"),
    "GRANT etl, analysts TO ROLE bi WITH ADMIN OPTION": (
        PrivilegeSpec("grant_role", roles=("etl", "analysts"), principals=(Principal("ROLE", "bi"),), option=True),
        "GRANT ROLE etl, analysts TO ROLE bi WITH ADMIN OPTION",
    ),
    "REVOKE ADMIN OPTION FOR ROLE etl FROM USER bob": (
        PrivilegeSpec("revoke_role", roles=("etl",), principals=(Principal("USER", "bob"),), option=True),
        "REVOKE ADMIN OPTION FOR ROLE etl FROM USER bob",
    ),
}


@pytest.mark.parametrize("statement", GOLDEN)
def test_statements_parse_to_their_spec_and_render_back(statement: str) -> None:
    spec, canonical = GOLDEN[statement]
    parsed = parse_privilege(statement)
    assert parsed == spec
    assert parsed.statement == canonical
    assert parse_privilege(canonical) == spec
    assert PrivilegeSpec.from_dict(parsed.as_dict()) == spec
    assert is_privilege_statement(statement)


@pytest.mark.parametrize(
    ("statement", "column", "message"),
    [
        (
            "GRANT SELECT (a, b) ON TABLE t TO USER x",
            7,
            "Privileges on columns (a, b) not supported currently in sql standard authorization mode",
        ),
        ("GRANT SELECT, ALTER ON t TO USER x", 15, "Privilege: ALTER is not supported in sql standard authorization"),
        ("CREATE ROLE none", 13, "Role name cannot be one of the reserved roles: [ALL, DEFAULT, NONE]"),
        ("GRANT SELECT ON t TO bob", 22, "expected USER, GROUP or ROLE and a name"),
        ("GRANT SELECT ON t PARTITION (d='1') TO USER x", 19, "privileges on partitions are not supported"),
        ("REVOKE SELECT ON t TO USER x", 20, "expected FROM"),
        ("GRANT SELECT ON TABLE a.b.c TO USER x", 23, "a.b.c is not a valid table name"),
    ],
)
def test_refusals_name_the_problem_and_its_position(statement: str, column: int, message: str) -> None:
    with pytest.raises(DdlParseError) as error:
        parse_privilege(statement)
    assert message in error.value.message
    assert error.value.details["column"] == column


def test_alter_statements_are_not_privilege_statements() -> None:
    assert not is_privilege_statement("ALTER TABLE t RENAME TO u")
    assert not is_privilege_statement("CREATE TABLE t (a int)")
