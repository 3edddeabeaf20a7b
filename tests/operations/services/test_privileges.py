"""
GRANT/REVOKE, CREATE/DROP ROLE and GRANT/REVOKE ROLE on the official 2.3.0, 3.1.0 and 4.0.0 schemas (PostgreSQL and
MariaDB): the rows Hive's SQL-standard authorization writes (ALL expanded, grantor, AUTHORIZER on 3.x/4.0, ids from
SEQUENCE_TABLE), Hive's refusals as blockers with nothing written, no notification event, and reverts putting back
exactly the rows, with the same ids.
"""

from __future__ import annotations

import pytest
from django.db import connections

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError
from catalog_admin.models import DatabasePrivilege
from operations.ddl.privileges import parse_privilege
from operations.planners.privileges import NOW
from operations.services.privileges import privilege_execute, privilege_plan, privilege_revert_plan
from tests.fixtures.operations import metastore_dump, sequences_behind

pytestmark = pytest.mark.django_db

SCHEMAS = pytest.mark.parametrize(
    "metastore_alias",
    [
        "hive31_pg",
        *(
            pytest.param(a, marks=pytest.mark.matrix)
            for a in ("hive23_pg", "hive40_pg", "hive23_my", "hive31_my", "hive40_my")
        ),
    ],
    indirect=True,
)
ONE = pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)


def plan(metastore, statement: str, grantor: str = "alice"):
    return privilege_plan(metastore.name, parse_privilege(statement), grantor=grantor)


def run(metastore, statement: str, grantor: str = "alice"):
    return privilege_execute(plan(metastore, statement, grantor), actor=grantor, source="cli", reason="test")


def rows(metastore, table: str) -> list[dict]:
    with connections[metastore.alias].cursor() as cursor:
        cursor.execute(f"SELECT * FROM {connections[metastore.alias].ops.quote_name(table)}")
        names = [c[0] for c in cursor.description]
        return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]


def dump(metastore) -> dict:
    """Every row of the metastore but SEQUENCE_TABLE's (ids only advance, as Hive's own do after a revoke)."""
    return {t: r for t, r in metastore_dump(metastore.alias).items() if t.upper() != "SEQUENCE_TABLE"}


def notifications(metastore) -> int:
    with connections[metastore.alias].cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM {connections[metastore.alias].ops.quote_name('NOTIFICATION_LOG')}")
        return int(cursor.fetchone()[0])


@SCHEMAS
def test_grant_all_writes_four_rows_as_sql_standard_authorization(metastore):
    """GRANT ALL expands to SELECT, INSERT, UPDATE, DELETE (one TBL_PRIVS row each), grantor the requesting user of
    type USER, CREATE_TIME in seconds, AUTHORIZER 'SQL' where the column exists, ids above SEQUENCE_TABLE's; no
    notification event."""
    # given
    events = notifications(metastore)
    # when
    with allow_metastore_writes():
        execution = run(metastore, "GRANT ALL ON TABLE sales.orders TO USER bob WITH GRANT OPTION")
    # then
    written = sorted(
        (r for r in rows(metastore, "TBL_PRIVS") if r["PRINCIPAL_NAME"] == "bob"), key=lambda r: r["TBL_GRANT_ID"]
    )
    assert [r["TBL_PRIV"] for r in written] == ["SELECT", "INSERT", "UPDATE", "DELETE"]
    assert {
        (r["PRINCIPAL_NAME"], r["PRINCIPAL_TYPE"], r["GRANTOR"], r["GRANTOR_TYPE"], r["GRANT_OPTION"]) for r in written
    } == {("bob", "USER", "alice", "USER", 1)}
    assert all(abs(r["CREATE_TIME"] - execution.started_at.timestamp()) < 60 for r in written)
    if metastore.schema.has(DatabasePrivilege, "authorizer"):
        assert {r["AUTHORIZER"] for r in written} == {"SQL"}
    else:
        assert "AUTHORIZER" not in written[0]
    assert sequences_behind(metastore) == {}
    assert notifications(metastore) == events
    assert execution.actual_counts == {"TBL_PRIVS": {"insert": 4, "update": 0, "delete": 0}}


@SCHEMAS
def test_revert_of_a_grant_deletes_it_and_revert_of_that_puts_the_same_rows_back(metastore):
    """A grant's revert is its revoke (the rows deleted); reverting that revert inserts exactly the same rows, ids
    included."""
    # given
    before = dump(metastore)
    with allow_metastore_writes():
        granted = run(metastore, "GRANT SELECT, INSERT ON DATABASE sales TO GROUP analysts, ROLE etl")
        after_grant = rows(metastore, "DB_PRIVS")
        # when
        revert = privilege_revert_plan(granted, grantor="alice")
        assert revert.statement == "REVOKE SELECT, INSERT ON DATABASE sales FROM GROUP analysts, ROLE etl"
        reverted = privilege_execute(revert, actor="carol", source="cli", reason="undo")
        # then
        assert dump(metastore) == before
        again = privilege_execute(privilege_revert_plan(reverted, grantor="carol"), actor="carol", source="cli")
    assert sorted(rows(metastore, "DB_PRIVS"), key=str) == sorted(after_grant, key=str)
    assert again.reverts_id == reverted.pk


@ONE
def test_duplicate_grant_is_refused_as_hive_refuses_it_and_nothing_is_written(metastore):
    """The same privilege by the same grantor again: Hive's words, as a blocker; execution refuses it."""
    # given
    with allow_metastore_writes():
        run(metastore, "GRANT SELECT ON TABLE sales.orders TO USER bob")
    before = dump(metastore)
    # when
    again = plan(metastore, "GRANT SELECT, INSERT ON sales.orders TO USER bob")
    # then
    assert [b.message for b in again.blockers] == [
        "SELECT is already granted on table [sales,orders] by alice (to USER bob)."
    ]
    with pytest.raises(ApplicationError) as refused, allow_metastore_writes():
        privilege_execute(again, actor="alice", source="cli")
    assert refused.value.code == "hive_rule_violation"
    assert dump(metastore) == before
    # another grantor's same privilege is a row of its own (ObjectStore matches the grantor)
    assert plan(metastore, "GRANT SELECT ON sales.orders TO USER bob", grantor="dave").blockers == ()


@ONE
def test_refusals_name_what_is_wrong(metastore):
    """Revoking what is not granted, a missing object, reserved and missing roles, cycles: each a blocker."""
    cases = {
        "REVOKE SELECT ON TABLE sales.orders FROM USER bob": "Cannot find privilege SELECT for USER bob on TABLE "
        "sales.orders.",
        "GRANT SELECT ON TABLE sales.nope TO USER bob": "Table sales.nope does not exist.",
        "CREATE ROLE public": "public role implicitly exists. It can't be created.",
        "DROP ROLE admin": "public,admin roles can't be dropped.",
        "DROP ROLE ghost": "Role ghost does not exist.",
        "GRANT ROLE ghost TO USER bob": "Role ghost does not exist.",
    }
    for statement, message in cases.items():
        assert [b.message for b in plan(metastore, statement).blockers] == [message], statement


@SCHEMAS
def test_roles_create_grant_and_drop_with_everything_granted_to_them(metastore):
    """CREATE ROLE writes ROLES (OWNER_NAME NULL), GRANT ROLE a ROLE_MAP row; a cycle is refused; DROP ROLE deletes
    the role, its memberships and its grants, and its revert puts all of them back with the same ids."""
    with allow_metastore_writes():
        run(metastore, "CREATE ROLE Analysts")
        run(metastore, "CREATE ROLE etl")
        run(metastore, "GRANT ROLE analysts TO USER bob WITH ADMIN OPTION")
        run(metastore, "GRANT ROLE etl TO ROLE analysts")
        run(metastore, "GRANT SELECT ON TABLE sales.orders TO ROLE analysts")
        # then
        roles = {r["ROLE_NAME"]: r for r in rows(metastore, "ROLES")}
        assert roles["analysts"]["OWNER_NAME"] is None
        members = {
            (r["PRINCIPAL_NAME"], r["PRINCIPAL_TYPE"], r["ROLE_ID"], r["GRANT_OPTION"], r["GRANTOR"])
            for r in rows(metastore, "ROLE_MAP")
        }
        assert members == {
            ("bob", "USER", roles["analysts"]["ROLE_ID"], 1, "alice"),
            ("analysts", "ROLE", roles["etl"]["ROLE_ID"], 0, "alice"),
        }
        cycle = plan(metastore, "GRANT ROLE analysts TO ROLE etl")
        assert [b.code for b in cycle.blockers] == ["role_cycle"]
        assert plan(metastore, "GRANT ROLE analysts TO USER bob").blockers[0].message == (
            "Principal bob already has the role analysts"
        )
        before = dump(metastore)
        # when
        dropped = run(metastore, "DROP ROLE analysts")
        # then
        assert dropped.actual_counts == {
            "ROLE_MAP": {"insert": 0, "update": 0, "delete": 2},
            "TBL_PRIVS": {"insert": 0, "update": 0, "delete": 1},
            "ROLES": {"insert": 0, "update": 0, "delete": 1},
        }
        assert "analysts" not in {r["ROLE_NAME"] for r in rows(metastore, "ROLES")}
        privilege_execute(privilege_revert_plan(dropped, grantor="alice"), actor="alice", source="cli")
    assert dump(metastore) == before


@ONE
def test_revoke_grant_option_keeps_the_grant_and_its_revert_gives_the_option_back(metastore):
    """REVOKE GRANT OPTION FOR sets GRANT_OPTION to 0 (ObjectStore.revokePrivileges); refused without the option."""
    with allow_metastore_writes():
        run(metastore, "GRANT SELECT ON TABLE sales.orders TO USER bob WITH GRANT OPTION")
        before = dump(metastore)
        narrowed = run(metastore, "REVOKE GRANT OPTION FOR SELECT ON TABLE sales.orders FROM USER bob")
        bobs = [
            (r["TBL_PRIV"], r["GRANT_OPTION"]) for r in rows(metastore, "TBL_PRIVS") if r["PRINCIPAL_NAME"] == "bob"
        ]
        assert bobs == [("SELECT", 0)]
        assert plan(metastore, "REVOKE GRANT OPTION FOR SELECT ON sales.orders FROM USER bob").blockers[0].code == (
            "no_grant_option"
        )
        privilege_execute(privilege_revert_plan(narrowed, grantor="alice"), actor="alice", source="cli")
    assert dump(metastore) == before


@ONE
def test_a_grant_changed_after_the_preview_is_refused_at_execution(metastore):
    """The plan is built again in the transaction: a grant written since refuses it (stale), nothing written."""
    # given
    planned = plan(metastore, "GRANT SELECT ON TABLE sales.orders TO USER bob")
    assert dict(planned.changes[0].values)["CREATE_TIME"] == NOW
    with allow_metastore_writes():
        run(metastore, "GRANT SELECT ON TABLE sales.orders TO USER bob")
        before = dump(metastore)
        # when
        with pytest.raises(ApplicationError) as refused:
            privilege_execute(planned, actor="alice", source="cli")
    # then
    assert refused.value.code == "stale_preview"
    assert dump(metastore) == before
