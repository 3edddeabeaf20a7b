"""
An execution's before-image rows live in ``CapturedRows`` (compressed chunks per metastore table), not in the
execution's JSON; every reader (revert, undrop, a revert's events) reads them through ``Execution.read_before_image``,
and an execution recorded before they existed (its rows in the JSON) still reverts exactly.
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path

import pytest
import zstandard

from catalog_admin.errors import ApplicationError
from catalog_admin.selectors.metastores import Metastore
from operations.models import CapturedRows, Execution
from operations.models.executions import decode_rows, encode_rows, jsonable_value, row_value
from operations.services import row_capture
from operations.services.alter import alter_execute, alter_preview_statement
from operations.services.revert import revert_preview
from tests.fixtures.operations import execute, json_before_image, metastore_dump, warehouse_tree

DROP_TABLE = "DROP TABLE sales.orders"
DROP_PARTITIONS = "ALTER TABLE sales.orders DROP PARTITION (hour >= 6)"


def test_rows_round_trip_with_their_bytes_and_datetimes() -> None:
    # given
    when = datetime(2026, 11, 28, 13, 5, 7)  # noqa: DTZ001 - the metastore returns naive datetimes
    rows = [(1, "a", None, 1.5, b"\x00\xff", memoryview(b"hi"), when), (2, "é", True, -0.0, b"", None, None)]

    # when
    columns, decoded = decode_rows(encode_rows(["ID", "NAME", "N", "F", "B", "M", "T"], rows))

    # then
    assert columns == ["ID", "NAME", "N", "F", "B", "M", "T"]
    assert decoded == [[1, "a", None, 1.5, b"\x00\xff", b"hi", when], [2, "é", True, -0.0, b"", None, None]]
    assert math.copysign(1, decoded[1][3]) == -1 and decoded[1][2] is True


def test_a_chunk_written_as_json_reads_with_its_tagged_values() -> None:
    """Chunks written before MessagePack (JSON, bytes and datetimes tagged) read as they were written."""
    # given
    old = [["ID", "B", "T"], [[7, {"base64": "AP8="}, {"datetime": "2026-11-28T13:05:07"}]]]
    data = json_chunk(*old)

    # when
    columns, rows = decode_rows(data)

    # then
    assert (columns, rows) == tuple(old)
    assert [row_value(v) for v in rows[0]] == [7, b"\x00\xff", datetime(2026, 11, 28, 13, 5, 7)]  # noqa: DTZ001


def test_a_value_the_image_cannot_keep_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="a captured set cannot be kept"):
        encode_rows(["X"], [({1},)])


@pytest.mark.parametrize("statement", [DROP_TABLE, DROP_PARTITIONS])
def test_the_rows_a_drop_deletes_are_kept_beside_the_execution_not_in_its_json(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch, statement: str
) -> None:
    """The execution's JSON holds only the counts; the rows are in chunks (several here: 3 rows a chunk), every one
    read back in capture order, and the drop reverts exactly from them."""
    # given
    monkeypatch.setattr(row_capture, "ROWS_PER_CHUNK", 3)
    rows_before, tree_before = metastore_dump(metastore.alias, events=False), warehouse_tree(warehouse)

    # when
    dropped = execute(alter_preview_statement(metastore=metastore, statement=statement))

    # then
    stored = Execution.objects.get(pk=dropped.pk)
    assert "deleted_rows" not in stored.before_image and "updated_rows" not in stored.before_image
    image = stored.read_before_image()
    counts = stored.before_image["captured"]["deleted"]
    assert {table: len(rows) for table, rows in image["deleted_rows"].items()} == counts
    assert counts["PARTITIONS"] > 3 and stored.captured_count("deleted", "PARTITIONS") == counts["PARTITIONS"]
    chunks = CapturedRows.objects.filter(execution=stored, kind="deleted", metastore_table="PARTITIONS")
    assert chunks.count() == -(-counts["PARTITIONS"] // 3)
    assert stored.captured_rows("deleted", "PARTITIONS") == image["deleted_rows"]["PARTITIONS"]
    revert = execute(revert_preview(execution=stored))
    assert revert.actual_counts == revert.expected_counts
    assert (metastore_dump(metastore.alias, events=False), warehouse_tree(warehouse)) == (rows_before, tree_before)


@pytest.mark.parametrize("statement", [DROP_TABLE, DROP_PARTITIONS])
def test_an_execution_recorded_with_its_rows_in_the_json_still_reverts_exactly(
    metastore: Metastore, warehouse: Path, statement: str
) -> None:
    """Read both: an execution from before migration 0014 (rows in ``before_image``, no chunks) is undone as ever."""
    # given
    rows_before, tree_before = metastore_dump(metastore.alias, events=False), warehouse_tree(warehouse)
    dropped = execute(alter_preview_statement(metastore=metastore, statement=statement))
    old_style = json_before_image(dropped)
    CapturedRows.objects.filter(execution=dropped).delete()
    Execution.objects.filter(pk=dropped.pk).update(before_image=old_style)
    stored = Execution.objects.get(pk=dropped.pk)
    assert stored.keeps_rows and len(stored.captured_rows("deleted", "PARTITIONS")) > 0

    # when
    revert = execute(revert_preview(execution=stored))

    # then
    assert revert.actual_counts == revert.expected_counts
    assert (metastore_dump(metastore.alias, events=False), warehouse_tree(warehouse)) == (rows_before, tree_before)


@pytest.mark.parametrize("statement", [DROP_TABLE, DROP_PARTITIONS])
def test_an_execution_whose_chunks_were_written_as_json_still_reverts_exactly(
    metastore: Metastore, warehouse: Path, statement: str
) -> None:
    """Read both: chunks written before MessagePack (JSON, as ``encode_rows`` wrote them until then) are undone as
    ever."""
    # given
    rows_before, tree_before = metastore_dump(metastore.alias, events=False), warehouse_tree(warehouse)
    dropped = execute(alter_preview_statement(metastore=metastore, statement=statement))
    for chunk in CapturedRows.objects.filter(execution=dropped):
        chunk.data = json_chunk(*decode_rows(chunk.data))
        chunk.save(update_fields=["data"])
    assert {unpacked(c.data)[:1] for c in CapturedRows.objects.filter(execution=dropped)} == {b"["}

    # when
    revert = execute(revert_preview(execution=Execution.objects.get(pk=dropped.pk)))

    # then
    assert revert.actual_counts == revert.expected_counts
    assert (metastore_dump(metastore.alias, events=False), warehouse_tree(warehouse)) == (rows_before, tree_before)


def unpacked(data: bytes | memoryview) -> bytes:
    return zstandard.ZstdDecompressor().decompress(bytes(data))


def json_chunk(columns: list[str], rows: list[list[object]]) -> bytes:
    """A chunk as ``encode_rows`` wrote it before MessagePack: JSON with bytes and datetimes tagged, zstd."""
    text = json.dumps([columns, rows], default=jsonable_value, separators=(",", ":"))
    return zstandard.ZstdCompressor(level=3).compress(text.encode())


def test_a_failed_execution_keeps_no_rows(
    metastore: Metastore, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rolled back: the rows it captured go too (nothing to revert)."""
    # given
    plan = alter_preview_statement(metastore=metastore, statement=DROP_PARTITIONS)

    def fail(name: str) -> None:
        if name == "before_commit":
            raise RuntimeError("injected")

    monkeypatch.setattr("operations.services.alter.fault_point", fail)

    # when
    with pytest.raises(ApplicationError):
        alter_execute(preview=plan, actor="tester", source="cli")

    # then
    assert Execution.objects.get().state == Execution.State.FAILED
    assert not CapturedRows.objects.exists()
