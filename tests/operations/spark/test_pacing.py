"""
Units reported done every few seconds (issue 29: a ``CONCATENATE`` of 56 partitions showed ``0 of 56`` for minutes,
then 100 %, since every unit went in one batch of up to 1,000): the programs' batches are paced
(``operations/spark/programs/pacing.py``), the first one small so the first units finish early.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from catalog_admin.locations import LocalFileSystem
from operations.spark.programs import rewrite
from operations.spark.programs.pacing import next_batch_size, paced_batches


class Clock:
    """A clock the test moves: each batch takes ``seconds_per_unit`` per unit."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_first_batch_is_a_twentieth_and_the_next_ones_fill_the_target_at_their_pace() -> None:
    """1,000 units at 0.1 s each, a cap of 1,000 and a 5 s target: 50 first (5 s), then 50 at a time, all of them
    handed out once; never one batch of everything."""
    # given
    clock, sizes = Clock(), []

    # when
    for batch in paced_batches(list(range(1_000)), 1_000, clock=clock):
        sizes.append(len(batch))
        clock.now += 0.1 * len(batch)

    # then
    assert sizes[0] == 50 and set(sizes) == {50} and sum(sizes) == 1_000


def test_fast_units_grow_the_batches_at_most_fourfold_and_never_past_the_cap() -> None:
    # given
    clock, sizes = Clock(), []

    # when
    for batch in paced_batches(list(range(2_000)), 300, clock=clock):
        sizes.append(len(batch))
        clock.now += 0.0001 * len(batch)

    # then
    assert sizes[:4] == [100, 300, 300, 300] and sum(sizes) == 2_000


def test_slow_units_go_one_by_one() -> None:
    assert next_batch_size(done=3, seconds=30.0, last=3, cap=1_000) == 1
    assert next_batch_size(done=0, seconds=0.0, last=2, cap=5) == 5


def test_a_compaction_of_40_partitions_reports_units_done_before_the_end(tmp_path: Path) -> None:
    """The rewrite program in this process on 40 partitions of two small Parquet files: the first units are reported
    done (with the counters a job's ETA reads) while most are still to do; before, the first report of any unit done
    came with all 40."""
    # given
    plan = _compaction_plan(tmp_path, partitions=40)
    events: list[dict] = []

    # when
    manifest = rewrite.run(None, plan, events.append)

    # then
    counted = [e["partitions_done"] for e in events if "partitions_done" in e and "message" not in e]
    assert len(manifest["units"]) == 40 and counted[-1] == 40
    assert counted[0] == 2 and len(counted) >= 3  # a twentieth first, then more batches
    first_done = next(i for i, e in enumerate(events) if "unit_done" in e)
    assert sum(1 for e in events[first_done:] if "unit_done" in e) == 40
    assert all(e["bytes_done"] < e["bytes_total"] for e in events if e.get("partitions_done") == counted[0])


def _compaction_plan(root: Path, *, partitions: int) -> dict:
    """The plan ``rewrite_plan`` gives the program for ``ALTER TABLE … CONCATENATE`` (as benchmarks/compact.py)."""
    staging = f"file:{root}/_compacted-test"
    units = []
    for number in range(partitions):
        folder = root / "orders" / f"p={number}"
        folder.mkdir(parents=True)
        for part in range(2):
            pq.write_table(
                pa.table({"id": pa.array([number * 10 + part], pa.int64())}), folder / f"part-{part}.parquet"
            )
        listed = LocalFileSystem().list_files(f"file:{folder}") or []
        units.append({"key": folder.name, "source": f"file:{folder}", "destination": f"{staging}/{folder.name}",
                      "source_format": "parquet", "target_format": "parquet",
                      "files": [{"source": f.location, "size": f.size} for f in listed]})  # fmt: skip
    return {"units": units, "columns": [["id", "bigint"]], "serde": {}, "target_file_bytes": 128 << 20,
            "filesystems": {}, "completed": [], "staging": staging, "metastore": None}  # fmt: skip


def test_the_copys_batches_close_on_bytes_as_well_as_on_files() -> None:
    """Units of a few big files report done every few gigabytes, not once 256 files are copied."""
    from operations.spark.programs import relocate

    # given: 6 units of one 1 GiB file each, then 300 units of one small file
    big = [{"key": f"big={n}", "files": [{"size": 1 << 30}]} for n in range(6)]
    small = [{"key": f"small={n}", "files": [{"size": 10}]} for n in range(300)]

    # when
    batches = [[u["key"] for u in batch] for batch in relocate._batches(big + small, 256, 2 << 30)]

    # then
    assert [len(b) for b in batches] == [2, 2, 2, 256, 44]
