"""
Large deletes on PostgreSQL check each foreign key once, after the last statement, instead of PostgreSQL's per-row
triggers (``operations.services.batched_foreign_keys``): the drop deletes and undrops exactly the same rows, a row left
pointing at a deleted key refuses the execution and applies nothing, and a table with a trigger of its own, a
cascading key or a role that may not skip the triggers keeps PostgreSQL's own checks. Large inserts (a merge's
publish) likewise: a row naming a missing key is refused, a referenced row others can see is locked as PostgreSQL's
own check locks it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg2
import psycopg2.errors
import pytest
from django.db import IntegrityError, connections, transaction

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.selectors.metastores import Metastore
from operations.models import Execution
from operations.services import alter as alter_service
from operations.services import batched_foreign_keys as batched_module
from operations.services.alter import alter_preview_statement
from operations.services.batched_foreign_keys import batched_foreign_keys
from operations.services.revert import revert_preview
from tests.fixtures.operations import execute, metastore_dump, warehouse_tree

DROP_TABLE = "DROP TABLE sales.orders"


@pytest.fixture
def postgres(metastore: Metastore, settings: pytest.FixtureRequest) -> Metastore:
    """A PostgreSQL metastore, with every delete batched (the seeded tables are small)."""
    if connections[metastore.alias].vendor != "postgresql":
        pytest.skip("PostgreSQL's per-row foreign-key triggers only")
    settings.CATALOG_BATCHED_FOREIGN_KEY_ROWS = 1  # type: ignore[attr-defined]
    return metastore


@pytest.fixture
def used(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each execution took the batched path (one entry per execution)."""
    seen: list[bool] = []

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        found = batched_foreign_keys(*args, **kwargs)
        seen.append(found is not None)
        return found

    monkeypatch.setattr(alter_service, "batched_foreign_keys", spy)
    return seen


def first_sd(plan: Any) -> int:
    """The first storage descriptor the plan's SDS delete names (its one parameter: PostgreSQL's array literal)."""
    literal = next(s.params[0] for s in plan.steps if s.metastore_table == "SDS")
    return int(literal.strip("{}").split(",")[0])


def test_a_batched_drop_deletes_the_same_rows_and_undrops_exactly(
    postgres: Metastore, warehouse: Path, used: list[bool]
) -> None:
    # given
    rows_before, tree_before = metastore_dump(postgres.alias, events=False), warehouse_tree(warehouse)
    plan = alter_preview_statement(metastore=postgres, statement=DROP_TABLE)

    # when
    dropped = execute(plan)

    # then
    assert used == [True]
    assert dropped.actual_counts == dropped.expected_counts
    assert dropped.actual_counts["PARTITIONS"]["delete"] > 0
    with connections[postgres.alias].cursor() as cursor:
        cursor.execute("SHOW session_replication_role")
        assert cursor.fetchone()[0] == "origin"  # only that transaction skipped the triggers
    revert = execute(revert_preview(execution=Execution.objects.get(pk=dropped.pk)))
    assert revert.actual_counts == revert.expected_counts
    assert (metastore_dump(postgres.alias, events=False), warehouse_tree(warehouse)) == (rows_before, tree_before)


def test_a_row_left_pointing_at_a_deleted_key_refuses_the_drop_and_nothing_is_applied(
    postgres: Metastore, warehouse: Path, used: list[bool]
) -> None:
    """Another table's partition sharing one of the dropped partitions' storage descriptors (a corrupt metastore):
    PostgreSQL's own trigger would refuse the SDS delete; the batched check refuses the execution, naming the key."""
    # given
    plan = alter_preview_statement(metastore=postgres, statement=DROP_TABLE)
    shared_sd = first_sd(plan)
    with allow_metastore_writes(), connections[postgres.alias].cursor() as cursor:
        cursor.execute(
            'SELECT t."TBL_ID" FROM "TBLS" t JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
            "WHERE d.\"NAME\" = 'sales' AND t.\"TBL_NAME\" = 'customers'"
        )
        other = cursor.fetchone()[0]
        cursor.execute(
            'INSERT INTO "PARTITIONS" ("PART_ID", "CREATE_TIME", "LAST_ACCESS_TIME", "PART_NAME", "SD_ID", "TBL_ID") '
            "VALUES (987654, 0, 0, 'x=1', %s, %s)",
            [shared_sd, other],
        )
    rows_before, tree_before = metastore_dump(postgres.alias, events=False), warehouse_tree(warehouse)

    # when
    with pytest.raises(ApplicationError) as refused:
        execute(plan)

    # then
    assert used == [True]
    assert refused.value.code == ErrorCode.EXECUTION_FAILED
    assert "PARTITIONS rows still reference deleted SDS rows" in refused.value.message
    assert f"PARTITIONS.SD_ID = {shared_sd}" in refused.value.message
    assert (metastore_dump(postgres.alias, events=False), warehouse_tree(warehouse)) == (rows_before, tree_before)
    assert Execution.objects.get().state == Execution.State.FAILED
    with connections[postgres.alias].cursor() as cursor:
        cursor.execute("SHOW session_replication_role")
        assert cursor.fetchone()[0] == "origin"  # rolled back with the execution's transaction


def test_without_batching_postgresql_refuses_the_same_drop_itself(
    postgres: Metastore, warehouse: Path, used: list[bool], settings: pytest.FixtureRequest
) -> None:
    """The reference behaviour the batched check reproduces: the per-row trigger refuses the SDS delete."""
    # given
    settings.CATALOG_BATCHED_FOREIGN_KEY_ROWS = 10**9  # type: ignore[attr-defined]
    plan = alter_preview_statement(metastore=postgres, statement=DROP_TABLE)
    shared_sd = first_sd(plan)
    with allow_metastore_writes(), connections[postgres.alias].cursor() as cursor:
        cursor.execute('SELECT MIN("TBL_ID") FROM "TBLS"')
        other = cursor.fetchone()[0]
        cursor.execute(
            'INSERT INTO "PARTITIONS" ("PART_ID", "CREATE_TIME", "LAST_ACCESS_TIME", "PART_NAME", "SD_ID", "TBL_ID") '
            "VALUES (987654, 0, 0, 'x=1', %s, %s)",
            [shared_sd, other],
        )
    rows_before = metastore_dump(postgres.alias, events=False)

    # when
    with pytest.raises(ApplicationError):
        execute(plan)

    # then
    assert used == [False]
    assert metastore_dump(postgres.alias, events=False) == rows_before


@contextmanager
def rolled_back_cursor(metastore: Metastore) -> Iterator[Any]:
    """A cursor in a metastore transaction rolled back at the end: what a test adds there goes with it."""
    with allow_metastore_writes(), transaction.atomic(using=metastore.alias):
        with connections[metastore.alias].cursor() as cursor:
            yield cursor
        transaction.set_rollback(True, using=metastore.alias)


def _deletes(metastore: Metastore) -> tuple:
    return alter_preview_statement(metastore=metastore, statement=DROP_TABLE).steps


def test_a_table_with_a_trigger_of_its_own_keeps_the_per_row_checks(postgres: Metastore) -> None:
    # given
    steps = _deletes(postgres)
    with rolled_back_cursor(postgres) as cursor:
        cursor.execute("CREATE FUNCTION audit_noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN OLD; END $$")
        cursor.execute(
            'CREATE TRIGGER audit AFTER DELETE ON "PARTITION_PARAMS" FOR EACH ROW EXECUTE FUNCTION audit_noop()'
        )

        # when
        found = batched_foreign_keys(cursor, postgres.alias, steps)

        # then
        assert found is None
        cursor.execute("SHOW session_replication_role")
        assert cursor.fetchone()[0] == "origin"


def test_a_cascading_key_keeps_the_per_row_checks(postgres: Metastore) -> None:
    # given
    steps = _deletes(postgres)
    with rolled_back_cursor(postgres) as cursor:
        cursor.execute('CREATE TABLE "AUDIT_PARTS" ("PART_ID" bigint REFERENCES "PARTITIONS" ON DELETE CASCADE)')

        # when
        found = batched_foreign_keys(cursor, postgres.alias, steps)

        # then
        assert found is None


def test_a_role_that_may_not_skip_the_triggers_keeps_them(postgres: Metastore) -> None:
    # given
    steps = _deletes(postgres)
    with rolled_back_cursor(postgres) as cursor:
        cursor.execute("DROP ROLE IF EXISTS ca_plain_dt")
        cursor.execute("CREATE ROLE ca_plain_dt")
        cursor.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO ca_plain_dt")
        cursor.execute("SET LOCAL ROLE ca_plain_dt")

        # when
        found = batched_foreign_keys(cursor, postgres.alias, steps)

        # then
        assert found is None
        cursor.execute("SELECT 1")  # the refused SET left the transaction usable
        assert cursor.fetchone() == (1,)


def test_small_or_non_delete_plans_keep_the_per_row_checks(
    postgres: Metastore, settings: pytest.FixtureRequest
) -> None:
    # given
    steps = _deletes(postgres)
    rename = alter_preview_statement(metastore=postgres, statement="ALTER TABLE sales.orders SET OWNER USER bob").steps

    with connections[postgres.alias].cursor() as cursor:
        # when
        not_deletes = batched_foreign_keys(cursor, postgres.alias, rename)
        settings.CATALOG_BATCHED_FOREIGN_KEY_ROWS = batched_module.DEFAULT_MIN_ROWS  # type: ignore[attr-defined]
        small = batched_foreign_keys(cursor, postgres.alias, steps)

    # then
    assert (not_deletes, small) == (None, None)


def test_a_referencing_table_in_another_schema_is_checked_too(
    postgres: Metastore, warehouse: Path, used: list[bool]
) -> None:
    """A site's own table outside the search path pointing at a partition (NO ACTION): found, and the drop refused."""
    # given
    with allow_metastore_writes(), connections[postgres.alias].cursor() as cursor:
        cursor.execute("CREATE SCHEMA site_audit")
        cursor.execute('CREATE TABLE site_audit.kept ("PART_ID" bigint REFERENCES public."PARTITIONS")')
        cursor.execute(
            'INSERT INTO site_audit.kept SELECT MIN(p."PART_ID") FROM "PARTITIONS" p JOIN "TBLS" t '
            """ON t."TBL_ID" = p."TBL_ID" WHERE t."TBL_NAME" = 'orders'"""
        )
    plan = alter_preview_statement(metastore=postgres, statement=DROP_TABLE)
    rows_before = metastore_dump(postgres.alias, events=False)

    # when
    with pytest.raises(ApplicationError) as refused:
        execute(plan)

    # then
    assert used == [True]
    assert "kept rows still reference deleted PARTITIONS rows" in refused.value.message
    assert metastore_dump(postgres.alias, events=False) == rows_before


# Inserts (a merge's publish) -----------------------------------------------------------------------------------

MISSING_PART = -7


def _a_partition(cursor: Any) -> int:
    cursor.execute('SELECT MIN("PART_ID") FROM "PARTITIONS"')
    return int(cursor.fetchone()[0])


def _insert_param(cursor: Any, part_id: int) -> None:
    cursor.execute(
        'INSERT INTO "PARTITION_PARAMS" ("PART_ID", "PARAM_KEY", "PARAM_VALUE") VALUES (%s, %s, %s)',
        [part_id, "batched.check", "1"],
    )


def _param_checks(cursor: Any, metastore: Metastore, part_id: int) -> batched_module.BatchedInsertChecks | None:
    inserted: dict[str, str | None] = {
        "PARTITION_PARAMS": f'"PART_ID" = {int(part_id)} AND "PARAM_KEY" = \'batched.check\''
    }
    return batched_module.batched_insert_checks(cursor, metastore.alias, inserted, {}, rows=10**6)


def test_an_insert_naming_a_row_that_does_not_exist_is_refused_as_postgresql_refuses_it(postgres: Metastore) -> None:
    """With the per-row triggers off the insert itself goes through; the one check after it refuses the execution,
    naming the table, key and constraint, as PostgreSQL's own trigger refuses the same insert."""
    with rolled_back_cursor(postgres) as cursor:
        # given
        checks = _param_checks(cursor, postgres, MISSING_PART)
        assert checks is not None
        _insert_param(cursor, MISSING_PART)

        # when
        with pytest.raises(ApplicationError) as refused:
            checks.check(cursor)

        # then
        assert refused.value.code == ErrorCode.EXECUTION_FAILED
        assert "PARTITION_PARAMS rows reference PARTITIONS rows that do not exist" in refused.value.message
        assert f"PARTITION_PARAMS.PART_ID = {MISSING_PART}" in refused.value.message
        cursor.execute("SHOW session_replication_role")
        assert cursor.fetchone()[0] == "origin"
    with rolled_back_cursor(postgres) as cursor, pytest.raises(IntegrityError):
        _insert_param(cursor, MISSING_PART)  # the reference behaviour: PostgreSQL's trigger refuses it


def test_a_referenced_row_other_sessions_can_see_is_locked_until_the_commit(postgres: Metastore) -> None:
    """PostgreSQL's per-row check locks the referenced row (``FOR KEY SHARE``) so nobody deletes it before the
    commit; the batched check takes the same lock: another session's delete of the partition waits for it."""
    with rolled_back_cursor(postgres) as cursor:
        # given
        part_id = _a_partition(cursor)
        checks = _param_checks(cursor, postgres, part_id)
        assert checks is not None
        _insert_param(cursor, part_id)

        # when
        checks.check(cursor)

        # then
        other = psycopg2.connect(**_dsn(postgres))
        try:
            with other.cursor() as deleting, pytest.raises(psycopg2.errors.LockNotAvailable):
                deleting.execute("SET lock_timeout = '200ms'")
                deleting.execute('DELETE FROM "PARTITIONS" WHERE "PART_ID" = %s', [part_id])
        finally:
            other.rollback()
            other.close()


def test_an_inserted_table_with_a_trigger_of_its_own_keeps_the_per_row_checks(postgres: Metastore) -> None:
    with rolled_back_cursor(postgres) as cursor:
        # given
        cursor.execute("CREATE FUNCTION audit_noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$")
        cursor.execute(
            'CREATE TRIGGER audit AFTER INSERT ON "PARTITION_PARAMS" FOR EACH ROW EXECUTE FUNCTION audit_noop()'
        )

        # when
        found = _param_checks(cursor, postgres, MISSING_PART)

        # then
        assert found is None
        cursor.execute("SHOW session_replication_role")
        assert cursor.fetchone()[0] == "origin"


def test_an_inserted_table_whose_new_rows_cannot_be_named_keeps_the_per_row_checks(postgres: Metastore) -> None:
    with rolled_back_cursor(postgres) as cursor:
        # when
        found = batched_module.batched_insert_checks(cursor, postgres.alias, {"PARTITION_PARAMS": None}, {}, 10**6)

        # then
        assert found is None


def _dsn(metastore: Metastore) -> dict[str, Any]:
    """Another session on the same metastore database."""
    db = connections[metastore.alias].settings_dict
    return {"host": db["HOST"] or "127.0.0.1", "port": db["PORT"] or 5432, "dbname": db["NAME"], "user": db["USER"]}
