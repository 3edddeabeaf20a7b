"""The merge pipe's SQL (PostgreSQL to PostgreSQL) writes exactly what the program's Python path writes: the location
rules on tricky and random locations, and every unit of a real plan (the default test metastore)."""

from __future__ import annotations

import random
import sys

import pytest
from django.conf import settings
from django.db import connections

from operations.merge.copy_plan import ID_TABLES, build_plan
from operations.merge.pipe_sql import PYTHON_WHITESPACE, location_rewrite
from operations.merge.request import MergeRequest, parse_location_rule
from operations.merge.scope import CARRIED_TABLES, tally_sql
from operations.spark.programs import merge as program
from operations.spark.programs.merge import location_rewriter

ALIAS = "hive31_pg"  # the quick tier's metastore
pytestmark = pytest.mark.django_db(databases=[ALIAS])

RULES = [
    ("file:/warehouse", "hdfs://new-ns/wh"),
    ("file:/warehouse/a", "s3a://bucket/a%20b"),  # the longer prefix wins; '%' is not a driver placeholder
    ("hdfs://ns/warehouse", "hdfs://ns2/it's"),
    ("file:///other/", "file:/moved"),  # not normalized: its own length cuts the path, as rewrite_prefix does
]
LOCATIONS = [
    None, "", "   ", "/", "//", "file:", "file:/", "file://", "file:///", "/warehouse", "/warehouse/", "/warehouse/a/b",
    "//warehouse/a", "file:/warehouse", "file:/warehouse/", "file:///warehouse/a//", "file:////warehouse/a",
    "file://localhost/warehouse/a", "file://localhostfoo/x", "file://host/warehouse", "file:/warehousex/a",
    "hdfs://ns/warehouse", "hdfs://ns/warehouse/t/p=1", "hdfs://ns/warehousex", "HDFS://ns/warehouse/x",
    " \u3000file:/warehouse/a\t\n", "\x1cfile:/warehouse/a\u2028", "file:/other/x", "file:/other", "s3a://b/w%20x",
    "file:/warehouse/it's/a", "file:/warehouse/ünï/cödé",
]  # fmt: skip


def _rewritten_by_sql(locations: list[str | None]) -> list[str | None]:
    laterals, expression = location_rewrite('v."LOCATION"', RULES, "loc")
    rows = ", ".join(["(%s::int, %s::text)"] * len(locations))
    sql = f'SELECT {expression} FROM (VALUES {rows}) AS v(i, "LOCATION") {laterals} ORDER BY v.i'
    params = [value for pair in enumerate(locations) for value in pair]
    with connections[ALIAS].cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


def test_the_sql_rewrite_equals_the_python_rewrite_on_tricky_locations() -> None:
    # given
    python = location_rewriter([list(rule) for rule in RULES])
    # when
    rewritten = _rewritten_by_sql(LOCATIONS)
    # then
    assert rewritten == [python(location) for location in LOCATIONS]
    assert rewritten[LOCATIONS.index("/warehouse/a/b")] == "s3a://bucket/a%20b/b"
    assert rewritten[LOCATIONS.index("hdfs://ns/warehousex")] == "hdfs://ns/warehousex"


def test_the_sql_rewrite_equals_the_python_rewrite_on_random_locations() -> None:
    """Random spellings of the rules' prefixes and of the pieces normalization looks at, in random order."""
    # given
    generator = random.Random(20261127)
    locations = [_random_location(generator) for _ in range(3000)]
    python = location_rewriter([list(rule) for rule in RULES])
    # when
    rewritten = _rewritten_by_sql(locations)
    # then
    mismatches = [(loc, sql) for loc, sql in zip(locations, rewritten, strict=True) if sql != python(loc)]
    assert mismatches == []
    assert sum(sql != loc for loc, sql in zip(locations, rewritten, strict=True)) > 300  # hundreds rewritten


def _random_location(generator: random.Random) -> str:
    spaces, prefixes = ["", " ", "\t", "\u3000"], ["/warehouse", "file:/warehouse", "file:///warehouse", "/other"]
    prefixes += ["file://localhost/warehouse", "hdfs://ns/warehouse", "file:///other", "//warehouse", "file:/"]
    pieces = ["/", "//", "file:", "file://", "localhost", "warehouse", "a", "other", "hdfs://ns", "%", "'", "ü"]
    head = generator.choice([*prefixes, *pieces])
    tail = "".join(generator.choices(pieces, k=generator.randint(0, 4)))
    return generator.choice(spaces) + head + tail + generator.choice(spaces)


def test_the_whitespace_btrim_strips_is_what_python_strips() -> None:
    assert set(PYTHON_WHITESPACE) == {c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()}


def test_every_piped_unit_holds_the_rows_the_python_path_writes() -> None:
    """PostgreSQL to PostgreSQL, every step of a real plan (storage descriptors with locations included) has a SQL
    form, and each of its units selects exactly the rows the program's Python path transforms (ids shifted, the
    database renamed, the warehouse rewritten, other locations as stored)."""
    # given
    warehouse = next(c.warehouse_location for c in settings.METASTORE_CONFIGS if c.name == ALIAS)
    rule = parse_location_rule(f"{warehouse}/sales.db=hdfs://new-ns/warehouse/sales_imported.db")
    request = MergeRequest(ALIAS, ALIAS, ("sales", "marketing"), (("sales", "sales_imported"),), (rule,))
    with connections[ALIAS].cursor() as cursor:
        cursor.execute("""SELECT "DB_ID" FROM "DBS" WHERE "NAME" IN ('sales', 'marketing')""")
        database_ids = sorted(row[0] for row in cursor.fetchall())
    offsets = {name: 1_000 * (index + 1) for index, name in enumerate(ID_TABLES)}
    id_spans = {}
    with connections[ALIAS].cursor() as cursor:
        for table in CARRIED_TABLES:
            if table.id_column:
                cursor.execute(tally_sql(table, tuple(database_ids), "postgresql"))
                _rows, low, high, *_keys = cursor.fetchone()
                id_spans.update({table.name: (low, high)} if low is not None else {})
    # when
    plan = build_plan(request, database_ids, offsets, [], id_spans=id_spans, batch_ids=7)
    # then
    steps = [step for step in plan["steps"] if step["ranges"]]
    assert {step["table"] for step in steps} >= {"SDS", "SERDES", "PARTITIONS", "PART_COL_STATS", "DBS"}
    assert [step["table"] for step in steps if not step.get("pipe_select")] == []
    rewritten = 0
    for step in steps:
        for low, high in step["ranges"]:
            python = list(program._transformed(plan, step, program._read(plan, step, low, high)))
            with connections[ALIAS].cursor() as cursor:
                cursor.execute(step["pipe_select"], {"low": low, "high": high})
                piped = cursor.fetchall()
            assert sorted(piped, key=repr) == sorted(python, key=repr), (step["table"], low)
            rewritten += sum("hdfs://new-ns/warehouse/sales_imported.db" in repr(row) for row in piped)
    assert rewritten > 0
