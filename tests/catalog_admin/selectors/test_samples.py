"""
Samples read from real files: Parquet and ORC through pyarrow, Avro through fastavro, text as LazySimpleSerDe
splits it; bounded in rows and files; hidden files skipped; errors in the shared vocabulary.
"""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.selectors.samples import MAX_FILES, SampleSource, data_format, read_sample, sample_limit

COLUMNS = ("id", "name", "amount")


def arrow_table(first: int, count: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(first, first + count), pa.int64()),
            "name": [f"n{i}" for i in range(first, first + count)],
            "amount": pa.array([decimal.Decimal(f"{i}.50") for i in range(count)], pa.decimal128(10, 2)),
        }
    )


def source(fmt: str, *directories: Path, keys: tuple[str, ...] = (), values=None, params=None) -> SampleSource:
    return SampleSource(
        format=fmt,
        columns=COLUMNS,
        directories=tuple((f"file:{d}", (values or {}).get(d, ())) for d in directories),
        partition_keys=keys,
        serde_params=params or {},
    )


def test_parquet_rows_are_read_batch_by_batch_up_to_the_limit(tmp_path: Path) -> None:
    # given: 5,000 rows in row groups of 1,000
    pq.write_table(arrow_table(0, 5000), tmp_path / "000000_0", row_group_size=1000)

    # when
    sample = read_sample(source("parquet", tmp_path), limit=3)

    # then
    assert sample.columns == list(COLUMNS)
    assert sample.rows == [[0, "n0", "0.50"], [1, "n1", "1.50"], [2, "n2", "2.50"]]
    assert sample.truncated


def test_orc_columns_are_matched_by_name_and_partition_values_appended(tmp_path: Path) -> None:
    # given: an ORC file whose columns are in another order
    table = arrow_table(10, 2).select(["amount", "name", "id"])
    part = tmp_path / "dt=2024-01-01"
    part.mkdir()
    orc.write_table(table, part / "000000_0")

    # when
    sample = read_sample(source("orc", part, keys=("dt",), values={part: ("2024-01-01",)}), limit=10)

    # then
    assert sample.columns == [*COLUMNS, "dt"]
    assert sample.rows == [[10, "n10", "0.50", "2024-01-01"], [11, "n11", "1.50", "2024-01-01"]]
    assert not sample.truncated


def test_avro_records_are_read_one_at_a_time(tmp_path: Path) -> None:
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "name", "type": ["null", "string"]},
            {"name": "amount", "type": {"type": "int", "logicalType": "date"}},
        ],
    }
    with (tmp_path / "part-0.avro").open("wb") as handle:
        fastavro.writer(handle, schema, [{"id": 1, "name": None, "amount": datetime.date(2024, 1, 2)}])

    sample = read_sample(source("avro", tmp_path), limit=5)

    assert sample.rows == [[1, None, "2024-01-02"]]


def test_text_uses_the_serde_delimiter_and_null_format_and_skips_hidden_files(tmp_path: Path) -> None:
    (tmp_path / "_SUCCESS").write_text("not data\n")
    (tmp_path / ".000000_0.crc").write_text("not data\n")
    (tmp_path / "000000_0").write_text("1|a|\\N\n2|b|3.5\n")

    sample = read_sample(source("text", tmp_path, params={"field.delim": "|"}), limit=10)

    assert sample.rows == [["1", "a", None], ["2", "b", "3.5"]]
    assert sample.files_read == 1


def test_a_sample_opens_at_most_max_files_files(tmp_path: Path) -> None:
    for i in range(MAX_FILES + 5):
        (tmp_path / f"{i:06d}_0").write_text("\n")  # one empty row each

    sample = read_sample(source("text", tmp_path), limit=500)

    assert sample.files_read == MAX_FILES
    assert len(sample.rows) == MAX_FILES


def test_a_directory_without_files_is_no_data_files(tmp_path: Path) -> None:
    with pytest.raises(ApplicationError) as raised:
        read_sample(source("parquet", tmp_path, tmp_path / "missing"), limit=5)

    assert raised.value.code is ErrorCode.NO_DATA_FILES
    assert raised.value.code.http_status == 404


def test_a_file_not_in_the_declared_format_is_unreadable_data(tmp_path: Path) -> None:
    (tmp_path / "000000_0").write_text("1,a,2\n")

    with pytest.raises(ApplicationError) as raised:
        read_sample(source("parquet", tmp_path), limit=5)

    assert raised.value.code is ErrorCode.UNREADABLE_DATA
    assert "000000_0 is not readable as parquet" in raised.value.message


@pytest.mark.parametrize(
    ("input_format", "serde", "expected"),
    [
        ("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat", None, "parquet"),
        ("org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "orc"),
        (
            "org.apache.hadoop.hive.ql.io.avro.AvroContainerInputFormat",
            "org.apache.hadoop.hive.serde2.avro.AvroSerDe",
            "avro",
        ),
        ("org.apache.hadoop.mapred.TextInputFormat", "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", "text"),
        ("org.apache.hadoop.mapred.SequenceFileInputFormat", None, None),
    ],
)
def test_the_format_comes_from_the_storage_descriptor(input_format, serde, expected) -> None:
    assert data_format(input_format, serde) == expected


@pytest.mark.parametrize("raw", ["0", "501", "x", "-1"])
def test_a_limit_outside_1_to_500_is_refused(raw: str) -> None:
    with pytest.raises(ApplicationError) as raised:
        sample_limit(raw)

    assert raised.value.code is ErrorCode.INVALID_PARAMETER
    assert raised.value.details == {"parameter": "limit"}
