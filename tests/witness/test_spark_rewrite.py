"""
Issue 10's proof for CONCATENATE and SET FILEFORMAT … WITH DATA, on real data written by Spark's Hive 2.3 client
(``spark_pg``, many small files: one per INSERT) and rewritten by the rewrite program on the run's Spark session:

* Parquet partitions compacted: Spark SQL through the Hive client reads exactly the same rows (sorted compare), each
  partition has one file in its new hidden directory with numFiles/totalSize as written and numRows unchanged, the
  old files are kept; revert points back at them and Spark reads the same rows again;
* a text table compacted: the new file is the old files concatenated byte for byte;
* an Avro table compacted with fastavro: the same rows through Hive's AvroSerDe;
* a text table converted to Parquet (the table and all its partitions): the storage descriptors carry Hive's Parquet
  classes and no field.delim, Spark reads the same rows; revert brings the text back;
* a Parquet table of every primitive kind converted to Avro (read through Hive's AvroSerDe) and back to Parquet, and an
  Avro table Hive wrote converted to Parquet and reverted, a SequenceFile table converted to ORC and reverted, a text
  table with nested complex columns converted to Parquet: the same rows each time;
* issue 25: rows a plain Spark writer appends to a partition after the rewrite read it refuse the swap (naming the
  new files), and Spark still reads every row.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from catalog_admin.errors import ApplicationError
from catalog_admin.models import Partition, PartitionParam, SerDeParam, Table
from catalog_admin.selectors.metastores import Metastore
from operations.models import Relocation
from operations.planners.rewrite import FORMATS
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.relocate import relocate_execute
from operations.services.revert import revert_preview
from operations.spark.programs import rewrite as rewrite_program

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True, databases=["default", "spark_pg"])]

DATABASE = "rewrite_src"
DAYS = ("2024-01-01", "2024-01-02")
LATE = 20_000


@pytest.fixture(scope="module")
def small_files(spark) -> None:  # noqa: ANN001
    """Tables of ``rewrite_src`` written in many INSERTs (one small file each per partition)."""
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
    spark.sql(f"CREATE TABLE {DATABASE}.events (id int, name string, amount decimal(10,2)) PARTITIONED BY (dt string) "
              "STORED AS PARQUET")  # fmt: skip
    # string columns: text a conversion carries value for value (others are blocked: planners/rewrite_values.py)
    spark.sql(f"CREATE TABLE {DATABASE}.lines (id string, note string) PARTITIONED BY (dt string) "
              "ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' STORED AS TEXTFILE")  # fmt: skip
    spark.sql(f"CREATE TABLE {DATABASE}.records (id int, name string) STORED AS AVRO")
    for batch in range(4):
        for day in DAYS:
            values = ", ".join(f"({batch * 10 + i}, 'n{batch}{i}', {batch}.{i}5)" for i in range(3))
            spark.sql(f"INSERT INTO {DATABASE}.events PARTITION (dt='{day}') VALUES {values}")
            notes = ", ".join(f"('{batch * 10 + i}', 'note {batch} {i}')" for i in range(2))
            spark.sql(f"INSERT INTO {DATABASE}.lines PARTITION (dt='{day}') VALUES {notes}")
        spark.sql(f"INSERT INTO {DATABASE}.records VALUES ({batch}, 'r{batch}'), ({batch + 100}, NULL)")


def rows(spark, table: str) -> list[tuple]:  # noqa: ANN001
    spark.sql(f"REFRESH TABLE {table}")
    return sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {table}").collect())


def on_spark(spark):  # noqa: ANN001, ANN201 - a run_program
    return lambda plan: rewrite_program.run(spark, plan, [].append)


def storage(metastore: Metastore, table: str) -> dict[str, tuple]:
    """'' (the table) and each partition name -> (location, input format, output format, SerDe)."""
    database, name = table.split(".")
    fields = ("sd__location", "sd__input_format", "sd__output_format", "sd__serde__slib")
    row = Table.objects.using(metastore.alias).filter(database__name=database, name=name)
    result = {"": row.values_list(*fields).get()}
    table_id = row.values_list("id", flat=True).get()
    for part in Partition.objects.using(metastore.alias).filter(table_id=table_id).values_list("name", *fields):
        result[part[0]] = part[1:]
    return result


def data_files(location: str) -> list[Path]:
    root = Path(location.removeprefix("file:"))
    return sorted(p for p in root.iterdir() if p.is_file() and not p.name.startswith(("_", ".")))


def test_parquet_partitions_compact_on_spark_and_revert(spark, spark_metastore: Metastore, small_files: None) -> None:  # noqa: ANN001
    """Same rows through Hive's client; one file per partition; numFiles/totalSize as written, numRows kept."""
    # given
    table = f"{DATABASE}.events"
    before_rows, before = rows(spark, table), storage(spark_metastore, table)
    assert all(len(data_files(before[f"dt={d}"][0])) >= 4 for d in DAYS), "small files to compact"
    preview = alter_preview_statement(metastore=spark_metastore, statement=f"ALTER TABLE {table} CONCATENATE")
    assert preview.blockers == (), preview.blockers

    # when
    execution = relocate_execute(preview=preview, actor="steward", source="cli", run_program=on_spark(spark))

    # then
    after = storage(spark_metastore, table)
    assert rows(spark, table) == before_rows
    partitions = Partition.objects.using(spark_metastore.alias).filter(table__name="events")
    ids = dict(partitions.filter(table__database__name=DATABASE).values_list("name", "id"))
    trash = {unit["key"]: unit["source"] for unit in Relocation.objects.get(execution=execution).units}
    for day in DAYS:
        name = f"dt={day}"
        location = after[name][0]
        assert location == before[name][0], "the new files are in the partition's own directory"
        assert after[name][1:] == before[name][1:] == FORMATS["parquet"]
        written = data_files(location)
        stats = dict(PartitionParam.objects.using(spark_metastore.alias).filter(partition_id=ids[name])
                     .values_list("key", "value"))  # fmt: skip
        assert (stats["numFiles"], stats["totalSize"]) == ("1", str(written[0].stat().st_size))
        assert len(data_files(trash[name])) >= 4, "the old files are kept in the trash"
    assert Relocation.objects.get(execution=execution).state == Relocation.State.SWAPPED

    # and when reverted, Spark reads the kept files again
    alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")
    assert storage(spark_metastore, table) == before
    assert rows(spark, table) == before_rows


def test_a_text_partition_is_concatenated_byte_for_byte(spark, spark_metastore: Metastore, small_files: None) -> None:  # noqa: ANN001
    """The new file is the old ones one after another; Spark reads the same rows."""
    # given
    table = f"{DATABASE}.lines"
    before_rows, before = rows(spark, table), storage(spark_metastore, table)
    old = b"".join(p.read_bytes() for p in data_files(before["dt=2024-01-01"][0]))  # read now: the swap trashes them
    statement = f"ALTER TABLE {table} PARTITION (dt='2024-01-01') CONCATENATE"

    # when
    preview = alter_preview_statement(metastore=spark_metastore, statement=statement)
    relocate_execute(preview=preview, actor="steward", source="cli", run_program=on_spark(spark))

    # then
    new = data_files(storage(spark_metastore, table)["dt=2024-01-01"][0])
    assert [p.read_bytes() for p in new] == [old]
    assert rows(spark, table) == before_rows


def test_an_avro_table_is_merged_with_fastavro(spark, spark_metastore: Metastore, small_files: None) -> None:  # noqa: ANN001
    """The Avro container files become one; Hive's AvroSerDe reads the same rows (NULLs included)."""
    # given
    table = f"{DATABASE}.records"
    before_rows, before = rows(spark, table), storage(spark_metastore, table)
    assert len(data_files(before[""][0])) >= 4

    # when
    preview = alter_preview_statement(metastore=spark_metastore, statement=f"ALTER TABLE {table} CONCATENATE")
    assert preview.blockers == (), preview.blockers
    relocate_execute(preview=preview, actor="steward", source="cli", run_program=on_spark(spark))

    # then
    after = storage(spark_metastore, table)[""]
    assert len(data_files(after[0])) == 1 and after[1:] == FORMATS["avro"]
    assert rows(spark, table) == before_rows


def test_a_text_table_converts_to_parquet_and_back(spark, spark_metastore: Metastore, small_files: None) -> None:  # noqa: ANN001
    """SET FILEFORMAT PARQUET WITH DATA: every descriptor is Hive's Parquet with no field.delim, the same rows;
    revert brings the text formats, SerDe parameters and files back."""
    # given
    table = f"{DATABASE}.lines"
    before_rows, before = rows(spark, table), storage(spark_metastore, table)
    statement = f"ALTER TABLE {table} SET FILEFORMAT PARQUET WITH DATA"

    # when
    preview = alter_preview_statement(metastore=spark_metastore, statement=statement)
    assert preview.blockers == (), preview.blockers
    execution = relocate_execute(preview=preview, actor="steward", source="cli", run_program=on_spark(spark))

    # then
    after = storage(spark_metastore, table)
    assert {name: values[1:] for name, values in after.items()} == {name: FORMATS["parquet"] for name in before}
    assert after[""][0] == before[""][0], "a partitioned table keeps its root"
    delims = SerDeParam.objects.using(spark_metastore.alias).filter(
        key="field.delim", serde__slib=FORMATS["parquet"][2]
    )
    assert not delims.exists()
    assert rows(spark, table) == before_rows

    # and when reverted
    alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")
    assert storage(spark_metastore, table) == before
    assert rows(spark, table) == before_rows


def test_a_parquet_table_converts_to_avro_and_back(spark, spark_metastore: Metastore) -> None:  # noqa: ANN001
    """SET FILEFORMAT AVRO WITH DATA: every descriptor carries Hive's Avro classes and Spark reads the same rows
    through Hive's AvroSerDe (numbers, decimals, dates, timestamps, NULLs); SET FILEFORMAT PARQUET WITH DATA brings
    the same rows back in Parquet."""
    # given
    table = f"{DATABASE}.typed"
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
    columns = "id int, big bigint, name string, amount decimal(12,3), ratio double, ok boolean, day date, at timestamp"
    spark.sql(f"CREATE TABLE {table} ({columns}, code varchar(8)) PARTITIONED BY (dt string) STORED AS PARQUET")
    for batch in range(3):
        spark.sql(
            f"INSERT INTO {table} PARTITION (dt='2024-01-0{batch + 1}') VALUES "
            f"({batch}, {batch * 10**10}, 'n{batch} é', {batch}.125, {batch} / 3.0, {'true' if batch else 'false'}, "
            f"DATE '2024-02-0{batch + 1}', TIMESTAMP '2024-03-0{batch + 1} 12:34:56.789', 'c{batch}'), "
            f"({batch + 100}, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"
        )
    before_rows = rows(spark, table)

    # when
    for file_format in ("AVRO", "PARQUET"):
        preview = alter_preview_statement(
            metastore=spark_metastore, statement=f"ALTER TABLE {table} SET FILEFORMAT {file_format} WITH DATA"
        )
        assert preview.blockers == (), preview.blockers
        relocate_execute(preview=preview, actor="steward", source="cli", run_program=on_spark(spark))

        # then
        after = storage(spark_metastore, table)
        expected = FORMATS[file_format.lower()]
        assert {name: values[1:] for name, values in after.items()} == dict.fromkeys(after, expected)
        assert rows(spark, table) == before_rows, file_format


def test_an_avro_table_written_by_hive_converts_to_parquet_and_reverts(
    spark, spark_metastore: Metastore, small_files: None
) -> None:  # noqa: ANN001
    """Avro files Hive's AvroSerDe wrote (its own schema) are read by name into the table's columns: the Parquet
    table reads the same rows; revert brings the Avro descriptor and rows back."""
    # given
    table = f"{DATABASE}.records"
    before_rows, before = rows(spark, table), storage(spark_metastore, table)
    statement = f"ALTER TABLE {table} SET FILEFORMAT PARQUET WITH DATA"

    # when
    preview = alter_preview_statement(metastore=spark_metastore, statement=statement)
    assert preview.blockers == (), preview.blockers
    execution = relocate_execute(preview=preview, actor="steward", source="cli", run_program=on_spark(spark))

    # then
    assert storage(spark_metastore, table)[""][1:] == FORMATS["parquet"]
    assert rows(spark, table) == before_rows

    # and when reverted
    alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")
    assert storage(spark_metastore, table) == before
    assert rows(spark, table) == before_rows


def test_a_sequencefile_table_converts_to_orc_and_reverts(spark, spark_metastore: Metastore) -> None:  # noqa: ANN001
    """STORED AS SEQUENCEFILE (LazySimpleSerDe rows as the files' values, written by Hive's output format): SET
    FILEFORMAT ORC WITH DATA gives Hive's ORC classes and the same rows, NULLs and delimiters in values included;
    revert brings the SequenceFiles back. Compacting it is refused, pointing to the convert."""
    # given
    table = f"{DATABASE}.sequenced"
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
    spark.sql(f"CREATE TABLE {table} (id string, note string, amount string) PARTITIONED BY (dt string) "
              "STORED AS SEQUENCEFILE")  # fmt: skip
    for batch in range(3):
        for day in DAYS:
            spark.sql(f"INSERT INTO {table} PARTITION (dt='{day}') VALUES ('{batch}', 'a, b {batch}', '{batch}.5'), "
                      f"('{batch + 10}', NULL, NULL)")  # fmt: skip
    before_rows, before = rows(spark, table), storage(spark_metastore, table)
    assert before[""][1] == "org.apache.hadoop.mapred.SequenceFileInputFormat"

    # when
    compact = alter_preview_statement(metastore=spark_metastore, statement=f"ALTER TABLE {table} CONCATENATE")
    preview = alter_preview_statement(
        metastore=spark_metastore, statement=f"ALTER TABLE {table} SET FILEFORMAT ORC WITH DATA"
    )
    assert preview.blockers == (), preview.blockers
    execution = relocate_execute(preview=preview, actor="steward", source="cli", run_program=on_spark(spark))

    # then
    assert "unsupported_format" in {b.code for b in compact.blockers}
    after = storage(spark_metastore, table)
    assert {name: values[1:] for name, values in after.items()} == dict.fromkeys(after, FORMATS["orc"])
    assert rows(spark, table) == before_rows

    # and when reverted
    alter_execute(preview=revert_preview(execution=execution), actor="steward", source="cli")
    assert storage(spark_metastore, table) == before
    assert rows(spark, table) == before_rows


def test_a_text_table_with_complex_columns_converts_to_parquet(spark, spark_metastore: Metastore) -> None:  # noqa: ANN001
    """Arrays, maps, structs and their nesting in LazySimpleSerDe text (written by Hive's text output) arrive in
    Parquet as the same values, an empty array and an empty string stay empty: Spark reads the same rows before and
    after."""
    # given
    table = f"{DATABASE}.nested"
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
    spark.sql(f"CREATE TABLE {table} (id string, tags array<string>, scores map<string,string>, "
              "owner struct<name:string,age:string>, events array<struct<kind:string,at:string>>, note string) "
              "PARTITIONED BY (dt string) STORED AS TEXTFILE")  # fmt: skip
    for day in DAYS:
        spark.sql(
            f"INSERT INTO {table} PARTITION (dt='{day}') SELECT '1', array('a', 'b c'), map('x', '1', 'y', '2'), "
            "named_struct('name', 'ann', 'age', '30'), array(named_struct('kind', 'k', 'at', '2024-01-05')), 'n' "
            "UNION ALL SELECT '2', array(), NULL, named_struct('name', NULL, 'age', '4'), NULL, ''"
        )
    before_rows = rows(spark, table)
    assert {r[-2] for r in before_rows} == {"n", ""}, "Hive reads an empty field as an empty string"

    # when
    preview = alter_preview_statement(
        metastore=spark_metastore, statement=f"ALTER TABLE {table} SET FILEFORMAT PARQUET WITH DATA"
    )
    assert preview.blockers == (), preview.blockers
    relocate_execute(preview=preview, actor="steward", source="cli", run_program=on_spark(spark))

    # then
    assert storage(spark_metastore, table)[""][1:] == FORMATS["parquet"]
    assert rows(spark, table) == before_rows


@pytest.mark.parametrize("folder", ["plain", "with space+plus"])
def test_the_program_reads_each_unit_s_files_whatever_their_paths_spell(spark, tmp_path: Path, folder: str) -> None:  # noqa: ANN001
    """Every unit's planned files are read by their paths as planned (a space, a '+' in them): every unit's rows
    are counted on both sides and written once."""
    import pyarrow as pa

    # given
    units = []
    for number in range(2):
        directory = tmp_path / folder / f"p={number}"
        directory.mkdir(parents=True)
        for part in range(3):
            table = pa.table({"id": list(range(part * 10, part * 10 + 4)), "name": [f"n{number}"] * 4})
            pq.write_table(table, directory / f"part-{part}.parquet")
        units.append({"key": f"p={number}", "source": f"file:{directory}",
                      "destination": f"file:{tmp_path / 'out' / folder / f'p={number}'}",
                      "source_format": "parquet", "target_format": "parquet",
                      "files": [{"source": f"file:{f}", "size": f.stat().st_size}
                                for f in sorted(directory.iterdir())]})  # fmt: skip
    plan = {"units": units, "columns": [["id", "bigint"], ["name", "string"]], "serde": {},
            "target_file_bytes": 1 << 27, "filesystems": {}, "completed": [],
            "staging": f"file:{tmp_path / 'out' / folder}"}  # fmt: skip
    # when
    manifest = rewrite_program.run(spark, plan, [].append)
    # then
    assert {k: (u["rows_in"], u["rows_out"], u["files"]) for k, u in manifest["units"].items()} == {
        "p=0": (12, 12, 1),
        "p=1": (12, 12, 1),
    }
    written = pq.read_table(tmp_path / "out" / folder / "p=1").to_pydict()
    assert sorted(written["id"]) == sorted(i for part in range(3) for i in range(part * 10, part * 10 + 4))
    assert set(written["name"]) == {"n1"}


@pytest.mark.parametrize("source_format", ["parquet", "text"])
def test_the_program_writes_the_planned_files_only(spark, tmp_path: Path, source_format: str) -> None:  # noqa: ANN001
    """Only the planned files are read: one in a subdirectory is written, a file added to the directory after
    planning is not (and rows in still equal rows out); the swap's re-listing refuses such a file."""
    import pyarrow as pa

    def write(path: Path, ids: range) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        if source_format == "parquet":
            pq.write_table(pa.table({"id": list(ids), "name": [path.stem] * len(ids)}), path)
        else:
            path.write_text("".join(f"{i}\x01{path.stem}\n" for i in ids))

    # given
    directory = tmp_path / "t" / "p=0"
    write(directory / "part-0", range(0, 3))
    write(directory / "nested" / "part-1", range(10, 14))
    files = [{"source": f"file:{f}", "size": f.stat().st_size} for f in sorted(directory.rglob("part-*"))]
    unit = {"key": "p=0", "source": f"file:{directory}", "destination": f"file:{tmp_path / 'out' / 'p=0'}",
            "source_format": source_format, "target_format": "parquet", "files": files}  # fmt: skip
    plan = {"units": [unit], "columns": [["id", "bigint"], ["name", "string"]], "serde": {},
            "target_file_bytes": 1 << 27, "filesystems": {}, "completed": [],
            "staging": f"file:{tmp_path / 'out'}"}  # fmt: skip
    write(directory / "late", range(100, 150))  # after planning
    (directory / "notes.txt").write_text("not parquet\n")  # after planning, in no format of the unit

    # when
    manifest = rewrite_program.run(spark, plan, [].append)

    # then
    assert (manifest["units"]["p=0"]["rows_in"], manifest["units"]["p=0"]["rows_out"]) == (7, 7)
    written = pq.read_table(tmp_path / "out" / "p=0").to_pydict()
    assert sorted(written["id"]) == [0, 1, 2, 10, 11, 12, 13]
    assert set(written["name"]) == {"part-0", "part-1"}


def test_a_planned_file_the_unit_s_format_cannot_read_fails_the_program_before_anything_moves(
    spark,  # noqa: ANN001
    tmp_path: Path,
) -> None:
    """A planned file that is not in the unit's format fails the rewrite, naming it: nothing is reported done."""
    import pyarrow as pa

    # given
    directory = tmp_path / "t" / "p=0"
    directory.mkdir(parents=True)
    pq.write_table(pa.table({"id": [1, 2], "name": ["a", "b"]}), directory / "part-0.parquet")
    (directory / "notes.txt").write_text("not parquet\n")
    files = [{"source": f"file:{f}", "size": f.stat().st_size} for f in sorted(directory.iterdir())]
    destination = tmp_path / "out" / "p=0"
    plan = {"units": [{"key": "p=0", "source": f"file:{directory}", "destination": f"file:{destination}",
                       "source_format": "parquet", "target_format": "parquet", "files": files}],
            "columns": [["id", "bigint"], ["name", "string"]], "serde": {}, "target_file_bytes": 1 << 27,
            "filesystems": {}, "completed": [], "staging": f"file:{tmp_path / 'out'}"}  # fmt: skip
    events: list[dict] = []

    # when
    with pytest.raises(Exception, match="notes.txt cannot be read as parquet"):
        rewrite_program.run(spark, plan, events.append)

    # then
    assert not [e for e in events if "unit_done" in e]


def test_rows_a_plain_spark_writer_adds_during_a_concatenate_refuse_the_swap_and_stay_readable(
    spark, spark_metastore: Metastore, small_files: None  # noqa: ANN001
) -> None:  # fmt: skip
    """Issue 25, case 1: a Spark job that takes no Hive lock appends 20,000 rows to a partition after the rewrite
    read it. The compacted directory lacks them, so the swap is refused naming the new files; the partition still
    points at its directory and Spark's Hive client reads every row."""
    # given
    table = f"{DATABASE}.live"
    spark.sql(f"CREATE TABLE {table} (id int, name string) PARTITIONED BY (dt string) STORED AS PARQUET")
    for batch in range(3):
        spark.sql(f"INSERT INTO {table} PARTITION (dt='2024-01-01') VALUES ({batch}, 'n{batch}')")
    before = storage(spark_metastore, table)
    source = Path(before["dt=2024-01-01"][0].removeprefix("file:"))
    preview = alter_preview_statement(metastore=spark_metastore, statement=f"ALTER TABLE {table} CONCATENATE")
    assert preview.blockers == (), preview.blockers
    written: list[str] = []

    def rewrite_then_write(plan: dict) -> dict:
        manifest = rewrite_program.run(spark, plan, [].append)
        planned = {f"file:{p}" for p in data_files(f"file:{source}")}
        late = spark.range(LATE).selectExpr("CAST(id + 100 AS INT) AS id", "CONCAT('late', id) AS name")
        late.write.mode("append").parquet(str(source))  # straight into the directory: no metastore, no Hive lock
        written.extend(sorted({f"file:{p}" for p in data_files(f"file:{source}")} - planned))
        return manifest

    # when
    with pytest.raises(ApplicationError) as refused:
        relocate_execute(preview=preview, actor="steward", source="cli", run_program=rewrite_then_write)

    # then
    assert written and refused.value.details["appeared"] == sorted(written)
    assert "nothing was swapped" in refused.value.message
    assert storage(spark_metastore, table) == before
    assert len(rows(spark, table)) == 3 + LATE
