"""
Who can read a table or database, and what a principal can read, from grants written by the console itself (the same
rows Hive's SQL-standard authorization writes): direct grants, roles through roles, public, owners, groups; in a
fixed number of queries whatever the number of grants.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.db import connections
from django.test.utils import CaptureQueriesContext

from catalog_admin.db import allow_metastore_writes
from catalog_admin.selectors.access import principal_access, who_can_read
from operations.ddl.privileges import parse_privilege
from operations.services.privileges import privilege_execute, privilege_plan

pytestmark = pytest.mark.django_db

SCHEMAS = pytest.mark.parametrize(
    "metastore_alias",
    ["hive31_pg", *(pytest.param(a, marks=pytest.mark.matrix) for a in ("hive23_pg", "hive40_my"))],
    indirect=True,
)


def run(metastore, *statements: str) -> None:
    with allow_metastore_writes():
        for statement in statements:
            plan = privilege_plan(metastore.name, parse_privilege(statement), grantor="alice")
            privilege_execute(plan, actor="alice", source="cli")


def readers(report) -> set[tuple[str, str, str, tuple[str, ...]]]:
    return {(p.principal_type, p.principal_name, p.via, p.roles) for p in report.paths}


@SCHEMAS
def test_who_can_read_a_table_and_why(metastore):
    """bob directly, carol through analysts → etl (granted SELECT), the eng group, everyone through public, and the
    owner; a database grant is listed apart (it gives no table access under SQL-standard authorization)."""
    # given
    run(
        metastore,
        "CREATE ROLE etl",
        "CREATE ROLE analysts",
        "GRANT ROLE etl TO ROLE analysts",
        "GRANT ROLE analysts TO USER carol",
        "GRANT SELECT ON TABLE marketing.campaigns TO USER bob, ROLE etl, GROUP eng",
        "GRANT INSERT ON TABLE marketing.campaigns TO USER mallory",
        "GRANT SELECT ON DATABASE marketing TO USER dave",
    )
    # when
    report = who_can_read(metastore, "marketing", "campaigns")
    # then
    found = readers(report)
    assert {
        ("USER", "bob", "grant", ()),
        ("ROLE", "etl", "grant", ()),
        ("GROUP", "eng", "grant", ()),
        ("USER", "carol", "role", ("analysts", "etl")),
        ("USER", "dave", "database", ()),
    } <= found
    assert not any(name == "mallory" for _t, name, _v, _r in found)  # INSERT does not read
    assert any(via == "owner" for _t, _n, via, _r in found)
    carol = next(p for p in report.paths if p.principal_name == "carol")
    assert carol.why == "holds role analysts → etl, granted SELECT by alice"
    assert report.enforced


@SCHEMAS
def test_what_can_bob_read_with_the_path(metastore):
    """bob's own grant, his role's grant (with the chain), public's grant, and his group's when his groups are given."""
    # given
    run(
        metastore,
        "CREATE ROLE readers",
        "GRANT ROLE readers TO USER bob",
        "GRANT SELECT ON TABLE marketing.campaigns TO USER bob",
        "GRANT SELECT ON DATABASE ops TO ROLE readers",
        "GRANT SELECT ON TABLE sales.orders TO ROLE public",
        "GRANT SELECT ON TABLE sales.customers TO GROUP eng",
    )
    # when
    access = principal_access(metastore, "USER", "bob")
    with_groups = principal_access(metastore, "USER", "bob", groups=["eng"])
    # then
    paths = {(o.database, o.table, o.path.via, o.path.roles) for o in access.objects}
    assert {
        ("marketing", "campaigns", "grant", ()),
        ("ops", "", "role", ("readers",)),
        ("sales", "orders", "public", ()),
    } <= paths
    assert ("sales", "customers") not in {(o.database, o.table) for o in access.objects}
    assert ("sales", "customers") in {(o.database, o.table) for o in with_groups.objects}
    assert access.roles == {"readers": ("readers",)}


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
def test_the_reports_take_a_fixed_number_of_queries(metastore):
    """Ten grants or forty, the same number of statements (no per-row loop)."""

    def queries() -> tuple[int, int]:
        with CaptureQueriesContext(connections[metastore.alias]) as table:
            who_can_read(metastore, "sales", "orders")
        with CaptureQueriesContext(connections[metastore.alias]) as user:
            principal_access(metastore, "USER", "u1")
        return len(table), len(user)

    run(metastore, "CREATE ROLE r0", *(f"GRANT SELECT ON sales.orders TO USER u{i}, ROLE r0" for i in range(1, 2)))
    few = queries()
    run(metastore, *(f"GRANT ROLE r0 TO USER m{i}" for i in range(20)))
    run(metastore, *(f"GRANT SELECT ON sales.orders TO USER u{i}" for i in range(2, 20)))
    assert queries() == few


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)
def test_a_ranger_governed_metastore_says_grants_are_not_enforced(metastore):
    """METASTORE_AUTHORIZATION_<NAME>=ranger: the report says so, and a GRANT is refused naming why."""
    ranger = replace(metastore, config=replace(metastore.config, authorization="ranger"))
    assert not who_can_read(ranger, "sales", "orders").enforced
    from operations.planners.privileges import plan_privileges

    plan = plan_privileges(ranger, parse_privilege("GRANT SELECT ON sales.orders TO USER bob"), grantor="alice")
    assert plan.blockers[0].code == "ranger_governed"
    assert "Apache Ranger" in plan.blockers[0].message
