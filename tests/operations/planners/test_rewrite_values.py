"""
A rewrite is value-exact or blocked (issue 25, case 9): the preview of CONCATENATE and SET FILEFORMAT … WITH DATA
refuses, naming it, every setting the rewrite program cannot carry (``operations/planners/rewrite_values.py``), and
leaves alone what it carries (text concatenated byte for byte whatever its escape character). External tables'
files are rewritten or relocated only where the metastore says its external data is governed.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from catalog_admin.db import allow_metastore_writes
from catalog_admin.models import Column, Partition, SerDeParam, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.preview import Preview
from operations.services.alter import alter_preview_statement
from tests.fixtures.factories import partition_locations, table_row
from tests.fixtures.operations import path_of

pytestmark = pytest.mark.usefixtures("warehouse")  # tests add files: the warehouse is restored afterwards

HOUR = "dt=2024-01-03/hour=0"
CONCATENATE = "ALTER TABLE marketing.clicks PARTITION (dt='2024-01-03', hour=0) CONCATENATE"
CONVERT = "ALTER TABLE marketing.clicks SET FILEFORMAT PARQUET WITH DATA"


def codes(preview: Preview) -> set[str]:
    return {b.code for b in preview.blockers}


def messages(preview: Preview, code: str) -> list[str]:
    return [b.message for b in preview.blockers if b.code == code]


def as_strings(metastore: Metastore) -> None:
    """marketing.clicks with string columns only: text values a conversion carries exactly."""
    cd_id = table_row(metastore, "marketing", "clicks").sd.cd_id
    with allow_metastore_writes():
        Column.objects.using(metastore.alias).filter(cd_id=cd_id).update(type="string")


def small_files(metastore: Metastore) -> None:
    """Three small text files in the chosen hour of marketing.clicks (something to compact)."""
    clicks = table_row(metastore, "marketing", "clicks")
    directory = path_of(partition_locations(metastore, clicks.id)[HOUR])
    directory.mkdir(parents=True, exist_ok=True)
    for number in range(3):
        (directory / f"00000{number + 1}_0").write_bytes(f"{number},1,a\\,b,0.5\n".encode())


def set_serde_param(metastore: Metastore, key: str, value: str, *, partition: str | None = None) -> None:
    clicks = table_row(metastore, "marketing", "clicks")
    serde_id = clicks.sd.serde_id
    if partition is not None:
        serde_id = Partition.objects.using(metastore.alias).get(table_id=clicks.id, name=partition).sd.serde_id
    with allow_metastore_writes():
        SerDeParam.objects.using(metastore.alias).filter(serde_id=serde_id, key=key).delete()
        SerDeParam.objects.using(metastore.alias).create(serde_id=serde_id, key=key, value=value)


def set_table_param(metastore: Metastore, key: str, value: str) -> None:
    clicks = table_row(metastore, "marketing", "clicks")
    with allow_metastore_writes():
        TableParam.objects.using(metastore.alias).create(table_id=clicks.id, key=key, value=value)


def test_a_conversion_refuses_the_escape_character_it_cannot_carry(metastore: Metastore) -> None:
    """escape.delim (``a\\,b`` is one field to Hive) is not implemented by the conversion: blocked, naming it."""
    # given
    as_strings(metastore)
    set_serde_param(metastore, "escape.delim", "\\")

    # when
    preview = alter_preview_statement(metastore=metastore, statement=CONVERT)

    # then
    assert codes(preview) == {"text_setting_not_carried"}
    assert "escape.delim='\\\\'" in messages(preview, "text_setting_not_carried")[0]
    assert preview.steps == ()


def test_a_compaction_carries_the_escape_character_byte_for_byte(metastore: Metastore) -> None:
    """Concatenating text keeps every byte: escape.delim does not block a CONCATENATE."""
    # given
    small_files(metastore)
    set_serde_param(metastore, "escape.delim", "\\")

    # when
    preview = alter_preview_statement(metastore=metastore, statement=CONCATENATE)

    # then
    assert preview.blockers == (), preview.blockers
    assert [u.key for u in preview.data_copy.units] == [HOUR]


@pytest.mark.parametrize("key", ["skip.header.line.count", "skip.footer.line.count"])
@pytest.mark.parametrize("statement", [CONCATENATE, CONVERT], ids=["concatenate", "convert"])
def test_header_and_footer_lines_block_every_rewrite(metastore: Metastore, key: str, statement: str) -> None:
    """Hive skips those lines in every file: merged or converted files would turn them into rows."""
    # given
    as_strings(metastore)
    small_files(metastore)
    set_table_param(metastore, key, "1")

    # when
    preview = alter_preview_statement(metastore=metastore, statement=statement)

    # then
    assert codes(preview) == {"skipped_lines"}
    assert messages(preview, "skipped_lines")[0].startswith(f"{key}=1: Hive skips")


def test_text_columns_spark_parses_otherwise_than_hive_block_a_conversion(metastore: Metastore) -> None:
    """bigint, int and double text values are read by Spark's casts (' 2' -> 2, '3.7' -> NULL): blocked, naming the
    columns."""
    # when
    preview = alter_preview_statement(metastore=metastore, statement=CONVERT)

    # then
    assert codes(preview) == {"text_values_not_exact"}
    message = messages(preview, "text_values_not_exact")[0]
    assert message.startswith("3 column(s) are not strings (click_id bigint, campaign_id int, cost double)")


def test_a_partition_with_its_own_delimiter_blocks_a_conversion(metastore: Metastore) -> None:
    """The program reads every partition with the table's SerDe parameters: a partition written with another
    field.delim is named rather than misread."""
    # given
    as_strings(metastore)
    set_serde_param(metastore, "field.delim", "|", partition=HOUR)

    # when
    preview = alter_preview_statement(metastore=metastore, statement=CONVERT)

    # then
    assert codes(preview) == {"partition_text_settings_differ"}
    assert "'field.delim': '|'" in messages(preview, "partition_text_settings_differ")[0]


def test_a_setting_outside_the_allow_list_blocks_a_conversion(metastore: Metastore) -> None:
    """timestamp.formats is one of LazySimpleSerDe's settings the conversion does not implement."""
    # given
    as_strings(metastore)
    set_serde_param(metastore, "timestamp.formats", "yyyy-MM-dd'T'HH:mm:ss")

    # when
    preview = alter_preview_statement(metastore=metastore, statement=CONVERT)

    # then
    assert codes(preview) == {"text_setting_not_carried"}
    assert "timestamp.formats" in messages(preview, "text_setting_not_carried")[0]


def test_compressed_text_is_named_by_the_preview(metastore: Metastore) -> None:
    """Compressed streams cannot be concatenated line by line: the preview names the file (the program would fail)."""
    # given
    small_files(metastore)
    clicks = table_row(metastore, "marketing", "clicks")
    (path_of(partition_locations(metastore, clicks.id)[HOUR]) / "000009_0.gz").write_bytes(b"\x1f\x8b")

    # when
    preview = alter_preview_statement(metastore=metastore, statement=CONCATENATE)

    # then
    assert codes(preview) == {"compressed_text"}
    assert "000009_0.gz" in messages(preview, "compressed_text")[0]


def sequence_file(codec: str) -> bytes:
    """A SequenceFile's header as Hadoop's ``SequenceFile.Writer`` (version 6) writes it, ``codec`` "": uncompressed,
    then no record."""

    def text(value: str) -> bytes:
        return bytes([len(value)]) + value.encode()

    flags = b"\x01\x00" + text(codec) if codec else b"\x00\x00"
    key, value = text("org.apache.hadoop.io.BytesWritable"), text("org.apache.hadoop.io.Text")
    return b"SEQ\x06" + key + value + flags + (0).to_bytes(4, "big") + bytes(range(16))


def test_a_compressed_sequence_file_is_named_by_the_preview_with_its_codec(metastore: Metastore) -> None:
    """A SequenceFile partition holding a compressed file: the convert's preview names the codec and the file (the
    program cannot read it), not the uncompressed one beside it; nothing would be written."""
    # given
    as_strings(metastore)
    clicks = table_row(metastore, "marketing", "clicks")
    partition = Partition.objects.using(metastore.alias).get(table_id=clicks.id, name=HOUR)
    with allow_metastore_writes():
        type(partition.sd).objects.using(metastore.alias).filter(id=partition.sd_id).update(
            input_format="org.apache.hadoop.mapred.SequenceFileInputFormat"
        )
    directory = path_of(partition.sd.location)
    for old in directory.iterdir():
        old.unlink()
    (directory / "000000_0").write_bytes(sequence_file(""))
    (directory / "000001_0").write_bytes(sequence_file("org.apache.hadoop.io.compress.DefaultCodec"))

    # when
    preview = alter_preview_statement(
        metastore=metastore, statement="ALTER TABLE marketing.clicks PARTITION (dt='2024-01-03', hour=0) SET "
        "FILEFORMAT PARQUET WITH DATA"
    )  # fmt: skip

    # then
    assert codes(preview) == {"sequence_file_not_read"}
    message = messages(preview, "sequence_file_not_read")[0]
    assert message.startswith("1 SequenceFile(s) are compressed with org.apache.hadoop.io.compress.DefaultCodec")
    assert "000001_0" in message and "000000_0" not in message
    assert preview.steps == ()


@pytest.mark.parametrize(
    "statement",
    [CONCATENATE, CONVERT, "ALTER TABLE marketing.campaigns SET LOCATION '{warehouse}/campaigns_v2' WITH DATA"],
    ids=["concatenate", "convert", "relocate"],
)
def test_external_tables_are_not_rewritten_unless_their_data_is_governed(
    metastore: Metastore, warehouse, statement: str
) -> None:  # noqa: ANN001
    """By default (METASTORE_GOVERNS_EXTERNAL_DATA_<NAME> off) an EXTERNAL table's data is refused, naming the table
    and the setting; nothing would be written."""
    # given
    as_strings(metastore)
    small_files(metastore)
    strict = replace(metastore, config=replace(metastore.config, governs_external_data=False))

    # when
    preview = alter_preview_statement(metastore=strict, statement=statement.format(warehouse=f"file:{warehouse}"))

    # then
    assert "external_data" in codes(preview), preview.blockers
    assert f"METASTORE_GOVERNS_EXTERNAL_DATA_{metastore.name.upper()}" in messages(preview, "external_data")[0]
    assert preview.steps == ()
