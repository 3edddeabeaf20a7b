"""
ACID directory state at scale: listing one partition directory with many deltas through the console's filesystem
interface and computing ``getAcidState`` and the Initiator's verdict on it (pure, no metastore).

    .venv/bin/python benchmarks/acid.py [--deltas 1000,10000]

Each size lays out, under ``var/bench/acid``, a compacted ``base_N`` plus N committed ``delta_i_i_0000`` directories
(one bucket file each), N/10 ``delete_delta`` directories, an aborted delta and a minor-compacted delta covering the
first half (which makes those deltas obsolete), as Hive's writers and compactor leave them. Results go to
``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
import time
from pathlib import Path

from common import REPO, median_ms, write_section

sys.path.insert(0, str(REPO))

from catalog_admin.hive.acid import CompactionThresholds, ValidWriteIdList, acid_state, compaction_need  # noqa: E402
from catalog_admin.locations import LocalFileSystem  # noqa: E402

ROOT = REPO / "var" / "bench" / "acid"


def lay_out(root: Path, deltas: int) -> None:
    """A partition directory as Hive leaves it after ``deltas`` single-row writes and a minor compaction."""
    shutil.rmtree(root, ignore_errors=True)
    names = [f"delta_{n:07d}_{n:07d}_0000" for n in range(2, deltas + 2)]
    names += [f"delete_delta_{n:07d}_{n:07d}_0000" for n in range(2, deltas + 2, 10)]
    names += [f"delta_0000002_{deltas // 2:07d}", f"delta_{deltas + 2:07d}_{deltas + 2:07d}_0000"]  # minor; aborted
    for name in ["base_0000001", *names]:
        (root / name).mkdir(parents=True)
        (root / name / "bucket_00000").write_bytes(b"x" * 64)
    (root / "base_0000001" / "_metadata_acid").write_text(json.dumps({"dataFormat": "compacted"}))


def measure(deltas: int) -> tuple[str, float, float, int, int, str]:
    root = ROOT / f"p{deltas}"
    lay_out(root, deltas)
    location = f"file:{root}"
    ids = ValidWriteIdList(high_watermark=deltas + 2, invalid=(deltas + 2,), aborted=frozenset({deltas + 2}))
    entries = LocalFileSystem().list_directory(location)
    assert entries is not None
    listing = median_ms(lambda: LocalFileSystem().list_directory(location), runs=3)
    compute = median_ms(lambda: compaction_need(acid_state(entries, ids), CompactionThresholds()), runs=5)
    state = acid_state(entries, ids)
    need = compaction_need(state, CompactionThresholds())
    return f"{deltas:,}", listing, compute, len(state.current), len(state.obsolete), need.compaction_type


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deltas", default="1000,10000")
    args = parser.parse_args()
    sizes = [int(size) for size in args.deltas.split(",")]
    started = time.perf_counter()
    rows = [measure(size) for size in sizes]
    shutil.rmtree(ROOT, ignore_errors=True)
    lines = [
        f"Command: `.venv/bin/python benchmarks/acid.py --deltas {args.deltas}`",
        "",
        f"Machine: {platform.machine()}, CPython {platform.python_version()}, local disk; "
        f"total {time.perf_counter() - started:.1f} s.",
        "",
        "One partition directory: a compacted base, N deltas, N/10 delete deltas, a minor-compacted delta over the "
        "first half and an aborted delta. Listing (files and sizes of every directory) and `getAcidState` + the "
        "Initiator's verdict, median ms:",
        "",
        "| deltas | listing ms | getAcidState + verdict ms | current | obsolete | Initiator |",
        "|---:|---:|---:|---:|---:|---|",
        *(
            f"| {d} | {lst:.1f} | {cmp:.1f} | {cur:,} | {obs:,} | {kind or 'none'} |"
            for d, lst, cmp, cur, obs, kind in rows
        ),
    ]
    write_section(REPO / "docs" / "benchmarks.md", "ACID directory state", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
