"""
ANALYZE TABLE … COMPUTE STATISTICS [NOSCAN | FOR COLUMNS] on the suite's metastores, with the seeded real files: the
preview (units, files, bytes, statements, blockers), the analyze program in this process (its Spark path and the
comparison with Spark's own ANALYZE are in ``tests/witness/test_spark_analyze.py``), the swap in each schema
version's columns, and the revert restoring the old rows exactly.
"""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal

import pyarrow.parquet as pq
import pytest

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError
from catalog_admin.models import PartitionColumnStatistics, PartitionParam, TableColumnStatistics, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.services.alter import alter_execute, alter_preview, alter_preview_statement
from operations.services.analyze import analyze_execute, analyze_plan, analyze_swap
from operations.services.revert import revert_preview
from operations.spark.programs import analyze as analyze_program
from operations.spark.programs.analyze import hive_decimal
from operations.specs import spec_from_dict
from tests.fixtures.factories import partition_locations, table_row
from tests.fixtures.operations import metastore_dump, path_of

DAY = "ANALYZE TABLE sales.orders PARTITION (dt='2024-01-02') COMPUTE STATISTICS"
pytestmark = pytest.mark.usefixtures("warehouse")  # a test adds a file: the warehouse is restored afterwards

STATS_TABLES = ("PART_COL_STATS", "TAB_COL_STATS", "PARTITION_PARAMS", "TABLE_PARAMS")


def in_process(plan: dict) -> dict:
    return analyze_program.run(None, plan, lambda _event: None)


def stats_rows(metastore: Metastore, table: str) -> list:
    dump = metastore_dump(metastore.alias)
    return dump[table]


def expected_orders_stats(location: str) -> dict[str, dict]:
    """What GenericUDAFComputeStats computes over the partition's Parquet files, by pyarrow directly."""
    files = sorted(p for p in path_of(location).iterdir() if not p.name.startswith(("_", ".")))
    rows = [r for f in files for r in pq.read_table(f).to_pylist()]
    stats = {}
    for name in ("id", "customer_id"):
        values = [r[name] for r in rows if r[name] is not None]
        stats[name] = {"LONG_LOW_VALUE": min(values), "LONG_HIGH_VALUE": max(values),
                       "NUM_NULLS": len(rows) - len(values), "NUM_DISTINCTS": len(set(values))}  # fmt: skip
    amounts = [r["amount"] for r in rows if r["amount"] is not None]
    stats["amount"] = {"BIG_DECIMAL_LOW_VALUE": hive_decimal(min(amounts)),
                       "BIG_DECIMAL_HIGH_VALUE": hive_decimal(max(amounts)),
                       "NUM_DISTINCTS": len(set(amounts))}  # fmt: skip
    statuses = [r["status"] for r in rows]
    present = [s for s in statuses if s is not None]
    stats["status"] = {"AVG_COL_LEN": sum(map(len, present)) / len(statuses), "MAX_COL_LEN": max(map(len, present)),
                       "NUM_NULLS": len(statuses) - len(present), "NUM_DISTINCTS": len(set(present))}  # fmt: skip
    return stats


# Parsing and preview -------------------------------------------------------------------------------------------------


def test_analyze_statements_parse_into_one_spec_and_render_back(metastore: Metastore) -> None:
    """Hive's three forms (and a partial partition spec: a key without a value is every value) round-trip."""
    # given
    statements = {
        "analyze table sales.orders partition (dt='2024-01-02', hour) compute statistics noscan":
            "ANALYZE TABLE `sales`.`orders` PARTITION (`dt`='2024-01-02') COMPUTE STATISTICS NOSCAN",
        "ANALYZE TABLE sales.orders COMPUTE STATISTICS FOR COLUMNS id, status;":
            "ANALYZE TABLE `sales`.`orders` COMPUTE STATISTICS FOR COLUMNS `id`, `status`",
        "ANALYZE TABLE sales.customers COMPUTE STATISTICS FOR COLUMNS":
            "ANALYZE TABLE `sales`.`customers` COMPUTE STATISTICS FOR COLUMNS",
    }  # fmt: skip

    # when
    previews = {text: alter_preview_statement(metastore=metastore, statement=text) for text in statements}

    # then
    assert {text: p.statement for text, p in previews.items()} == statements


def test_partialscan_is_refused_by_name_and_nothing_is_planned(metastore: Metastore) -> None:
    """Hive 2.3's PARTIALSCAN is not run: the error names it."""
    # when
    with pytest.raises(ApplicationError) as refused:
        alter_preview_statement(metastore=metastore, statement="ANALYZE TABLE sales.orders COMPUTE STATISTICS "
                                "PARTIALSCAN")  # fmt: skip

    # then
    assert refused.value.details["unsupported"] == "PARTIALSCAN"


def test_preview_lists_the_partitions_files_and_bytes_read_and_the_statements(metastore: Metastore) -> None:
    """Every partition of the day is a unit read in place; the swap deletes and inserts their statistics."""
    # given
    orders = table_row(metastore, "sales", "orders")
    day = {n: loc for n, loc in partition_locations(metastore, orders.id).items() if n.startswith("dt=2024-01-02")}
    on_disk = [p for loc in day.values() if path_of(loc).is_dir() for p in path_of(loc).iterdir()]

    # when
    preview = alter_preview_statement(metastore=metastore, statement=DAY)

    # then
    assert preview.blockers == (), preview.blockers
    assert sorted(u.key for u in preview.data_copy.units) == sorted(day)
    assert all(u.source == u.destination for u in preview.data_copy.units)
    assert (preview.data_copy.files, preview.data_copy.bytes) == (len(on_disk), sum(p.stat().st_size for p in on_disk))
    assert {s.metastore_table for s in preview.steps} == {"PARTITION_PARAMS"}
    assert preview.scope.count == len(day)


def test_the_column_preview_says_why_no_ndv_sketch_is_written_where_the_schema_has_one(metastore: Metastore) -> None:
    """On 3.x and 4.0 (``BIT_VECTOR`` in PART_COL_STATS/TAB_COL_STATS) a FOR COLUMNS preview warns that the column is
    left NULL and why; 2.3 has no such column, and basic statistics write none: no warning."""
    # given
    columns = "ANALYZE TABLE sales.orders PARTITION (dt='2024-01-02') COMPUTE STATISTICS FOR COLUMNS"
    unpartitioned = "ANALYZE TABLE sales.customers COMPUTE STATISTICS FOR COLUMNS"

    # when
    previews = [alter_preview_statement(metastore=metastore, statement=s) for s in (columns, unpartitioned, DAY)]

    # then
    codes = [{w.code for w in p.warnings} for p in previews]
    has_sketch_column = metastore.schema.version.major >= 3
    assert [("ndv_sketch_not_written" in c) for c in codes] == [has_sketch_column, has_sketch_column, False]
    if has_sketch_column:
        message = next(w.message for w in previews[0].warnings if w.code == "ndv_sketch_not_written")
        assert "BIT_VECTOR is left NULL" in message and "HLLConstants" in message


def test_column_statistics_write_no_notification_event_where_hive_writes_none(metastore: Metastore) -> None:
    """Hive 2.3 and 3.1 store column statistics through ``ObjectStore.updatePartitionColumnStatistics``, which calls no
    listener, and their ``EventMessage.EventType`` has no statistics event: a FOR COLUMNS execution plans no event
    there. (4.0's ``DbNotificationListener`` writes ``UPDATE_PART_COL_STAT_EVENT``/``UPDATE_TBL_COL_STAT_EVENT``; the
    console does not yet, as README says.)"""
    if metastore.schema.version.major >= 4:
        pytest.skip("Hive 4.0 writes statistics events; the console leaves them out (README, Statistics)")
    # given
    statement = "ANALYZE TABLE sales.orders PARTITION (dt='2024-01-02') COMPUTE STATISTICS FOR COLUMNS"

    # when
    preview = alter_preview_statement(metastore=metastore, statement=statement)

    # then
    assert preview.blockers == (), preview.blockers
    assert preview.events is None or preview.events.total == 0, preview.events


@pytest.mark.parametrize(
    ("statement", "code"),
    [
        ("ANALYZE TABLE sales.payments_acid COMPUTE STATISTICS", "transactional_analyze"),
        ("ANALYZE TABLE marketing.campaign_performance COMPUTE STATISTICS", "view_analyze"),
        ("ANALYZE TABLE sales.orders COMPUTE STATISTICS FOR COLUMNS nope", "column_not_found"),
        ("ANALYZE TABLE sales.orders COMPUTE STATISTICS FOR COLUMNS dt", "partition_column_stats"),
        ("ANALYZE TABLE sales.orders PARTITION (region='x') COMPUTE STATISTICS", "unknown_partition_key"),
    ],
)
def test_what_cannot_be_analyzed_is_a_blocker_naming_it(metastore: Metastore, statement: str, code: str) -> None:
    """Transactional tables, views, unknown columns, partition keys and unknown keys block; nothing is planned."""
    # when
    preview = alter_preview_statement(metastore=metastore, statement=statement)

    # then
    assert code in {b.code for b in preview.blockers}, preview.blockers
    assert preview.steps == ()


# Execution and revert ------------------------------------------------------------------------------------------------


def test_basic_statistics_of_parquet_partitions_are_counted_swapped_and_reverted(metastore: Metastore) -> None:
    """numFiles/totalSize of the listing, numRows of the rows read, rawDataSize rows × columns
    (ParquetHiveSerDe), BASIC_STATS true; the revert puts every old parameter row back exactly."""
    # given
    before = {t: stats_rows(metastore, t) for t in STATS_TABLES}
    preview = alter_preview_statement(metastore=metastore, statement=DAY)
    units = {u.key: u for u in preview.data_copy.units}

    # when
    execution = analyze_execute(preview=preview, actor="steward", source="cli", run_program=in_process)

    # then
    for key, unit in units.items():
        files = [p for p in path_of(unit.source).iterdir() if not p.name.startswith(("_", "."))]
        rows = sum(pq.ParquetFile(p).metadata.num_rows for p in files)
        written = dict(PartitionParam.objects.using(metastore.alias).filter(partition_id=unit.partition_id)
                       .values_list("key", "value"))  # fmt: skip
        assert written["numFiles"] == str(len(files)), key
        assert written["totalSize"] == str(sum(p.stat().st_size for p in files))
        assert written["numRows"] == str(rows)
        assert written["rawDataSize"] == str(rows * 4)
        assert json.loads(written["COLUMN_STATS_ACCURATE"])["BASIC_STATS"] == "true"

    # when
    with allow_metastore_writes():
        alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")

    # then
    assert {t: stats_rows(metastore, t) for t in STATS_TABLES} == before


def test_column_statistics_are_written_in_the_versions_columns_and_reverted_exactly(metastore: Metastore) -> None:
    """One PART_COL_STATS row per partition and column, with what compute_stats computes (decimals as HiveDecimal
    prints them, strings' average over every row), ENGINE 'hive' on 4.0; COLUMN_STATS_ACCURATE marks the columns;
    an earlier row of a column is replaced, and the revert brings it back with its old id."""
    # given
    statement = "ANALYZE TABLE sales.orders PARTITION (dt='2024-01-02') COMPUTE STATISTICS FOR COLUMNS"
    preview = alter_preview_statement(metastore=metastore, statement=statement)
    first = next(u for u in preview.data_copy.units if path_of(u.source).is_dir() and any(path_of(u.source).iterdir()))
    before = {t: stats_rows(metastore, t) for t in STATS_TABLES}

    # when
    execution = analyze_execute(preview=preview, actor="steward", source="cli", run_program=in_process)

    # then
    rows = PartitionColumnStatistics.objects.using(metastore.alias).filter(partition_id=first.partition_id)
    found = {r.column_name: r for r in rows}
    assert sorted(found) == ["amount", "customer_id", "id", "status"]
    for column, fields in expected_orders_stats(first.source).items():
        got = {name: getattr(found[column], _field(name)) for name in fields}
        assert got == (pytest.approx(fields, abs=1e-4) if column == "status" else fields), column  # MySQL: double(53,4)
    assert found["amount"].column_type == "decimal(10,2)"
    if metastore.schema.version.major >= 4:
        assert found["id"].engine == "hive"
    flags = PartitionParam.objects.using(metastore.alias).get(partition_id=first.partition_id,
                                                              key="COLUMN_STATS_ACCURATE").value  # fmt: skip
    assert json.loads(flags)["COLUMN_STATS"] == {"amount": "true", "customer_id": "true", "id": "true",
                                                 "status": "true"}  # fmt: skip

    # when
    with allow_metastore_writes():
        alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")

    # then
    assert {t: stats_rows(metastore, t) for t in STATS_TABLES} == before


def test_text_table_statistics_count_lines_and_their_bytes(metastore: Metastore) -> None:
    """LazySimpleSerDe text: numRows the lines, rawDataSize their bytes (serializedSize); TAB_COL_STATS for an
    unpartitioned table, doubles in the DOUBLE columns."""
    # given
    campaigns = table_row(metastore, "marketing", "campaigns")
    files = [p for p in path_of(campaigns.sd.location).iterdir() if not p.name.startswith(("_", "."))]
    lines = [line for p in files for line in p.read_bytes().splitlines()]
    preview = alter_preview_statement(metastore=metastore, statement="ANALYZE TABLE marketing.campaigns COMPUTE "
                                      "STATISTICS")  # fmt: skip

    # when
    analyze_execute(preview=preview, actor="steward", source="cli", run_program=in_process)
    columns = alter_preview_statement(metastore=metastore, statement="ANALYZE TABLE marketing.campaigns COMPUTE "
                                      "STATISTICS FOR COLUMNS budget")  # fmt: skip
    analyze_execute(preview=columns, actor="steward", source="cli", run_program=in_process)

    # then
    written = dict(TableParam.objects.using(metastore.alias).filter(table_id=campaigns.id).values_list("key", "value"))
    assert (written["numRows"], written["rawDataSize"]) == (str(len(lines)), str(sum(map(len, lines))))
    budgets = [float(line.split(b",")[3]) for line in lines]
    row = TableColumnStatistics.objects.using(metastore.alias).get(table_id=campaigns.id, column_name="budget")
    assert (row.double_low_value, row.double_high_value, row.num_nulls) == (min(budgets), max(budgets), 0)
    flags = json.loads(TableParam.objects.using(metastore.alias).get(table_id=campaigns.id,
                                                                     key="COLUMN_STATS_ACCURATE").value)  # fmt: skip
    assert (flags["BASIC_STATS"], flags["COLUMN_STATS"]["budget"]) == ("true", "true")


def test_noscan_reads_nothing_and_leaves_the_accuracy_flag(metastore: Metastore) -> None:
    """NOSCAN: numFiles/totalSize from the listing only; no file is opened, COLUMN_STATS_ACCURATE stays."""
    # given
    preview = alter_preview_statement(metastore=metastore, statement=DAY + " NOSCAN")
    plan = analyze_plan(preview=preview)

    # when
    manifest = analyze_program.run(None, {**plan, "filesystems": {"s3": {"endpoint_url": "http://0.0.0.0:1"}}},
                                   lambda _e: None)  # fmt: skip

    # then
    assert all("rows" not in unit for unit in manifest["units"].values())
    assert {s.params[-1] for s in preview.steps if s.action == "delete"} == {"totalSize"}


def test_a_file_changed_after_the_job_read_it_refuses_the_swap(metastore: Metastore) -> None:
    """The swap lists the files again: a new file since the job read them refuses it, nothing is written."""
    # given
    preview = alter_preview_statement(metastore=metastore, statement=DAY)
    plan = analyze_plan(preview=preview)
    manifest = in_process(plan)
    unit = next(u for u in preview.data_copy.units if path_of(u.source).is_dir())
    (path_of(unit.source) / "000009_0").write_bytes(next(path_of(unit.source).iterdir()).read_bytes())
    before = {t: stats_rows(metastore, t) for t in STATS_TABLES}
    now = alter_preview_statement(metastore=metastore, statement=DAY)

    # when
    with pytest.raises(ApplicationError) as refused:
        analyze_swap(preview=now, plan=plan, manifest=manifest, actor="steward", source="cli")

    # then
    assert refused.value.code == "stale_preview"
    assert {t: stats_rows(metastore, t) for t in STATS_TABLES} == before


def test_hive_decimal_trims_trailing_zeros_as_hivedecimal_does() -> None:
    """HiveDecimal trims trailing zeros (never below scale 0); BigDecimal.toString's form."""
    assert [hive_decimal(Decimal(v)) for v in ("12.50", "100.00", "0.000", "-3.10", "0.0000001")] == [
        "12.5", "100", "0", "-3.1", "1E-7"]  # fmt: skip
    assert analyze_program.column_statistics("date", [date(1970, 1, 2), None])["long_low_value"] == 1


def _field(column: str) -> str:
    return column.lower()


def test_recompute_where_stale_reads_only_the_partitions_hive_does_not_mark_accurate(metastore: Metastore) -> None:
    """The stale-statistics anomaly's action (a structured operation): a partition whose BASIC_STATS is true is left
    out, the others are read; written as ANALYZE … WITH ('only_stale'='true')."""
    # given
    operation = {"kind": "analyze", "target": {"database": "sales", "table": "orders"},
                 "partitions": [{"key": "dt", "op": "=", "value": "2024-01-02"}], "only_stale": True}  # fmt: skip
    everything = alter_preview_statement(metastore=metastore, statement=DAY)
    fresh, *stale = everything.data_copy.units
    with allow_metastore_writes():
        PartitionParam.objects.using(metastore.alias).filter(partition_id__in=[u.partition_id for u in stale],
                                                             key="COLUMN_STATS_ACCURATE").delete()  # fmt: skip
        PartitionParam.objects.using(metastore.alias).update_or_create(
            partition_id=fresh.partition_id, key="COLUMN_STATS_ACCURATE", defaults={"value": '{"BASIC_STATS":"true"}'}
        )

    # when
    preview = alter_preview(metastore=metastore, spec=spec_from_dict(operation))

    # then
    assert sorted(u.key for u in preview.data_copy.units) == sorted(u.key for u in stale)
    assert preview.statement.endswith("COMPUTE STATISTICS WITH ('only_stale'='true')")
