"""
The write guard: outside ``allow_metastore_writes()`` nothing can change a metastore, on every vendor.

Each check runs inside the test's rolled-back transaction; the allowed writes are undone with it.
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DatabaseError, connections, transaction

from catalog_admin.db import MetastoreWriteForbidden, allow_metastore_writes, is_read_only_sql
from catalog_admin.models import ColumnDescriptor, Database, SchemaVersionRow, Sequence

PROBE_ID = 987_654_321
NEW_ID = 987_654_322
PROBE_SEQUENCE = "catalog_admin.tests.probe"
PROBE_TABLE = "ca_guard_probe"


@pytest.fixture
def probe(metastore_alias: str, db: None) -> str:
    """Rows the test may try to change: CDS ``PROBE_ID`` and SEQUENCE_TABLE ``PROBE_SEQUENCE`` = 7."""
    with allow_metastore_writes():
        ColumnDescriptor.objects.using(metastore_alias).create(id=PROBE_ID)
        Sequence.objects.using(metastore_alias).create(name=PROBE_SEQUENCE, next_val=7)
    return metastore_alias


def probe_exists(alias: str, pk: int = PROBE_ID) -> bool:
    return ColumnDescriptor.objects.using(alias).filter(id=pk).exists()


def probe_sequence(alias: str) -> int:
    return Sequence.objects.using(alias).get(name=PROBE_SEQUENCE).next_val


def probe_table_exists(alias: str) -> bool:
    """Whether the temporary probe table exists (checked in a savepoint: a failed query aborts a PG transaction)."""
    try:
        with transaction.atomic(using=alias), connections[alias].cursor() as cursor:
            cursor.execute(f"SELECT COUNT(*) FROM {PROBE_TABLE}")
    except DatabaseError:
        return False
    return True


def drop_probe_table(alias: str) -> None:
    """Temporary tables outlive a MySQL rollback (and a plain DROP TABLE would commit there): drop it explicitly."""
    temporary = "TEMPORARY " if connections[alias].vendor == "mysql" else ""
    with allow_metastore_writes(), connections[alias].cursor() as cursor:
        cursor.execute(f"DROP {temporary}TABLE {PROBE_TABLE}")


def raw_statements(alias: str) -> dict[str, str]:
    """One raw statement of each kind, quoted for ``alias``'s backend (and its case of table names)."""
    connection = connections[alias]
    q = connection.ops.quote_name
    cds, cd_id = q("CDS"), q("CD_ID")
    statements = {
        "insert": f"INSERT INTO {cds} ({cd_id}) VALUES ({NEW_ID})",
        "update": (
            f"UPDATE {q('SEQUENCE_TABLE')} SET {q('NEXT_VAL')} = 99 WHERE {q('SEQUENCE_NAME')} = '{PROBE_SEQUENCE}'"
        ),
        "delete": f"DELETE FROM {cds} WHERE {cd_id} = {PROBE_ID}",
        "create": f"CREATE TEMPORARY TABLE {PROBE_TABLE} (x INTEGER)",
        "select_for_update": f"SELECT {cd_id} FROM {cds} WHERE {cd_id} = {PROBE_ID} FOR UPDATE",
    }
    if connection.vendor == "postgresql":
        statements["data_modifying_cte"] = (
            f"WITH gone AS (DELETE FROM {cds} WHERE {cd_id} = {PROBE_ID} RETURNING 1) SELECT COUNT(*) FROM gone"
        )
        statements["statement_after_savepoint"] = f"SAVEPOINT probe; DELETE FROM {cds} WHERE {cd_id} = {PROBE_ID}"
        statements["lock_hidden_by_comment_quote"] = (
            f"SELECT {cd_id} FROM {cds} -- don't wait\nWHERE {cd_id} = {PROBE_ID} FOR UPDATE -- it's short"
        )
    return statements


RAW_KINDS = ("insert", "update", "delete", "create", "select_for_update")
POSTGRESQL_KINDS = ("data_modifying_cte", "statement_after_savepoint", "lock_hidden_by_comment_quote")
VENDORS = {config.alias: config.vendor for config in settings.METASTORE_CONFIGS}


def raw_cases(*, runnable: bool = False) -> list:
    """(alias, kind) pairs that apply; ``runnable``: only statements the vendor can execute."""
    cases = []
    for alias, vendor in VENDORS.items():
        for kind in RAW_KINDS + (POSTGRESQL_KINDS if vendor == "postgresql" else ()):
            if not (runnable and vendor == "sqlite" and kind == "select_for_update"):  # SQLite has no FOR UPDATE
                cases.append(pytest.param(alias, kind, id=f"{alias}-{kind}"))
    return cases


# How to observe what a statement changes: the observation differs after it ran, not after it was refused.
EFFECTS = {
    "insert": lambda alias: probe_exists(alias, NEW_ID),
    "update": probe_sequence,
    "delete": probe_exists,
    "create": probe_table_exists,
    "data_modifying_cte": probe_exists,
    "statement_after_savepoint": probe_exists,
}

# What the reading statements return when allowed.
ROWS = {"select_for_update": [(PROBE_ID,)], "lock_hidden_by_comment_quote": [(PROBE_ID,)], "data_modifying_cte": [(1,)]}


@pytest.mark.parametrize(("metastore_alias", "kind"), raw_cases(), indirect=["metastore_alias"])
def test_raw_write_is_refused_and_changes_nothing(probe, kind):
    # given
    statement = raw_statements(probe)[kind]
    effect = EFFECTS.get(kind)
    before = effect(probe) if effect else None

    # when / then
    with pytest.raises(MetastoreWriteForbidden, match=f"metastore '{probe}'"), connections[probe].cursor() as cursor:
        cursor.execute(statement)
    if effect:
        assert effect(probe) == before


@pytest.mark.parametrize(("metastore_alias", "kind"), raw_cases(runnable=True), indirect=["metastore_alias"])
def test_raw_write_runs_inside_allow_metastore_writes(probe, kind):
    # given
    statement = raw_statements(probe)[kind]
    effect = EFFECTS.get(kind)
    before = effect(probe) if effect else None

    # when
    with allow_metastore_writes(), connections[probe].cursor() as cursor:
        cursor.execute(statement)
        rows = [tuple(row) for row in cursor.fetchall()] if cursor.description else None

    # then
    if effect:
        assert effect(probe) != before
    if kind in ROWS:
        assert rows == ROWS[kind]
    if kind == "create":
        drop_probe_table(probe)
        assert not probe_table_exists(probe)


def test_orm_writes_are_refused_and_change_nothing(probe):
    # given
    alias = probe
    attempts = {
        "create": lambda: ColumnDescriptor.objects.using(alias).create(id=NEW_ID),
        "save": lambda: Sequence(name=PROBE_SEQUENCE, next_val=99).save(using=alias),
        "update": lambda: Sequence.objects.using(alias).filter(name=PROBE_SEQUENCE).update(next_val=99),
        "delete": lambda: ColumnDescriptor.objects.using(alias).filter(id=PROBE_ID).delete(),
        "bulk_create": lambda: ColumnDescriptor.objects.using(alias).bulk_create([ColumnDescriptor(id=NEW_ID)]),
    }
    if connections[alias].features.has_select_for_update:
        attempts["select_for_update"] = lambda: list(
            ColumnDescriptor.objects.using(alias).select_for_update().filter(id=PROBE_ID)
        )

    # when
    refused = []
    for name, attempt in attempts.items():
        with pytest.raises(MetastoreWriteForbidden), transaction.atomic(using=alias):
            attempt()
        refused.append(name)

    # then
    assert refused == list(attempts)
    assert probe_exists(alias)
    assert not probe_exists(alias, NEW_ID)
    assert probe_sequence(alias) == 7


def test_orm_writes_run_inside_allow_metastore_writes(probe):
    # given
    alias = probe

    # when
    with allow_metastore_writes():
        ColumnDescriptor.objects.using(alias).create(id=NEW_ID)
        updated = Sequence.objects.using(alias).filter(name=PROBE_SEQUENCE).update(next_val=99)
        deleted, _ = ColumnDescriptor.objects.using(alias).filter(id=PROBE_ID).delete()
        locked = list(ColumnDescriptor.objects.using(alias).select_for_update().filter(id=NEW_ID))

    # then
    assert (updated, deleted, len(locked)) == (1, 1, 1)
    assert probe_exists(alias, NEW_ID)
    assert not probe_exists(alias)
    assert probe_sequence(alias) == 99


def test_reads_and_savepoints_work_without_permission(metastore):
    # given
    alias = metastore.alias

    # when: SAVEPOINT, nested SAVEPOINT + RELEASE SAVEPOINT, ROLLBACK TO SAVEPOINT, all through the guard
    with transaction.atomic(using=alias):
        outer = transaction.savepoint(using=alias)
        versions = list(SchemaVersionRow.objects.using(alias).values_list("schema_version", flat=True))
        databases = Database.objects.on(metastore).count()
        with transaction.atomic(using=alias):
            column_descriptors = ColumnDescriptor.objects.using(alias).count()
        transaction.savepoint_rollback(outer, using=alias)
        databases_after_rollback = Database.objects.on(metastore).count()

    # then
    assert versions == [str(metastore.schema.version)]
    assert databases >= 3  # the seeded sales, marketing and ops
    assert column_descriptors > 0
    assert databases_after_rollback == databases


def test_savepoint_rollback_undoes_an_allowed_write(probe):
    # given
    alias = probe

    # when
    with transaction.atomic(using=alias):
        savepoint = transaction.savepoint(using=alias)
        with allow_metastore_writes():
            ColumnDescriptor.objects.using(alias).filter(id=PROBE_ID).delete()
        deleted = not probe_exists(alias)
        transaction.savepoint_rollback(savepoint, using=alias)

    # then
    assert deleted
    assert probe_exists(alias)


def test_permission_is_nestable_and_ends_with_the_block(probe):
    # given
    alias = probe
    update = Sequence.objects.using(alias).filter(name=PROBE_SEQUENCE).update

    # when
    with allow_metastore_writes():
        with allow_metastore_writes():
            update(next_val=8)
        update(next_val=9)

    # then
    assert probe_sequence(alias) == 9
    with pytest.raises(MetastoreWriteForbidden), transaction.atomic(using=alias):
        update(next_val=10)
    assert probe_sequence(alias) == 9


@pytest.mark.django_db
def test_console_database_is_not_guarded():
    # when
    user = get_user_model().objects.create_user(username="guard-check", password="x")

    # then
    assert user.pk is not None
    assert "default" not in {c.alias for c in settings.METASTORE_CONFIGS}


READ_ONLY = [
    "SELECT 1",
    "  select * from t",
    'SELECT "DBS"."NAME" FROM "DBS" WHERE "DBS"."DB_ID" = %s LIMIT 21',
    "SELECT `NAME` FROM `DBS`",
    "WITH x AS (SELECT 1 AS n) SELECT n FROM x",
    "SELECT 'DROP TABLE t; DELETE FROM t' FROM t",
    "SELECT 'it''s; update' FROM t",
    'SELECT "UPDATE", "delete" FROM t',
    "SELECT `insert`, `create` FROM t",
    "SELECT created_at, deleted, updated_by, insert_time FROM t",
    "SELECT 1 -- update later\n",
    "SELECT 1 /* delete me */ FROM t",
    "SELECT * FROM t WHERE note = 'FOR UPDATE'",
    "EXPLAIN SELECT * FROM t",
    "SHOW TABLES",
    "DESCRIBE t",
    "VALUES (1)",
    "PRAGMA table_info(t)",
    'SAVEPOINT "s1_x1"',
    'RELEASE SAVEPOINT "s1_x1"',
    'ROLLBACK TO SAVEPOINT "s1_x1"',
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "SET TIME ZONE 'UTC'",
    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
    "SELECT 1;",
]
WRITES = [
    "",
    "INSERT INTO t VALUES (1)",
    "UPDATE t SET a = 1",
    "DELETE FROM t",
    "MERGE INTO t USING s ON true WHEN MATCHED THEN DELETE",
    "TRUNCATE t",
    "DROP TABLE t",
    "ALTER TABLE t ADD c INT",
    "CREATE TABLE t (a INT)",
    "CREATE TEMPORARY TABLE t (a INT)",
    "GRANT ALL ON t TO u",
    "REVOKE ALL ON t FROM u",
    "REPLACE INTO t VALUES (1)",
    "LOCK TABLE t",
    "VACUUM",
    "COPY t FROM '/tmp/x'",
    "CALL p()",
    "/* comment */ DELETE FROM t",
    "SELECT * FROM t FOR UPDATE",
    "select * from t for update nowait",
    "SELECT * FROM t FOR SHARE",
    "SELECT * FROM t FOR NO KEY UPDATE",
    "SELECT * FROM t FOR KEY SHARE",
    "SELECT * FROM t LOCK IN SHARE MODE",
    "SELECT * INTO t2 FROM t",
    "SELECT * FROM t INTO OUTFILE '/tmp/x'",
    "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
    "WITH d AS (UPDATE t SET a = 1 RETURNING *) SELECT * FROM d",
    "SELECT 'x' FROM t; DELETE FROM t",
    "SET TRANSACTION READ WRITE",
    "BEGIN READ WRITE",
    "SET default_transaction_read_only = off",
    # Statements after a harmless one: psycopg2 runs them all.
    "BEGIN; DELETE FROM t",
    "SAVEPOINT s; DROP TABLE t",
    "SET x = 1; UPDATE t SET a = 1",
    "SELECT 1; VACUUM",
    # Quotes inside comments must not open a literal that hides the rest.
    "SELECT a -- don't lock\nFROM t FOR UPDATE -- it's fine",
    "SELECT 1 /* it's */ FROM t FOR UPDATE /* it's */",
    # Backslash escapes (MySQL strings, PostgreSQL E'' strings) must not close a literal early.
    "SELECT 'a\\'' , 'b' FROM t FOR UPDATE -- '",
    "WITH x AS (SELECT E'\\'' AS q), d AS (DELETE FROM t RETURNING 1) SELECT ''' FROM d",
    "WITH a AS (SELECT E'\\'' AS q, 1 # 1 AS r), d AS (DELETE FROM t RETURNING 1) SELECT '' FROM d",
    # MySQL: '#' starts a comment, but only in MySQL; "--" needs a space there; /*! … */ is executed.
    "SELECT a # 1 FROM t FOR UPDATE",
    "SELECT a--1 FROM t FOR UPDATE",
    "SELECT * FROM t /*! FOR UPDATE */",
    # PostgreSQL dollar quoting and SQLite bracket identifiers.
    "SELECT $$'$$ FROM t FOR UPDATE --'",
    "SELECT [a'] FROM t; DELETE FROM t --']",
]


@pytest.mark.parametrize("sql", READ_ONLY)
def test_is_read_only_sql_accepts_reads(sql):
    assert is_read_only_sql(sql)


@pytest.mark.parametrize("sql", WRITES)
def test_is_read_only_sql_refuses_writes(sql):
    assert not is_read_only_sql(sql)


PLACEHOLDERS = ", ".join(["%s"] * 5_000)


@pytest.mark.parametrize("sql", [*READ_ONLY, *WRITES])
def test_a_run_of_placeholders_changes_no_verdict(sql):
    """A 5,000-placeholder list (scanned as one placeholder, issue 29) spliced into a statement, inside quotes and
    comments too, gives the verdict of the same statement with a single placeholder there."""
    for position in sorted({0, len(sql) // 3, len(sql) // 2, len(sql)}):
        one = sql[:position] + " %s " + sql[position:]
        many = sql[:position] + f" {PLACEHOLDERS} " + sql[position:]
        assert is_read_only_sql(many) == is_read_only_sql(one), (sql, position)


@pytest.mark.parametrize("comment", ["--", "#"])
def test_a_comment_ending_inside_a_run_of_placeholders_hides_nothing(comment):
    """A line break between placeholders ends a ``--`` (or MySQL ``#``) comment: the write after it is refused."""
    # given
    sql = f"SELECT a FROM t WHERE a IN ({comment} %s, %s,\n%s, %s) FOR UPDATE"

    # when
    verdict = is_read_only_sql(sql)

    # then
    assert not verdict
    assert is_read_only_sql(sql.removesuffix(" FOR UPDATE"))
