"""
CONCATENATE and SET FILEFORMAT … WITH DATA on the quick tier's metastore, with real files: the preview (units in new
hidden directories, the swap's statements, blockers), the rewrite program in this process (pyarrow for Parquet/ORC,
byte concatenation for text: the Spark path is proved in ``tests/witness/test_spark_rewrite.py``), the swap with
measured numFiles/totalSize, the kept old directories, revert and cleanup.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.models import Column, PartitionParam, SerDeParam
from catalog_admin.seeding.files import encode_rows
from catalog_admin.selectors.metastores import Metastore
from operations.models import Execution, Relocation
from operations.planners.rewrite import FORMATS, LAZY_SIMPLE
from operations.services.alter import alter_execute, alter_preview, alter_preview_statement
from operations.services.relocate import relocate_execute, relocation_copy_plan, relocations_cleanup
from operations.services.revert import revert_preview
from operations.spark.programs import rewrite as rewrite_program
from operations.specs import CompactFiles, PartitionPredicate, TableRef, spec_from_dict
from tests.fixtures.factories import partition_locations, table_row
from tests.fixtures.operations import event_types, path_of, row_changes

pytestmark = pytest.mark.usefixtures("warehouse")  # every test adds files: the warehouse is restored afterwards

ORDERS = (("id", "bigint"), ("customer_id", "bigint"), ("amount", "decimal(10,2)"), ("status", "string"))
DAY = "dt=2024-01-02"


def in_process(events: list[dict] | None = None):  # noqa: ANN201 - a run_program
    kept = events if events is not None else []
    return lambda plan: rewrite_program.run(None, plan, kept.append)


def split_into_small_files(metastore: Metastore, table: str, prefix: str, fmt: str, columns: tuple) -> dict[str, str]:
    """Add two more small files (rows 9000+) to each partition of ``table`` whose name starts with ``prefix``; the
    partitions' locations by name."""
    database, name = table.split(".")
    row = table_row(metastore, database, name)
    chosen = {n: loc for n, loc in partition_locations(metastore, row.id).items() if n.startswith(prefix)}
    for number, location in enumerate(chosen.values()):
        directory = path_of(location)
        directory.mkdir(parents=True, exist_ok=True)
        for extra in (1, 2):
            rows = [tuple(_value(t, 9000 + 10 * number + extra) for _n, t in columns)]
            (directory / f"00000{extra}_0").write_bytes(encode_rows(fmt, columns, rows))
    return chosen


def _value(type_name: str, serial: int) -> object:
    if type_name in ("int", "bigint"):
        return serial
    if type_name.startswith("decimal") or type_name == "double":
        return serial / 4
    return f"s{serial}"


def parquet_rows(directory: Path) -> list[tuple]:
    tables = [pq.read_table(p) for p in sorted(directory.iterdir()) if not p.name.startswith(("_", "."))]
    return sorted(tuple(r.values()) for t in tables for r in t.to_pylist())


def params(metastore: Metastore, partition_ids: list[int], *keys: str) -> dict[tuple[int, str], str]:
    rows = PartitionParam.objects.using(metastore.alias).filter(partition_id__in=partition_ids, key__in=keys)
    return {(r.partition_id, r.key): r.value for r in rows}


def test_preview_of_a_concatenate_plans_new_hidden_directories_and_one_swap(metastore: Metastore) -> None:
    """The partitions with small files are rewritten below ``<root>/_compacted-…/<name>``; the swap moves them into
    their partitions' own directories (the old ones to the trash), leaves the storage descriptors as they are and sets
    numFiles/totalSize, writing one ALTER_PARTITION each as Hive's alter_partitions."""
    # given
    chosen = split_into_small_files(metastore, "sales.orders", DAY, "parquet", ORDERS)
    root = table_row(metastore, "sales", "orders").sd.location.removeprefix("file:")
    with_files = {n for n, loc in chosen.items() if len(list(path_of(loc).iterdir())) > 1}

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders PARTITION (dt='2024-01-02') CONCATENATE"
    )

    # then
    assert preview.blockers == (), preview.blockers
    units = preview.data_copy.units
    assert sorted(u.key for u in units) == sorted(with_files)
    staging = units[0].destination.rsplit("/", 2)[0]
    assert staging.removeprefix("file:").startswith(root + "/_compacted-")
    assert all(u.destination == f"{staging}/{u.key}" and u.source_format == "parquet" for u in units)
    assert "SDS" not in row_changes(preview)
    assert all("/.catalog-admin-trash/orders/compacted-" in u.retained for u in units)
    assert "PARTITION_PARAMS" in {s.metastore_table for s in preview.steps}
    assert preview.scope.count == len(units)
    assert preview.statement == "ALTER TABLE `sales`.`orders` PARTITION (`dt`='2024-01-02') CONCATENATE"


def test_a_compaction_rewrites_verifies_swaps_keeps_the_old_files_and_reverts(metastore: Metastore) -> None:
    """Each partition ends with one file holding the same rows in its own directory; numFiles/totalSize/numRows are
    what was written; the old directories stay in the trash; revert moves them back (and their statistics) and the
    cleanup then removes the new ones."""
    # given
    chosen = split_into_small_files(metastore, "sales.orders", DAY, "parquet", ORDERS)
    orders = table_row(metastore, "sales", "orders")
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders PARTITION (dt='2024-01-02') CONCATENATE"
    )
    keys = [u.key for u in preview.data_copy.units]
    before_rows = {k: parquet_rows(path_of(chosen[k])) for k in keys}
    ids = [u.partition_id for u in preview.data_copy.units]
    before_params = params(metastore, ids, "numFiles", "totalSize", "numRows")
    events: list[dict] = []

    # when
    execution = relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process(events))

    # then
    now = partition_locations(metastore, orders.id)
    after_params = params(metastore, ids, "numFiles", "totalSize", "numRows")
    for unit in preview.data_copy.units:
        new = path_of(now[unit.key])
        assert now[unit.key] == chosen[unit.key], "the data's home is the partition's own directory"
        files = [p for p in new.iterdir() if not p.name.startswith(("_", "."))]
        assert len(files) == 1 and parquet_rows(new) == before_rows[unit.key]
        assert parquet_rows(path_of(unit.retained)) == before_rows[unit.key], "the old files are kept"
        assert after_params[(unit.partition_id, "numFiles")] == "1"
        assert after_params[(unit.partition_id, "totalSize")] == str(files[0].stat().st_size)
        assert after_params[(unit.partition_id, "numRows")] == str(len(before_rows[unit.key]))
    assert [e["unit_done"] for e in events if "unit_done" in e] == keys
    assert Relocation.objects.get(execution=execution).state == Relocation.State.SWAPPED
    assert event_types(metastore) == ["ALTER_PARTITION"] * len(keys)

    # and when reverted, then cleaned
    alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")
    cleaned = relocations_cleanup()
    assert {n: partition_locations(metastore, orders.id)[n] for n in keys} == {k: chosen[k] for k in keys}
    assert params(metastore, ids, "numFiles", "totalSize", "numRows") == before_params
    assert [r.state for r in cleaned] == [Relocation.State.REVERTED]
    assert not any(path_of(u.destination).exists() for u in preview.data_copy.units)


def test_the_statistics_after_a_rewrite_are_those_of_the_new_files_missing_ones_included(metastore: Metastore) -> None:
    """A partition without numFiles/totalSize/numRows gets them, one with stale ones gets the real ones (numRows the
    rows read back, rawDataSize rows × columns as ParquetHiveSerDe counts), COLUMN_STATS_ACCURATE's basic part true
    and its column part kept; the revert puts back exactly the rows there were."""
    # given
    chosen = split_into_small_files(metastore, "sales.orders", DAY, "parquet", ORDERS)
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders PARTITION (dt='2024-01-02') CONCATENATE"
    )
    bare, stale = preview.data_copy.units[0], preview.data_copy.units[-1]
    keys = ("numFiles", "totalSize", "numRows", "rawDataSize", "COLUMN_STATS_ACCURATE")
    rows = PartitionParam.objects.using(metastore.alias)
    with allow_metastore_writes():
        rows.filter(partition_id=bare.partition_id, key__in=keys).delete()
        rows.filter(partition_id=stale.partition_id, key__in=keys).delete()
        for key, value in (
            ("numRows", "0"),
            ("rawDataSize", "7"),
            ("COLUMN_STATS_ACCURATE", '{"BASIC_STATS":"false","COLUMN_STATS":{"id":"true"}}'),
        ):
            rows.create(partition_id=stale.partition_id, key=key, value=value)
    ids = [bare.partition_id, stale.partition_id]
    before = params(metastore, ids, *keys)
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders PARTITION (dt='2024-01-02') CONCATENATE"
    )

    # when
    execution = relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process())

    # then
    after = params(metastore, ids, *keys)
    for unit in (bare, stale):
        count = len(parquet_rows(path_of(chosen[unit.key])))
        new = [p for p in path_of(chosen[unit.key]).iterdir() if not p.name.startswith(("_", "."))]
        assert {k: after[(unit.partition_id, k)] for k in keys[:4]} == {
            "numFiles": str(len(new)), "totalSize": str(sum(p.stat().st_size for p in new)), "numRows": str(count),
            "rawDataSize": str(count * len(ORDERS)),
        }  # fmt: skip
    assert after[(bare.partition_id, "COLUMN_STATS_ACCURATE")] == '{"BASIC_STATS":"true"}'
    assert after[(stale.partition_id, "COLUMN_STATS_ACCURATE")] == '{"BASIC_STATS":"true","COLUMN_STATS":{"id":"true"}}'

    # and when reverted
    alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")
    assert params(metastore, ids, *keys) == before


def test_a_resumed_rewrite_counts_the_rows_of_the_units_an_earlier_run_wrote(metastore: Metastore) -> None:
    """A unit an earlier run rewrote and verified is not in this run's manifest: its numRows is counted from its new
    files, not left as it was."""
    # given
    chosen = split_into_small_files(metastore, "sales.orders", DAY, "parquet", ORDERS)
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders PARTITION (dt='2024-01-02') CONCATENATE"
    )
    first = preview.data_copy.units[0]
    earlier = relocation_copy_plan(preview=preview)
    rewrite_program.run(None, {**earlier, "units": [u for u in earlier["units"] if u["key"] == first.key]}, print)
    with allow_metastore_writes():
        PartitionParam.objects.using(metastore.alias).filter(partition_id=first.partition_id, key="numRows").delete()

    # when
    relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process(), completed=[first.key])

    # then
    count = len(parquet_rows(path_of(chosen[first.key])))
    assert params(metastore, [first.partition_id], "numRows") == {(first.partition_id, "numRows"): str(count)}


def nanosecond_partition(metastore: Metastore) -> tuple[str, list[int]]:
    """sales.orders' ``status`` typed timestamp, and one partition holding two Parquet files as Hive writes them
    (INT96) with nanosecond timestamps: its name and the timestamps in nanoseconds."""
    import pyarrow as pa

    orders = table_row(metastore, "sales", "orders")
    with allow_metastore_writes():
        Column.objects.using(metastore.alias).filter(cd_id=orders.sd.cd_id, name="status").update(type="timestamp")
    name = "dt=2024-01-03/hour=0"
    directory = path_of(partition_locations(metastore, orders.id)[name])
    for old in directory.iterdir():
        old.unlink()
    stamps = [1_700_000_000_123_456_789, 1_700_000_000_000_000_000, 1_700_000_001_000_000_001]
    for number, stamp in enumerate(stamps):
        table = pa.table({"id": pa.array([number], pa.int64()), "customer_id": pa.array([7], pa.int64()),
                          "amount": pa.array([None], pa.decimal128(10, 2)),
                          "status": pa.array([stamp], pa.timestamp("ns"))})  # fmt: skip
        pq.write_table(table, directory / f"00000{number}_0", use_deprecated_int96_timestamps=True)
    return name, stamps


def test_nanosecond_timestamps_are_carried_exactly_by_a_compaction(metastore: Metastore) -> None:
    """Parquet INT96 timestamps Hive wrote to the nanosecond are the same nanoseconds in the compacted file."""
    # given
    name, stamps = nanosecond_partition(metastore)
    partition = "PARTITION (dt='2024-01-03', hour=0)"
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.orders {partition} CONCATENATE"
    )

    # when
    relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process())

    # then
    new = path_of(partition_locations(metastore, table_row(metastore, "sales", "orders").id)[name])
    (file,) = [p for p in new.iterdir() if not p.name.startswith(("_", "."))]
    assert "int96" in str(pq.read_metadata(file).schema).lower()
    written = pq.read_table(file).column("status").cast("int64").to_pylist()
    assert sorted(written) == sorted(stamps)


def test_a_convert_that_would_truncate_nanoseconds_is_refused_naming_the_column_and_value(metastore: Metastore) -> None:
    """Avro (Hive's timestamp-millis) cannot hold 2023-11-14 22:13:20.123456789: the job fails naming the column and
    the value, and nothing is swapped."""
    # given
    name, _stamps = nanosecond_partition(metastore)
    orders = table_row(metastore, "sales", "orders")
    before = partition_locations(metastore, orders.id)[name]
    statement = "ALTER TABLE sales.orders PARTITION (dt='2024-01-03', hour=0) SET FILEFORMAT AVRO WITH DATA"
    preview = alter_preview_statement(metastore=metastore, statement=statement)
    assert preview.blockers == (), preview.blockers

    # when
    with pytest.raises(rewrite_program.RewriteFailed) as refused:
        relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process())

    # then
    assert "Column status holds 2023-11-14 22:13:20.123456789" in str(refused.value)
    assert partition_locations(metastore, orders.id)[name] == before
    assert not Execution.objects.exists()


def test_text_files_are_concatenated_byte_for_byte(metastore: Metastore) -> None:
    """LazySimpleSerDe rows stay identical: the new file is the old files one after another (a last newline added)."""
    # given
    columns = (("click_id", "bigint"), ("campaign_id", "int"), ("user_agent", "string"), ("cost", "double"))
    chosen = split_into_small_files(metastore, "marketing.clicks", "dt=2024-01-03/hour=0", "text", columns)
    (name, location), = chosen.items()  # fmt: skip
    old = path_of(location)
    (old / "000003_0").write_bytes(b"77,1,no-newline,0.5")
    expected = b"".join(p.read_bytes() for p in sorted(old.iterdir())) + b"\n"

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE marketing.clicks PARTITION (dt='2024-01-03', hour=0) CONCATENATE"
    )
    relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process())

    # then
    clicks = table_row(metastore, "marketing", "clicks")
    new = path_of(partition_locations(metastore, clicks.id)[name])
    assert [p.read_bytes() for p in new.iterdir()] == [expected]


def test_the_structured_operation_selects_partitions_by_their_files(metastore: Metastore) -> None:
    """``min_files``: only partitions with more files than that are compacted (the others have one file)."""
    # given
    chosen = split_into_small_files(metastore, "sales.orders", "dt=2024-01-03", "parquet", ORDERS)
    spec = spec_from_dict(
        {"kind": "compact_files", "target": {"database": "sales", "table": "orders"}, "min_files": 2,
         "target_file_bytes": 64 * 1024 * 1024}
    )  # fmt: skip

    # when
    preview = alter_preview(metastore=metastore, spec=spec)

    # then
    assert preview.blockers == ()
    assert sorted(u.key for u in preview.data_copy.units) == sorted(
        n for n, loc in chosen.items() if len(list(path_of(loc).iterdir())) > 2
    )
    options = "WITH ('min_files'='2', 'target_file_bytes'='67108864')"
    assert preview.statement.endswith(f"CONCATENATE {options}")


def test_a_convert_switches_formats_serde_and_location_together_and_reverts(metastore: Metastore) -> None:
    """Parquet → ORC: the same rows in ORC files in the partition's own directory, and each storage descriptor's
    formats and SerDe are Hive's ORC classes in the same transaction as the swap's moves; revert brings all of it
    back."""
    # given
    chosen = split_into_small_files(metastore, "sales.orders", "dt=2024-01-03/hour=0", "parquet", ORDERS)
    (name, location), = chosen.items()  # fmt: skip
    rows = parquet_rows(path_of(location))
    orders = table_row(metastore, "sales", "orders")
    statement = "ALTER TABLE sales.orders PARTITION (dt='2024-01-03', hour=0) SET FILEFORMAT ORC WITH DATA"

    # when
    preview = alter_preview_statement(metastore=metastore, statement=statement)
    execution = relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process())

    # then
    new = path_of(partition_locations(metastore, orders.id)[name])
    converted = sorted(tuple(r.values()) for p in new.iterdir() for r in orc.read_table(str(p)).to_pylist())
    assert converted == rows
    assert storage(metastore, orders.id, name) == (location, *FORMATS["orc"])
    assert table_row(metastore, "sales", "orders").sd.input_format == FORMATS["parquet"][0], "the table keeps its"

    # and when reverted
    alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")
    assert storage(metastore, orders.id, name) == (location, *FORMATS["parquet"])


def test_a_convert_to_avro_and_back_keeps_every_row_and_value(metastore: Metastore) -> None:
    """Parquet → Avro: the rows in Avro files with the schema Hive derives from the columns (decimals as the
    decimal logical type), Hive's Avro classes on the partition; Avro → Parquet brings the same rows back."""
    import fastavro

    # given
    chosen = split_into_small_files(metastore, "sales.orders", "dt=2024-01-03/hour=0", "parquet", ORDERS)
    (name, location), = chosen.items()  # fmt: skip
    rows = parquet_rows(path_of(location))
    orders = table_row(metastore, "sales", "orders")
    partition = "PARTITION (dt='2024-01-03', hour=0)"

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.orders {partition} SET FILEFORMAT AVRO WITH DATA"
    )
    relocate_execute(preview=preview, actor="steward", source="cli", run_program=in_process())

    # then
    assert preview.blockers == (), preview.blockers
    avro_dir = path_of(partition_locations(metastore, orders.id)[name])
    records, schemas = [], []
    for file in sorted(avro_dir.iterdir()):
        with file.open("rb") as handle:
            reader = fastavro.reader(handle)
            schemas.append(reader.writer_schema)
            records += [tuple(r.values()) for r in reader]
    assert sorted(records) == rows
    amount = next(f for f in schemas[0]["fields"] if f["name"] == "amount")
    assert amount["type"][1] == {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}
    assert storage(metastore, orders.id, name) == (location, *FORMATS["avro"])

    # and when converted back
    back = alter_preview_statement(
        metastore=metastore, statement=f"ALTER TABLE sales.orders {partition} SET FILEFORMAT PARQUET WITH DATA"
    )
    relocate_execute(preview=back, actor="steward", source="cli", run_program=in_process())
    assert parquet_rows(path_of(partition_locations(metastore, orders.id)[name])) == rows
    assert storage(metastore, orders.id, name)[1:] == FORMATS["parquet"]


def storage(metastore: Metastore, table_id: int, name: str) -> tuple:
    """A partition's (location, input format, output format, SerDe)."""
    from catalog_admin.models import Partition

    return (
        Partition.objects.using(metastore.alias)
        .filter(table_id=table_id, name=name)
        .values_list("sd__location", "sd__input_format", "sd__output_format", "sd__serde__slib")
        .get()
    )


def as_strings(metastore: Metastore, database: str, name: str) -> None:
    """Every column of the table typed string: text values a conversion carries exactly (rewrite_values)."""
    cd_id = table_row(metastore, database, name).sd.cd_id
    with allow_metastore_writes():
        Column.objects.using(metastore.alias).filter(cd_id=cd_id).update(type="string")


def test_converting_a_text_table_drops_the_text_serde_parameters(metastore: Metastore) -> None:
    """The preview of a whole text table's convert: every partition and the table switch to Parquet and lose
    field.delim (LazySimpleSerDe's), in the swap's statements."""
    # given
    as_strings(metastore, "marketing", "clicks")
    clicks = table_row(metastore, "marketing", "clicks")
    delims = SerDeParam.objects.using(metastore.alias).filter(key="field.delim").count()

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE marketing.clicks SET FILEFORMAT PARQUET WITH DATA"
    )

    # then
    assert preview.blockers == (), preview.blockers
    tables = {s.metastore_table for s in preview.steps}
    assert {"SDS", "SERDES", "SERDE_PARAMS", "PARTITION_PARAMS"} <= tables
    drop = next(s for s in preview.steps if s.metastore_table == "SERDE_PARAMS")
    assert drop.action == "delete" and "field.delim" in drop.params
    assert ("input_format", clicks.sd.input_format, FORMATS["parquet"][0]) in preview.diff
    assert ("serde_lib", LAZY_SIMPLE, FORMATS["parquet"][2]) in preview.diff
    assert preview.partitions_touched == clicks_partitions(metastore, clicks.id)
    assert delims > 0


def clicks_partitions(metastore: Metastore, table_id: int) -> int:
    return len(partition_locations(metastore, table_id))


@pytest.mark.parametrize(
    ("statement", "code"),
    [
        ("ALTER TABLE sales.payments_acid CONCATENATE", "transactional_rewrite"),
        ("ALTER TABLE marketing.campaign_performance CONCATENATE", "view_rewrite"),
        ("ALTER TABLE sales.customers CONCATENATE", "nothing_to_rewrite"),
        ("ALTER TABLE sales.customers PARTITION (dt='1') CONCATENATE", "not_partitioned"),
        ("ALTER TABLE sales.orders PARTITION (nope='1') CONCATENATE", "unknown_partition_key"),
    ],
    ids=["transactional", "view", "one-file", "not-partitioned", "bad-key"],
)
def test_rewrites_that_cannot_run_are_blocked_with_the_reason(metastore: Metastore, statement: str, code: str) -> None:
    """Each blocker names what is wrong; nothing would be written."""
    # when
    preview = alter_preview_statement(metastore=metastore, statement=statement)

    # then
    assert code in {b.code for b in preview.blockers}, preview.blockers
    assert preview.steps == ()


def test_bad_parameters_of_the_structured_operation_are_named(metastore: Metastore) -> None:
    """A target file size of 0 is refused with the field named; nothing is planned."""
    # given
    spec = CompactFiles(target=TableRef("sales", "orders"), target_file_bytes=0,
                        partitions=(PartitionPredicate("dt", "=", "2024-01-02"),))  # fmt: skip

    # when
    preview = alter_preview(metastore=metastore, spec=spec)

    # then
    assert [(b.code, b.message) for b in preview.blockers] == [
        ("invalid_parameter", "target_file_bytes must be a positive whole number, not 0.")
    ]
    assert preview.data_copy is None and preview.steps == ()


def test_plain_set_fileformat_is_blocked_where_files_would_become_unreadable(metastore: Metastore) -> None:
    """Hive's metadata-only SET FILEFORMAT on a partition holding Parquet files would leave them unreadable as ORC:
    blocked, pointing to WITH DATA; nothing would be written."""
    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders PARTITION (dt='2024-01-02', hour=0) SET FILEFORMAT ORC"
    )

    # then
    assert [b.code for b in preview.blockers] == ["files_unreadable"]
    assert "SET FILEFORMAT ORC WITH DATA" in preview.blockers[0].message
    assert preview.steps == ()


def test_plain_set_fileformat_of_a_partitioned_table_changes_its_own_descriptor_only(metastore: Metastore) -> None:
    """Without PARTITION, Hive switches the table's descriptor (new partitions) and not the existing partitions':
    nothing becomes unreadable, one ALTER_TABLE; revert puts the Parquet classes back."""
    # given
    orders = table_row(metastore, "sales", "orders")
    before = partition_locations(metastore, orders.id)

    # when
    preview = alter_preview_statement(metastore=metastore, statement="ALTER TABLE sales.orders SET FILEFORMAT ORC")
    execution = alter_execute(preview=preview, actor="steward", source="cli")

    # then
    assert preview.blockers == () and "partitions_keep_format" in {w.code for w in preview.warnings}
    assert row_changes(preview) == {"SDS": (0, 1, 0), "SERDES": (0, 1, 0)}
    changed = table_row(metastore, "sales", "orders")
    assert (changed.sd.input_format, changed.sd.output_format, changed.sd.serde.slib) == FORMATS["orc"]
    assert partition_locations(metastore, orders.id) == before
    assert event_types(metastore) == ["ALTER_TABLE"]
    alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")
    reverted = table_row(metastore, "sales", "orders")
    assert (reverted.sd.input_format, reverted.sd.output_format, reverted.sd.serde.slib) == FORMATS["parquet"]


def test_a_rewrite_never_runs_as_a_plain_alter(metastore: Metastore) -> None:
    """Re-pointing without the rewrite would lose the data: alter_execute refuses it and nothing is written."""
    # given
    split_into_small_files(metastore, "sales.orders", DAY, "parquet", ORDERS)
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE sales.orders PARTITION (dt='2024-01-02') CONCATENATE"
    )

    # when
    with pytest.raises(ApplicationError) as refused:
        alter_execute(preview=preview, actor="steward", source="cli")

    # then
    assert refused.value.code == ErrorCode.INVALID_STATE
    assert not Execution.objects.exists()
