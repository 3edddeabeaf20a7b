"""
The merge's data copy (``operations.merge.data_copy.copy_merge_data``: the units its location rules move, each
listed, journaled, copied and verified by size and checksum) on local disk against ``cp -r`` of the same tree, in the
same run.

    .venv/bin/python benchmarks/merge_data_copy.py [--mb 512] [--files 128] [--runs 3]

Writes ``--files`` files of random bytes (``--mb`` in all) in 16 partition folders (``relocate_copy.make_tree``), then
times ``cp -r`` of the tree, the merge's copy of its 16 units (in process, ``spark=None``, as a merge without an
engine runs it) and the relocate program alone on the same files (what the merge adds: listing, journal); ``--runs``
interleaved rounds, the median reported. Dirty pages are flushed (``sync``) before each
timed copy and not counted. The console's own state is a scratch SQLite file (``benchmarks/common.setup_django``).
Results go to ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from common import REPO, setup_django, write_section
from relocate_copy import PARTITIONS, make_tree, plan_for, relocate, timed_copy

BASELINE = "`cp -r` (baseline)"
MERGE_COPY = "merge data copy, in process"
PROGRAM = "relocate program alone, in process (the copy inside the merge's)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=512)
    parser.add_argument("--files", type=int, default=128)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    setup_django("")
    with tempfile.TemporaryDirectory(prefix="merge-copy-bench-") as tmp:
        source, target = Path(tmp) / "source", Path(tmp) / "target"
        make_tree(source, args.mb, args.files)
        merges = [new_merge(source, target) for _ in range(args.runs)]  # reserved before the copy, as a merge's are
        copies = {
            BASELINE: lambda: subprocess.run(["cp", "-r", source, target], check=True),
            MERGE_COPY: lambda: merge_copy(merges.pop(), args.files),
            PROGRAM: lambda: relocate.run(None, plan_for(source, target), lambda event: None),
        }
        timings: dict[str, list[tuple[float, float]]] = {label: [] for label in copies}
        load_before = os.getloadavg()[0]
        for _ in range(args.runs):
            for label, action in copies.items():
                timings[label].append(timed_copy(action, target))
        load_after = os.getloadavg()[0]
    report(args, timings, load_before, load_after)


def new_merge(source: Path, target: Path) -> Any:
    """A merge journal (``MergeImport``) with every partition folder of ``source`` a unit copied into ``target``."""
    from operations.merge.data_copy import data_journal
    from operations.merge.data_plan import DataCopyPlan, DataUnit
    from operations.models import MergeImport

    units = tuple(
        DataUnit(f"bench.t/{folder.name}", f"file:{folder}", f"file:{target / folder.name}", 0, 0)
        for folder in sorted(source.iterdir())
    )
    return MergeImport.objects.create(
        source="bench", target="bench", request={}, fingerprint="", data_copy=data_journal(DataCopyPlan(units))
    )


def merge_copy(merge: Any, files: int) -> None:
    """One merge's data copy (its journal fresh)."""
    from operations.merge.data_copy import copy_merge_data

    manifest = copy_merge_data(merge, lambda event: None)
    if manifest["files"] != files:
        raise SystemExit(f"The merge's copy verified {manifest['files']} of {files} files")


def report(
    args: argparse.Namespace, timings: dict[str, list[tuple[float, float]]], load_before: float, load_after: float
) -> None:
    baseline = statistics.median(seconds for seconds, _cpu in timings[BASELINE])
    command = f"benchmarks/merge_data_copy.py --mb {args.mb} --files {args.files} --runs {args.runs}"
    lines = [
        f"{args.mb} MB in {args.files} files under {PARTITIONS} partition folders (16 copy units), local disk, "
        f"{args.runs} interleaved runs, the median shown (`{command}`; small sizes; "
        f"load average {load_before:.1f} before the runs, {load_after:.1f} "
        "after). The merge's copy lists each unit's source (no link followed), journals its files, copies and "
        "verifies every file by size and xxh3_128 checksum (the relocation's verified copy, in process: the merge "
        "ran without an engine), journaling the verified units when it ends (a long copy: every 5 s; the journal is "
        "the scratch SQLite file here, the console's PostgreSQL in production); `cp -r` verifies nothing. "
        "Goal (issue 26): at least 80 % of `cp -r`'s throughput.",
        "",
        "| copy | seconds (median) | all runs, s | MB/s | share of `cp -r`'s throughput | CPU s (median) |",
        "|---|---|---|---|---|---|",
    ]
    for label, runs in timings.items():
        seconds = statistics.median(wall for wall, _cpu in runs)
        every = " / ".join(f"{wall:.2f}" for wall, _cpu in runs)
        cpu = statistics.median(c for _wall, c in runs)
        lines.append(
            f"| {label} | {seconds:.2f} | {every} | {args.mb / seconds:.0f} | {baseline / seconds:.0%} | {cpu:.2f} |"
        )
    lines += [
        "",
        "The merge's own work around the copy (listing each unit's source, journaling its files and the verified "
        "units) is the difference between its row and the program's row; the rest of the gap to `cp -r` is the "
        "verified copy itself (both ends hashed; compare the CPU column).",
    ]
    print("\n".join(lines))
    write_section(REPO / "docs" / "benchmarks.md", "Merge data copy against cp -r", "\n".join(lines))


if __name__ == "__main__":
    main()
