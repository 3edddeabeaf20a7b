"""
The notification events a merge writes on real PostgreSQL targets of Hive 3.1 and 4.0: one CREATE_DATABASE per
database, one CREATE_TABLE per table, ADD_PARTITION in batches of Hive's MSCK batch size, ids continuing
NOTIFICATION_SEQUENCE, messages in the target version's format; none when the target's events are off; none when the
publishing transaction fails. Its revert writes DROP_TABLE and DROP_DATABASE.
"""

from __future__ import annotations

import base64
import dataclasses
import gzip
import json

import pytest
from django.conf import settings
from django.db import connections

from catalog_admin.db import allow_metastore_writes
from catalog_admin.selectors.metastores import get_metastore
from operations.merge import events as merge_events
from operations.merge.execute import merge_execute
from operations.merge.preview import merge_preview
from operations.merge.reads import MetastoreReader
from operations.merge.request import MergeRequest, parse_location_rule
from operations.merge.revert import merge_revert
from operations.models import MergeImport

pytestmark = [pytest.mark.matrix, pytest.mark.slow]

RENAMES = (("marketing", "marketing_imported"), ("sales", "sales_imported"))


def _request(source: str, target: str) -> MergeRequest:
    return MergeRequest(source=source, target=target, databases=("marketing", "sales"), renames=RENAMES)


def _events_after(alias: str, event_id: int) -> list[tuple]:
    reader = MetastoreReader(alias)
    return reader.rows(
        'SELECT "EVENT_ID", "EVENT_TYPE", "DB_NAME", "TBL_NAME", "MESSAGE", "MESSAGE_FORMAT" FROM "NOTIFICATION_LOG" '
        'WHERE "EVENT_ID" >= %s ORDER BY "EVENT_ID"',
        [event_id],
    )


def _next_event_id(alias: str) -> int:
    rows = MetastoreReader(alias).rows('SELECT "NEXT_EVENT_ID" FROM "NOTIFICATION_SEQUENCE"')
    return int(rows[0][0]) if rows else 1


def _decoded(message: str, message_format: str) -> dict:
    if message_format.startswith("gzip"):
        message = gzip.decompress(base64.b64decode(message)).decode()
    return json.loads(message)


def _imported_tables(alias: str) -> dict[tuple[str, str], int]:
    """(database, table) → partitions, of the imported databases."""
    rows = MetastoreReader(alias).rows(
        'SELECT d."NAME", t."TBL_NAME", COUNT(p."PART_ID") FROM "TBLS" t JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
        'LEFT JOIN "PARTITIONS" p ON p."TBL_ID" = t."TBL_ID" WHERE d."NAME" IN (%s, %s) '
        'GROUP BY d."NAME", t."TBL_NAME"',
        [new for _, new in RENAMES],
    )
    return {(d, t): int(n) for d, t, n in rows}


@pytest.mark.parametrize(("version", "message_format"), [("3.1.0", "json-0.2"), ("4.0.0", "gzip(json-2.0)")])
def test_a_merge_writes_the_events_hive_writes_for_what_it_creates(
    version: str, message_format: str, merge_target, monkeypatch
) -> None:
    """Databases, then each table and its partitions in batches: counts, names, decoded messages naming every
    partition once, consecutive ids from NOTIFICATION_SEQUENCE, which moves past them."""
    # given
    monkeypatch.setattr(merge_events, "ADD_PARTITION_BATCH", 4)  # the seeded tables hold 4 to 48 partitions
    target = merge_target(version)
    first = _next_event_id(target)
    request = _request("hive31_pg", target)
    # when
    merge = merge_execute(request, merge_preview(request))
    # then
    assert merge.state == MergeImport.State.PUBLISHED
    rows = _events_after(target, first)
    tables = _imported_tables(target)
    assert [r[0] for r in rows] == list(range(first, first + len(rows)))
    assert _next_event_id(target) == first + len(rows)
    assert {r[5] for r in rows} == {message_format}
    kinds = [r[1] for r in rows]
    assert kinds.count("CREATE_DATABASE") == 2
    assert kinds.count("CREATE_TABLE") == len(tables)
    assert kinds.count("ADD_PARTITION") == sum(-(-n // 4) for n in tables.values())
    databases = [r[2] for r in rows if r[1] == "CREATE_DATABASE"]
    assert sorted(databases) == ["marketing_imported", "sales_imported"]
    created = {(r[2], r[3]) for r in rows if r[1] == "CREATE_TABLE"}
    assert created == set(tables)
    added: dict[tuple[str, str], int] = {}
    for _, kind, database, table, message, fmt in rows:
        decoded = _decoded(message, fmt)
        if kind == "CREATE_DATABASE":
            assert decoded["db"] == database and json.loads(decoded["dbJson"])["1"]["str"] == database
            assert ("cat" in decoded) == (version == "4.0.0")
        if kind == "ADD_PARTITION":
            assert (decoded["db"], decoded["table"]) == (database, table)
            assert 1 <= len(decoded["partitions"]) == len(decoded["partitionListJson"]) <= 4
            added[(database, table)] = added.get((database, table), 0) + len(decoded["partitions"])
    assert added == {key: n for key, n in tables.items() if n}
    # when
    reverted_from = _next_event_id(target)
    merge_revert(merge)
    # then: what Hive writes for DROP DATABASE … CASCADE, each table's DROP_TABLE before its database's DROP_DATABASE
    drops = _events_after(target, reverted_from)
    assert [r[1] for r in drops].count("DROP_TABLE") == len(tables)
    assert [(r[1], r[2]) for r in drops if r[1] == "DROP_DATABASE"] == [("DROP_DATABASE", d) for d in databases]
    for _, kind, database, table, message, fmt in drops:
        decoded = _decoded(message, fmt)
        assert decoded["db"] == database and (kind == "DROP_DATABASE" or decoded["table"] == table)
    last_table = {d: max(i for i, r in enumerate(drops) if r[1] == "DROP_TABLE" and r[2] == d) for d in databases}
    assert all(last_table[r[2]] < i for i, r in enumerate(drops) if r[1] == "DROP_DATABASE")


def test_a_big_table_is_added_in_batches_of_hives_size(merge_target) -> None:
    """6,500 partitions arrive as ADD_PARTITION events of 3,000, 3,000 and 500 partitions (Hive's MSCK batch), each
    message far below what one statement may carry."""
    # given
    source, target = merge_target("2.3.0"), merge_target("3.1.0")
    _add_partitions(source, "sales", "orders", 6500)
    first = _next_event_id(target)
    request = MergeRequest(source=source, target=target, databases=("sales",), renames=(("sales", "sales_big"),))
    # when
    merge_execute(request, merge_preview(request))
    # then
    rows = [r for r in _events_after(target, first) if r[1] == "ADD_PARTITION" and r[3] == "orders"]
    sizes = [len(_decoded(r[4], r[5])["partitions"]) for r in rows]
    expected = MetastoreReader(source).scalar(
        'SELECT COUNT(*) FROM "PARTITIONS" p JOIN "TBLS" t ON t."TBL_ID" = p."TBL_ID" WHERE t."TBL_NAME" = %s',
        ["orders"],
    )
    assert sum(sizes) == expected > 6500
    assert sizes[:2] == [3000, 3000] and max(sizes) <= merge_events.ADD_PARTITION_BATCH
    assert max(len(r[4]) for r in rows) < 8 * 1024 * 1024


def test_no_events_when_the_targets_events_are_off(merge_target) -> None:
    """A target whose events are off (METASTORE_EVENTS_<NAME>=off) gets the rows and no NOTIFICATION_LOG row."""
    # given
    target = merge_target("3.1.0")
    settings.METASTORE_CONFIGS = [
        dataclasses.replace(c, events=False) if c.name == target else c for c in settings.METASTORE_CONFIGS
    ]
    first = _next_event_id(target)
    request = _request("hive31_pg", target)
    # when
    merge = merge_execute(request, merge_preview(request))
    # then
    assert merge.state == MergeImport.State.PUBLISHED
    assert _events_after(target, first) == []


def test_a_failed_publish_writes_no_events(merge_target, monkeypatch) -> None:
    """Events and rows share the publishing transaction: a failure after the events rolls both back."""
    # given
    target = merge_target("4.0.0")
    first = _next_event_id(target)
    request = _request("hive31_pg", target)

    def fail(merge: MergeImport, prebuilt: merge_events.PrebuiltEvents | None = None) -> dict:
        merge_events.write_merge_events(merge, prebuilt)
        raise RuntimeError("injected after the events")

    monkeypatch.setattr("operations.merge.execute.write_merge_events", fail)
    # when
    with pytest.raises(RuntimeError):
        merge_execute(request, merge_preview(request))
    # then
    assert _events_after(target, first) == []
    assert _next_event_id(target) == first
    assert MetastoreReader(target).scalar('SELECT COUNT(*) FROM "DBS" WHERE "NAME" = %s', ["sales_imported"]) == 0


@pytest.mark.parametrize(
    ("source", "target_version", "kind"),
    [
        ("2.3.0", "3.1.0", "pg"),
        ("hive31_pg", "3.1.0", "pg"),
        ("hive31_pg", "4.0.0", "pg"),
        ("hive31_pg", "3.1.0", "my"),
    ],
)
def test_the_prebuilt_events_are_the_ones_built_from_the_published_rows(
    source: str, target_version: str, kind: str, merge_target, monkeypatch
) -> None:
    """The events built from the source's rows before the publish (the copy plan's transforms: ids shifted, databases
    renamed, locations rewritten, columns filled across versions) are, byte for byte, the ones built from the rows
    the publish wrote, for the same merge and time: the publishing transaction only numbers and inserts them."""
    # given
    monkeypatch.setattr(merge_events, "ADD_PARTITION_BATCH", 4)
    source = source if source.startswith("hive") else merge_target(source)
    target = merge_target(target_version, kind)
    warehouse = {c.name: c.warehouse_location for c in settings.METASTORE_CONFIGS}
    rule = parse_location_rule(f"{warehouse[source]}={warehouse[target]}/imported")
    request = MergeRequest(
        source=source, target=target, databases=("marketing", "sales"), renames=RENAMES, location_rules=(rule,)
    )
    inserted: list[tuple[list, int]] = []
    prebuilt: list[object] = []
    real_insert, real_result = merge_events.insert_events, merge_events.PrebuiltEvents.result

    def insert(metastore, rows, count, now):  # noqa: ANN001, ANN202 - a spy
        rows = list(rows)
        inserted.append((rows, now))
        return real_insert(metastore, rows, count, now)

    def result(self):  # noqa: ANN001, ANN202 - a spy
        built = real_result(self)
        prebuilt.append(built)
        return built

    monkeypatch.setattr(merge_events, "insert_events", insert)
    monkeypatch.setattr(merge_events.PrebuiltEvents, "result", result)
    # when
    merge = merge_execute(request, merge_preview(request))
    # then
    assert merge.state == MergeImport.State.PUBLISHED
    assert len(prebuilt) == 1 and prebuilt[0] is not None, "the events were built before the publish"
    [(rows, now)] = inserted
    metastore = get_metastore(target)
    from_published = list(merge_events._rows(metastore, merge_events._imported(merge), now))
    assert [r[0] for r in rows].count("ADD_PARTITION") >= 3
    assert rows == from_published


def _add_partitions(alias: str, database: str, table: str, count: int) -> None:
    """``count`` more partitions of ``database.table`` (one string key value each, no storage descriptor), committed."""
    reader = MetastoreReader(alias)
    tbl_id = reader.scalar(
        'SELECT t."TBL_ID" FROM "TBLS" t JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
        'WHERE d."NAME" = %s AND t."TBL_NAME" = %s',
        [database, table],
    )
    keys = reader.rows('SELECT "PKEY_NAME" FROM "PARTITION_KEYS" WHERE "TBL_ID" = %s ORDER BY "INTEGER_IDX"', [tbl_id])
    start = reader.scalar('SELECT MAX("PART_ID") FROM "PARTITIONS"') + 1
    name = "/".join(f"{k}=x' || n || '" for (k,) in keys)
    with allow_metastore_writes(), connections[alias].cursor() as cursor:
        cursor.execute(
            'INSERT INTO "PARTITIONS" ("PART_ID", "CREATE_TIME", "LAST_ACCESS_TIME", "PART_NAME", "SD_ID", "TBL_ID") '
            f"SELECT %s + n, 0, 0, '{name}', NULL, %s FROM generate_series(0, %s) n",
            [start, tbl_id, count - 1],
        )
        for index, _ in enumerate(keys):
            cursor.execute(
                'INSERT INTO "PARTITION_KEY_VALS" ("PART_ID", "PART_KEY_VAL", "INTEGER_IDX") '
                "SELECT %s + n, 'x' || n, %s FROM generate_series(0, %s) n",
                [start, index, count - 1],
            )
