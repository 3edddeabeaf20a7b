"""
getAcidState on real directories laid out as Hive writes them (``AcidUtils``), listed through the console's own
filesystem interface, with valid write-id lists as the metastore would hand them out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catalog_admin.hive.acid import (
    CompactionThresholds,
    RangeResponse,
    ValidTxnList,
    ValidWriteIdList,
    acid_state,
    compaction_need,
)
from catalog_admin.locations import LocalFileSystem


def layout(root: Path, *names: str, size: int = 10, compacted: tuple[str, ...] = ()) -> list:
    """Directories (each with a bucket file of ``size`` bytes) and plain files under ``root``, then its listing."""
    for name in names:
        if "." in name or name.startswith("0000"):
            (root / name).write_bytes(b"x" * size)
            continue
        (root / name).mkdir(parents=True)
        (root / name / "bucket_00000").write_bytes(b"x" * size)
        (root / name / "_orc_acid_version").write_text("2")
    for name in compacted:
        (root / name / "_metadata_acid").write_text(json.dumps({"thisFileVersion": "0", "dataFormat": "compacted"}))
    return list(LocalFileSystem().list_directory(f"file:{root}"))


def names(dirs) -> list[str]:
    return [d.name for d in dirs]


def test_write_id_ranges_follow_valid_reader_write_id_list():
    """isWriteIdRangeValid / isWriteIdRangeAborted / isValidBase of ValidReaderWriteIdList."""
    # given write ids up to 10, 5 open and 7 aborted
    ids = ValidWriteIdList(high_watermark=10, invalid=(5, 7), aborted=frozenset({7}))
    # then
    assert ids.range_valid(1, 4) is RangeResponse.ALL
    assert ids.range_valid(4, 6) is RangeResponse.SOME
    assert ids.range_valid(5, 5) is RangeResponse.NONE
    assert ids.range_valid(11, 12) is RangeResponse.NONE
    assert ids.range_valid(9, 12) is RangeResponse.SOME  # 11 and 12 are above the high-water mark
    assert ids.range_aborted(7, 7) is RangeResponse.ALL
    assert ids.range_aborted(6, 8) is RangeResponse.SOME
    assert ids.is_valid_base(4) and not ids.is_valid_base(5)
    assert str(ids) == "10:5:5:7"


def test_base_deltas_and_obsolete(tmp_path):
    """The newest valid base wins; deltas it covers and older bases are obsolete; later deltas are current."""
    # given a major compaction to 5 and later writes 6..8 (a minor compaction 6_7 covers 6_6 and 7_7)
    entries = layout(
        tmp_path,
        "base_0000002",
        "base_0000005",
        "delta_0000001_0000001_0000",
        "delta_0000004_0000005",
        "delta_0000006_0000007",
        "delta_0000006_0000006_0000",
        "delta_0000007_0000007_0000",
        "delete_delta_0000006_0000007",
        "delta_0000008_0000008_0000",
        "000000_0",
        compacted=("base_0000002", "base_0000005"),
    )
    # when
    state = acid_state(entries, ValidWriteIdList(high_watermark=8), visibility=False)
    # then
    assert state.base is not None and state.base.name == "base_0000005"
    assert names(state.deltas) == ["delta_0000006_0000007", "delta_0000008_0000008_0000"]
    assert names(state.delete_deltas) == ["delete_delta_0000006_0000007"]
    assert sorted(state.obsolete) == sorted(
        [
            "base_0000002",
            "delta_0000001_0000001_0000",
            "delta_0000004_0000005",
            "delta_0000006_0000006_0000",
            "delta_0000007_0000007_0000",
            "000000_0",
        ]
    )
    assert state.original_files == () and state.aborted == ()


def test_aborted_and_open_write_ids(tmp_path):
    """A delta of an aborted write is aborted (and not read); an open write's delta is not read yet; a base over
    an open write id is not usable (Hive: not enough history)."""
    # given write 2 open, 3 aborted, and a compacted base_4 that cannot be used by a reader that sees 2 open
    entries = layout(
        tmp_path,
        "delta_0000001_0000001_0000",
        "delta_0000002_0000002_0000",
        "delta_0000003_0000003_0000",
        "delta_0000004_0000004_0000",
        "base_0000004",
        compacted=("base_0000004",),
    )
    ids = ValidWriteIdList(high_watermark=4, invalid=(2, 3), aborted=frozenset({3}))
    # when
    hive3 = acid_state(entries, ids, visibility=False)
    hive4 = acid_state(entries, ids, ValidTxnList(high_watermark=100), visibility=True)
    # then
    for state in (hive3, hive4):
        assert state.base is None
        assert names(state.deltas) == ["delta_0000001_0000001_0000", "delta_0000004_0000004_0000"]
        assert state.aborted == ("delta_0000003_0000003_0000",)
        assert state.not_enough_history.endswith("Oldest available base: base_0000004")


def test_visibility_suffix_on_hive4(tmp_path):
    """base_N_vT and delta_M_N_vT are read once the compactor's transaction T committed; an aborted compactor's
    output is listed as aborted, a running one's is skipped (Hive 4's isDirUsable)."""
    # given compactions by txn 50 (committed), 60 (aborted) and 70 (still open)
    entries = layout(
        tmp_path,
        "base_0000003_v0000050",
        "base_0000005_v0000070",
        "delta_0000001_0000003_v0000050",
        "delta_0000004_0000005_v0000060",
        "delta_0000004_0000004_0000",
        "delta_0000005_0000005_0000",
        "delta_0000006_0000006_0001",
        "delta_0000006_0000006_0002",
    )
    txns = ValidTxnList(high_watermark=80, open=frozenset({70}), aborted=frozenset({60}))
    # when
    state = acid_state(entries, ValidWriteIdList(high_watermark=6), txns, visibility=True)
    # then
    assert state.base is not None and state.base.name == "base_0000003_v0000050"
    assert state.base.visibility_txn_id == 50
    assert names(state.deltas) == [
        "delta_0000004_0000004_0000",
        "delta_0000005_0000005_0000",
        "delta_0000006_0000006_0001",
        "delta_0000006_0000006_0002",
    ]
    assert state.aborted == ("delta_0000004_0000005_v0000060",)
    assert state.obsolete == ("delta_0000001_0000003_v0000050",)


def test_originals_without_base(tmp_path):
    """A table converted to ACID: its original files (also in sub-directories) are read until a base exists."""
    # given
    entries = layout(tmp_path, "000000_0", "000001_0", "delta_0000001_0000001_0000")
    (tmp_path / "HIVE_UNION_SUBDIR_1").mkdir()
    (tmp_path / "HIVE_UNION_SUBDIR_1" / "000000_0").write_bytes(b"yy")
    entries = list(LocalFileSystem().list_directory(f"file:{tmp_path}"))
    # when
    state = acid_state(entries, ValidWriteIdList(high_watermark=1), visibility=False)
    # then
    assert state.original_files == ("000000_0", "000001_0", "HIVE_UNION_SUBDIR_1/000000_0")
    assert names(state.deltas) == ["delta_0000001_0000001_0000"]


def test_insert_overwrite_base_is_a_write(tmp_path):
    """A base without the compactor's marker is an INSERT OVERWRITE: valid once its write id committed."""
    # given base_3 from an INSERT OVERWRITE while write 2 is still open
    entries = layout(tmp_path, "base_0000003", "delta_0000001_0000001_0000")
    ids = ValidWriteIdList(high_watermark=3, invalid=(2,))
    # when
    state = acid_state(entries, ids, visibility=False)
    # then
    assert state.base is not None and state.base.name == "base_0000003"
    assert state.obsolete == ("delta_0000001_0000001_0000",)


@pytest.mark.parametrize(
    ("deltas", "base_size", "delta_size", "expected"),
    [
        (10, 1000, 1, ""),  # ten deltas of 1 byte: at the count threshold, 1% of the base
        (11, 1000, 1, "minor"),  # one more delta than the threshold
        (2, 100, 10, "major"),  # 2 x 11 bytes of deltas are 15% of the base's 146 bytes (> 10%)
        (2, 0, 6, ""),  # no base, two deltas: under the count threshold
        (11, 0, 1, "major"),  # no base and too many deltas: major
    ],
)
def test_needs_compaction_by_initiator_thresholds(tmp_path, deltas, base_size, delta_size, expected):
    """Initiator.determineCompactionType: delta bytes over 10% of the base → major; more than 10 deltas → minor."""
    # given
    directories = [f"delta_{n:07d}_{n:07d}_0000" for n in range(2, deltas + 2)]
    entries = layout(tmp_path, *directories, size=delta_size)
    if base_size:
        entries = layout(tmp_path, "base_0000001", size=base_size, compacted=("base_0000001",))
    state = acid_state(entries, ValidWriteIdList(high_watermark=deltas + 1), visibility=False)
    # when
    need = compaction_need(state, CompactionThresholds())
    # then
    assert need.compaction_type == expected
    assert need.deltas == deltas


def test_thresholds_from_table_properties_and_aborted_count():
    """``compactorthreshold.*`` table properties override the settings; too many aborted transactions → major."""
    # given
    thresholds = CompactionThresholds(delta_num=10, delta_pct=0.1, aborted=3)
    table = thresholds.for_table({"compactorthreshold.hive.compactor.delta.num.threshold": "1"})
    empty = acid_state([], ValidWriteIdList(high_watermark=0))
    # then
    assert table.delta_num == 1 and table.delta_pct == 0.1
    assert compaction_need(empty, thresholds, aborted_transactions=4).compaction_type == "major"
    assert compaction_need(empty, thresholds, aborted_transactions=3).compaction_type == ""
