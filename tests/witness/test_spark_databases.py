"""
Issue 27's witness for the database statements: CREATE, ALTER and DROP DATABASE run by Hive 2.3's own Driver
(``hive_ql``: HiveQL parser → DDLSemanticAnalyzer → DDLTask → HMSHandler → ObjectStore, in Spark's JVM) on one
database and by the console on its twin, on the same metastore (``spark_pg``, official 2.3.0 schema), leave the same
rows: DBS (description, location as Hive qualifies it, owner and its type) and DATABASE_PARAMS, and the same folders.

The differences, each on purpose:

* ids (DB_ID) and the name, and the location that ends with the name;
* Hive's Driver here runs without ``DbNotificationListener`` (it is not in Spark's jars): the console writes the
  CREATE/DROP_DATABASE events Hive's listener would write, and Hive's own deserializer reads them back;
* DROP: Hive deletes the directory with what it holds; the console moves a non-empty one to its trash (here both are
  empty: both remove it). Spark SQL's DROP DATABASE, which calls the same ``HMSHandler.drop_database``, is the
  witness here; Hive's own Driver drops a database in ``test_spark_drop_database.py`` (its DDLTask needs Hive's
  FunctionRegistry, whose LLAP signer class Spark does not ship: ``spark_hive.py`` puts a stub of it on the driver's
  class path).

Spark's Hive client then sees the console's database as it sees Hive's (``DESCRIBE DATABASE EXTENDED``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from catalog_admin.models import NotificationEvent
from catalog_admin.selectors.metastores import Metastore
from operations.ddl.parser import parse_alter
from operations.models import Execution
from operations.planners.databases import plan_database, read_database_state
from operations.services.database import database_execute
from operations.services.database_kind import database_revert_plan

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True, databases=["default", "spark_pg"])]

HIVE, CONSOLE = "dbw_hive", "dbw_console"


@pytest.fixture
def twins(spark_metastore: Metastore, spark: Any) -> Any:
    """Neither database exists before; both are dropped afterwards (with anything a failed test left in them), by
    Spark SQL (the witness of these tests; Hive's Driver's own drop is ``test_spark_drop_database.py``'s)."""
    for name in (HIVE, CONSOLE):
        spark.sql(f"DROP DATABASE IF EXISTS {name} CASCADE")
    yield spark_metastore
    for name in (HIVE, CONSOLE):
        spark.sql(f"DROP DATABASE IF EXISTS {name} CASCADE")


def session_user(spark: Any) -> str:
    """The user Hive's Driver names as owner (``SessionState.getUserFromAuthenticator``: the JVM's user here)."""
    return str(spark._jvm.java.lang.System.getProperty("user.name"))


def console(metastore: Metastore, statement: str, actor: str) -> Execution:
    plan = plan_database(metastore, parse_alter(statement))  # type: ignore[arg-type]
    return database_execute(plan=plan, actor=actor, source="cli", reason="witness")


def image(metastore: Metastore, name: str) -> dict[str, Any]:
    """The database's rows without its id and name (the location's last segment is its name)."""
    state = read_database_state(metastore, name)
    assert state is not None, f"{name} does not exist"
    row = {k: v for k, v in state.row.items() if k not in ("DB_ID", "NAME")}
    row["DB_LOCATION_URI"] = row["DB_LOCATION_URI"].replace(name, "<name>")
    return {"row": row, "params": dict(state.params), "privileges": len(state.privileges)}


def described(spark: Any, name: str) -> dict[str, str]:
    """What Spark's Hive client shows of a database (``DESCRIBE DATABASE EXTENDED``), its name replaced."""
    rows = spark.sql(f"DESCRIBE DATABASE EXTENDED {name}").collect()
    return {row[0]: str(row[1]).replace(name, "<name>") for row in rows}


def test_create_database_writes_the_rows_hives_driver_writes(twins: Metastore, hive_ql: Any, spark: Any) -> None:
    """CREATE DATABASE with a comment and properties: the same DBS and DATABASE_PARAMS rows, the same directory under
    the warehouse; Spark sees the console's database as Hive's; Hive's deserializer reads its CREATE_DATABASE."""
    # given
    clauses = "COMMENT 'made for the witness' WITH DBPROPERTIES ('team'='fin', 'tier'='1')"
    warehouse = Path(twins.config.warehouse)

    # when
    hive_ql(f"CREATE DATABASE {HIVE} {clauses}")
    console(twins, f"CREATE DATABASE {CONSOLE} {clauses}", actor=session_user(spark))

    # then
    assert image(twins, CONSOLE) == image(twins, HIVE)
    assert image(twins, CONSOLE)["row"]["OWNER_TYPE"] == "USER"
    assert (warehouse / f"{HIVE}.db").is_dir() and (warehouse / f"{CONSOLE}.db").is_dir()
    assert described(spark, CONSOLE) == described(spark, HIVE)
    event = NotificationEvent.objects.using(twins.alias).filter(event_type="CREATE_DATABASE").order_by("-pk").first()
    assert event is not None and event.db_name == CONSOLE
    deserializer = spark._jvm.org.apache.hadoop.hive.metastore.messaging.MessageFactory.getInstance().getDeserializer()
    assert deserializer.getCreateDatabaseMessage(event.message).getDB() == CONSOLE


def test_alter_database_writes_what_hive_writes(twins: Metastore, hive_ql: Any, spark: Any) -> None:
    """SET DBPROPERTIES (merged into the existing ones) and SET OWNER leave the same rows on both; SET LOCATION is
    refused by Hive 2.3's parser and by the console's plan for a 2.3 schema alike."""
    # given
    user = session_user(spark)
    hive_ql(f"CREATE DATABASE {HIVE} WITH DBPROPERTIES ('a'='1', 'b'='2')")
    console(twins, f"CREATE DATABASE {CONSOLE} WITH DBPROPERTIES ('a'='1', 'b'='2')", actor=user)

    # when
    for statement in ("SET DBPROPERTIES ('b'='3', 'c'='4')", "SET OWNER ROLE stewards"):
        hive_ql(f"ALTER DATABASE {HIVE} {statement}")
        console(twins, f"ALTER DATABASE {CONSOLE} {statement}", actor=user)

    # then
    assert image(twins, CONSOLE) == image(twins, HIVE)
    assert image(twins, CONSOLE)["params"] == {"a": "1", "b": "3", "c": "4"}
    owner = image(twins, CONSOLE)["row"]
    assert (owner["OWNER_NAME"], owner["OWNER_TYPE"]) == ("stewards", "ROLE")
    with pytest.raises(Exception, match="cannot recognize input near"):
        hive_ql(f"ALTER DATABASE {HIVE} SET LOCATION 'file:/tmp/x'")
    refused = plan_database(twins, parse_alter(f"ALTER DATABASE {CONSOLE} SET LOCATION 'file:/tmp/x'"))  # type: ignore[arg-type]
    assert [b.code for b in refused.blockers] == ["not_in_version"]


def test_drop_database_as_hive_and_undrop_for_spark(twins: Metastore, hive_ql: Any, spark: Any) -> None:
    """DROP DATABASE of an empty database removes its rows and its empty directory on both; the console's revert
    brings it back with the same id, and Spark's Hive client sees it again as before."""
    # given
    warehouse = Path(twins.config.warehouse)
    hive_ql(f"CREATE DATABASE {HIVE} WITH DBPROPERTIES ('k'='v')")
    console(twins, f"CREATE DATABASE {CONSOLE} WITH DBPROPERTIES ('k'='v')", actor=session_user(spark))
    before = read_database_state(twins, CONSOLE)
    seen = described(spark, CONSOLE)

    # when (Spark SQL's DROP DATABASE: HMSHandler.drop_database, as Hive's DDLTask calls it)
    spark.sql(f"DROP DATABASE {HIVE}")
    dropped = console(twins, f"DROP DATABASE {CONSOLE}", actor="steward")

    # then
    assert read_database_state(twins, HIVE) is None and read_database_state(twins, CONSOLE) is None
    assert not (warehouse / f"{HIVE}.db").exists() and not (warehouse / f"{CONSOLE}.db").exists()
    assert not spark.catalog.databaseExists(CONSOLE)

    # and when
    database_execute(plan=database_revert_plan(dropped), actor="steward", source="cli", reason="undrop")

    # then
    assert read_database_state(twins, CONSOLE) == before
    assert (warehouse / f"{CONSOLE}.db").is_dir()
    assert described(spark, CONSOLE) == seen
