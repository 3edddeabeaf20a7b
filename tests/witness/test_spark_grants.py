"""
Grants written by the console, seen by Hive 2.3's own Driver (``hive_ql``, on ``spark_pg``), and grants written by that
Driver compared row for row with the console's:

* ``SHOW GRANT USER bob ON TABLE …`` and ``SHOW ROLES`` report what the console wrote (privilege, grant option,
  grantor; the role). ``SHOW ROLE GRANT`` cannot run here: Hive 2.3's sort of role grants calls a Guava method that
  Spark's Guava lacks (``ComparisonChain.compare(boolean, boolean)``), so the ROLE_MAP rows are compared instead;
* Hive's own ``GRANT SELECT … WITH GRANT OPTION``, ``GRANT ALL``, ``CREATE ROLE`` and ``GRANT ROLE … WITH ADMIN
  OPTION`` — through SQL-standard authorization (``SQLStdHiveAccessControllerWrapper``, the Driver's authorizer here;
  the JVM's user made admin by the console first, as Hive requires) — write the same TBL_PRIVS, ROLES and ROLE_MAP
  columns as the console, ids, times and the grantor's name aside (the Driver grants as the JVM's user); ALL expands
  to the same four rows. Hive 2.3 has no AUTHORIZER column, so both write none.
"""

from __future__ import annotations

import getpass
from typing import Any

import pytest
from django.db import connections

from operations.ddl.privileges import parse_privilege
from operations.services.privileges import privilege_execute, privilege_plan, privilege_revert_plan

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True, databases=["default", "spark_pg"])]

DATABASE = "diff_hive"
VOLATILE = (
    "TBL_GRANT_ID",
    "CREATE_TIME",
    "ROLE_ID",
    "ROLE_GRANT_ID",
    "ADD_TIME",
    "GRANTOR",
    "PRINCIPAL_NAME",
    "ROLE_NAME",
    "TBL_ID",
)


@pytest.fixture(autouse=True)
def _databases(_diff_databases: tuple[str, str]) -> None:
    """The twins' databases, where the table is created."""


def rows(table: str, where: str, params: list[Any]) -> list[dict[str, Any]]:
    connection = connections["spark_pg"]
    with connection.cursor() as cursor:
        cursor.execute(f'SELECT * FROM "{table}" WHERE {where}', params)
        names = [c[0] for c in cursor.description]
        return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]


def shape(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in VOLATILE}


def console(spark_metastore, statement: str):
    plan = privilege_plan(spark_metastore.name, parse_privilege(statement), grantor="alice")
    assert plan.blockers == (), plan.blockers
    return privilege_execute(plan, actor="alice", source="cli", reason="witness")


def test_hive_reports_the_console_grants_and_writes_the_same_rows(hive_ql, spark_metastore):
    # given: the JVM's user in role admin (granted by the console), as SQL-standard authorization requires of SHOW
    # GRANT for another user, CREATE ROLE and GRANT
    table = f"{DATABASE}.granted"
    hive_ql(f"CREATE TABLE {table} (id int, name string) STORED AS PARQUET")
    executions = [console(spark_metastore, f"GRANT ROLE admin TO USER {getpass.getuser()}")]
    hive_ql("SET ROLE admin")
    executions += [
        console(spark_metastore, f"GRANT SELECT ON TABLE {table} TO USER bob WITH GRANT OPTION"),
        console(spark_metastore, "CREATE ROLE console_role"),
        console(spark_metastore, "GRANT ROLE console_role TO USER bob WITH ADMIN OPTION"),
    ]
    # when: Hive's Driver reads them
    shown = hive_ql(f"SHOW GRANT USER bob ON TABLE {table}")
    roles = hive_ql("SHOW ROLES")
    # then
    assert len(shown) == 1, shown
    fields = shown[0].split("\t")
    assert [fields[0], fields[1], fields[4], fields[5], fields[6], fields[7], fields[9]] == [
        DATABASE,
        "granted",
        "bob",
        "USER",
        "SELECT",
        "true",
        "alice",
    ]
    assert "console_role" in roles, roles
    # when: Hive's Driver writes its own
    hive_ql(f"GRANT SELECT ON TABLE {table} TO USER carol WITH GRANT OPTION")
    hive_ql("CREATE ROLE hive_role")
    hive_ql("GRANT ROLE hive_role TO USER carol WITH ADMIN OPTION")
    hive_ql(f"GRANT ALL ON TABLE {table} TO USER erin")
    executions.append(console(spark_metastore, f"GRANT ALL ON TABLE {table} TO USER dan"))
    # then
    grants = {r["PRINCIPAL_NAME"]: r for r in rows("TBL_PRIVS", '"PRINCIPAL_NAME" IN (%s, %s)', ["bob", "carol"])}
    assert shape(grants["bob"]) == shape(grants["carol"])
    made = {r["ROLE_NAME"]: r for r in rows("ROLES", '"ROLE_NAME" IN (%s, %s)', ["console_role", "hive_role"])}
    assert shape(made["console_role"]) == shape(made["hive_role"])
    maps = {r["PRINCIPAL_NAME"]: r for r in rows("ROLE_MAP", '"PRINCIPAL_NAME" IN (%s, %s)', ["bob", "carol"])}
    assert shape(maps["bob"]) == shape(maps["carol"])
    every = rows("TBL_PRIVS", '"PRINCIPAL_NAME" IN (%s, %s)', ["dan", "erin"])
    dan = sorted(repr(sorted(shape(r).items())) for r in every if r["PRINCIPAL_NAME"] == "dan")
    erin = sorted(repr(sorted(shape(r).items())) for r in every if r["PRINCIPAL_NAME"] == "erin")
    assert dan == erin and len(dan) == 4
    # and the console's reverts leave Hive nothing to show
    for execution in reversed(executions[1:]):
        privilege_execute(privilege_revert_plan(execution, grantor="alice"), actor="alice", source="cli")
    assert hive_ql(f"SHOW GRANT USER bob ON TABLE {table}") == []
    privilege_execute(privilege_revert_plan(executions[0], grantor="alice"), actor="alice", source="cli")
    hive_ql("SET ROLE NONE")
