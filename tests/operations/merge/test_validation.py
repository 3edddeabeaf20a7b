"""
Merge input validated like the console's own input (issue 25, case 6), through ``merge_preview`` on the real seeded
metastores: hostile names by the target version's rules, locations outside the target's roots or unsafe after the
location rules, values longer than the target schema's columns; one blocker per kind, counted and capped.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.db import connections

from catalog_admin.db import allow_metastore_writes
from catalog_admin.selectors.metastores import get_metastore
from operations.merge.plan import MergeBlocker, MergePreview
from operations.merge.preview import merge_preview
from operations.merge.reads import MetastoreReader, quoted_for
from operations.merge.request import MergeRequest, parse_location_rule
from operations.merge.validation import SHOWN, shown

pytestmark = [pytest.mark.django_db, pytest.mark.matrix]

RENAMES = (("sales", "sales_imported"), ("marketing", "marketing_imported"))


def _warehouse(alias: str) -> str:
    return get_metastore(alias).config.warehouse_location


def _request(source: str, target: str, databases: tuple[str, ...] = ("sales", "marketing")) -> MergeRequest:
    """The source's warehouse moved into a fresh folder of the target's warehouse (inside its roots)."""
    rule = parse_location_rule(f"{_warehouse(source)}={_warehouse(target)}/imported_from_{source}")
    renames = tuple(r for r in RENAMES if r[0] in databases)
    return MergeRequest(source=source, target=target, databases=databases, renames=renames, location_rules=(rule,))


def _write(alias: str, sql: str, params: list) -> None:
    """One statement on a seeded metastore, inside the test's rolled-back transaction."""
    with allow_metastore_writes(), connections[alias].cursor() as cursor:
        cursor.execute(quoted_for(sql, connections[alias].vendor), params)


def _rename_table(alias: str, database: str, table: str, name: str) -> None:
    _write(
        alias,
        'UPDATE "TBLS" SET "TBL_NAME" = %s WHERE "TBL_NAME" = %s AND "DB_ID" = '
        '(SELECT "DB_ID" FROM "DBS" WHERE "NAME" = %s)',
        [name, table, database],
    )


def _blocker(preview: MergePreview, code: str) -> MergeBlocker:
    found = [b for b in preview.blockers if b.code == code]
    assert len(found) == 1, preview.blockers
    return found[0]


@pytest.fixture
def strict_target(settings) -> str:  # noqa: ANN001 (pytest-django's settings fixture)
    """hive31_pg configured as production is by default: SET LOCATION (and a merge) may not point outside its roots."""
    strict = [replace(c, allow_outside_roots=False) if c.name == "hive31_pg" else c for c in settings.METASTORE_CONFIGS]
    settings.METASTORE_CONFIGS = strict
    return "hive31_pg"


SOURCES_23 = [pytest.param("hive23_pg", id="pg23"), pytest.param("hive23_my", id="mariadb23")]


@pytest.mark.parametrize("source", SOURCES_23)
def test_hostile_table_and_database_names_are_blocked_by_the_target_versions_rules(source: str) -> None:
    """Tables named '..', 'x/y', with a control character and with a quote, and a database named with a quote, are
    one unsafe_name blocker on a 3.1 target, each named with the control character escaped; a 4.0 target (whose
    validateName accepts quotes) refuses the other three only."""
    # given
    _rename_table(source, "sales", "customers", "..")
    _rename_table(source, "sales", "orders", "x/y")
    _rename_table(source, "marketing", "campaigns", "a\x07b")
    _rename_table(source, "marketing", "clicks", "it's")
    _write(source, 'UPDATE "DBS" SET "NAME" = %s WHERE "NAME" = %s', ["o'ps", "ops"])
    ops = MergeRequest(source=source, target="hive31_pg", databases=("o'ps",))
    # when
    into_31 = merge_preview(_request(source, "hive31_pg"))
    into_40 = merge_preview(_request(source, "hive40_pg"))
    database = merge_preview(ops)
    # then
    blocker = _blocker(into_31, "unsafe_name")
    assert blocker.subject == "4 names"
    for name in ("'sales_imported'.'..'", "'sales_imported'.'x/y'", "'marketing_imported'.'a\\x07b'"):
        assert f"table {name}" in blocker.message
    assert "'marketing_imported'.'it's' (not a valid object name on Hive 3.1.0)" in blocker.message
    assert "\x07" not in blocker.message
    assert not into_31.is_executable
    assert _blocker(into_40, "unsafe_name").subject == "3 names"
    assert "it's" not in _blocker(into_40, "unsafe_name").message
    assert "database 'o'ps'" in _blocker(database, "unsafe_name").message


def test_plain_names_and_hive_4_names_pass() -> None:
    """Names Hive 4 accepts and that make one safe directory ('a-b', 'a.b', 'a b') are not blocked on a 4.0 target,
    and plain names on none."""
    # given
    _rename_table("hive31_pg", "sales", "customers", "a-b")
    _rename_table("hive31_pg", "sales", "orders", "a.b")
    # when
    preview = merge_preview(_request("hive31_pg", "hive40_pg", ("sales",)))
    # then
    assert preview.blockers == ()


@pytest.mark.parametrize("source", SOURCES_23)
def test_locations_outside_the_targets_roots_are_blocked(source: str, strict_target: str) -> None:
    """On a target that allows nothing outside its roots, the seeded databases moved into its warehouse by a rule
    pass; a table at file:/etc, one at file:///srv/x (a spelling SQL leaves to the exact check) and a database
    outside every root block, one outside_roots blocker naming the three."""
    # given
    request = _request(source, strict_target)
    assert merge_preview(request).blockers == ()
    table = (
        'UPDATE "SDS" SET "LOCATION" = %s WHERE "SD_ID" = (SELECT t."SD_ID" FROM "TBLS" t JOIN "DBS" d '
        'ON d."DB_ID" = t."DB_ID" WHERE d."NAME" = %s AND t."TBL_NAME" = %s)'
    )
    _write(source, table, ["file:/etc", "sales", "customers"])
    _write(source, table, ["file:///srv/x", "marketing", "campaigns"])
    _write(source, 'UPDATE "DBS" SET "DB_LOCATION_URI" = %s WHERE "NAME" = %s', ["file:/srv/other", "marketing"])
    # when
    preview = merge_preview(request)
    # then
    blocker = _blocker(preview, "outside_roots")
    assert blocker.subject == "3 locations"
    assert "'sales_imported.customers' at 'file:/etc'" in blocker.message
    assert "'marketing_imported.campaigns' at 'file:/srv/x'" in blocker.message
    assert "database 'marketing_imported' at 'file:/srv/other'" in blocker.message
    assert _warehouse(strict_target) in blocker.message  # the roots it may use
    assert [b.code for b in preview.blockers] == ["outside_roots"]


@pytest.mark.parametrize("source", SOURCES_23)
def test_unsafe_locations_are_blocked_even_where_outside_locations_are_allowed(source: str) -> None:
    """A partition location climbing out with '..' and one with a control character are unsafe_location blockers on
    a target that allows locations outside its roots (hive31_pg in the tests); a rule leading to such a place too."""
    # given
    request = _request(source, "hive31_pg", ("sales",))
    partitions = (
        'UPDATE "SDS" SET "LOCATION" = %s WHERE "SD_ID" = (SELECT MIN(p."SD_ID") FROM "PARTITIONS" p '
        'JOIN "TBLS" t ON t."TBL_ID" = p."TBL_ID" WHERE t."TBL_NAME" = %s AND p."PART_NAME" > %s)'
    )
    climbing = f"{_warehouse(source)}/sales.db/orders/../../../../etc"
    _write(source, partitions, [climbing, "orders", ""])
    _write(source, partitions, [f"{_warehouse(source)}/sales.db/orders/x\ny", "orders", "dt=2024-01-02"])
    # when
    preview = merge_preview(request)
    into_climbing = parse_location_rule(f"{_warehouse(source)}/sales.db=file:/a/../b")
    bad_rule = merge_preview(replace(request, location_rules=(*request.location_rules, into_climbing)))
    # then
    blocker = _blocker(preview, "unsafe_location")
    assert blocker.subject == "2 locations"
    assert "'..' segment" in blocker.message and "control character" in blocker.message
    assert "x\\ny" in blocker.message and "x\ny" not in blocker.message
    assert "sales_imported.orders/dt=" in blocker.message
    assert "'sales_imported.customers' at 'file:/a/../b/customers'" in _blocker(bad_rule, "unsafe_location").message


def test_many_offenders_are_counted_and_a_few_named(strict_target: str) -> None:
    """Every partition of sales.orders outside the roots is counted; the stored blocker names the first five and
    stays small."""
    # given
    _write(
        "hive23_pg",
        'UPDATE "SDS" SET "LOCATION" = %s || "SD_ID" WHERE "SD_ID" IN (SELECT p."SD_ID" FROM "PARTITIONS" p '
        'JOIN "TBLS" t ON t."TBL_ID" = p."TBL_ID" WHERE t."TBL_NAME" = %s)',
        ["file:/elsewhere/p", "orders"],
    )
    partitions = MetastoreReader("hive23_pg").scalar(
        'SELECT COUNT(*) FROM "PARTITIONS" p JOIN "TBLS" t ON t."TBL_ID" = p."TBL_ID" WHERE t."TBL_NAME" = %s',
        ["orders"],
    )
    # when
    preview = merge_preview(_request("hive23_pg", strict_target, ("sales",)))
    # then
    blocker = _blocker(preview, "outside_roots")
    assert blocker.subject == f"{partitions} locations" and partitions > SHOWN
    assert blocker.message.count("file:/elsewhere/p") == SHOWN
    assert f"and {partitions - SHOWN} more" in blocker.message
    assert len(blocker.message) < 2_000


def test_values_longer_than_the_target_schemas_columns_are_blocked() -> None:
    """A TABLE_PARAMS value longer than a MariaDB target's MEDIUMTEXT (16,777,215) and a 300-character column comment
    (its COMMENT is varchar(256) there, 4000 on PostgreSQL) block a merge into hive31_my, named by key, without the
    value; into hive40_pg (text, varchar(4000)) the same values pass, as does a 2,000,000-character value."""
    # given
    _write(
        "hive31_pg",
        'INSERT INTO "TABLE_PARAMS" ("TBL_ID", "PARAM_KEY", "PARAM_VALUE") SELECT t."TBL_ID", %s, repeat(%s, %s) '
        'FROM "TBLS" t WHERE t."TBL_NAME" = %s',
        ["huge", "x", 16_777_216, "orders"],
    )
    _write(
        "hive31_pg",
        'INSERT INTO "TABLE_PARAMS" ("TBL_ID", "PARAM_KEY", "PARAM_VALUE") SELECT t."TBL_ID", %s, repeat(%s, %s) '
        'FROM "TBLS" t WHERE t."TBL_NAME" = %s',
        ["big", "y", 2_000_000, "orders"],
    )
    _write(
        "hive31_pg",
        'UPDATE "COLUMNS_V2" SET "COMMENT" = %s WHERE "CD_ID" = (SELECT s."CD_ID" FROM "TBLS" t JOIN "SDS" s '
        'ON s."SD_ID" = t."SD_ID" WHERE t."TBL_NAME" = %s) AND "INTEGER_IDX" = 0',
        ["c" * 300, "customers"],
    )
    # when
    into_mariadb = merge_preview(_request("hive31_pg", "hive31_my", ("sales",)))
    into_postgresql = merge_preview(_request("hive31_pg", "hive40_pg", ("sales",)))
    # then
    blocker = _blocker(into_mariadb, "value_too_long")
    assert blocker.subject == "2 values"
    assert "(PARAM_KEY 'huge'): TABLE_PARAMS.PARAM_VALUE 16,777,216 characters, the target holds 16,777,215" in (
        blocker.message
    )
    assert "COLUMNS_V2.COMMENT 300 characters, the target holds 256" in blocker.message
    assert "'big'" not in blocker.message and "xxxxxxxxxx" not in blocker.message
    assert into_postgresql.blockers == ()


def test_shown_values_are_short_and_escaped() -> None:
    """A shown value is cut with its full length, and control characters are escapes, never raw."""
    # when
    long, control = shown("v" * 2_000_000), shown("a\x00b\x1b[31mc\n")
    # then
    assert long.endswith("(2,000,000 characters)") and len(long) < 120
    assert control == "'a\\x00b\\x1b[31mc\\n'"
