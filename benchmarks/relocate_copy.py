"""
The relocate program's copy throughput on local disk against ``cp -r`` of the same tree, in the same run.

    .venv/bin/python benchmarks/relocate_copy.py [--mb 2048] [--files 256] [--spark]

Writes ``--files`` files of random bytes (``--mb`` in all) in 16 partition folders under a temporary directory, then
times ``cp -r`` of the tree and the relocate program (``operations/spark/programs/relocate.py``: every file copied
and verified by size and MD5, which reads each copy back) on the same plan, in this process and, with ``--spark``, on
a local[2] SparkSession. Results go to ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, write_section

sys.path.insert(0, str(REPO))

from catalog_admin.locations import LocalFileSystem  # noqa: E402
from operations.spark.programs import relocate  # noqa: E402

PARTITIONS = 16


def make_tree(root: Path, total_mb: int, files: int) -> None:
    size = total_mb * (1 << 20) // files
    block = os.urandom(1 << 20)
    for number in range(files):
        folder = root / f"dt={number % PARTITIONS:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / f"part-{number:05d}", "wb") as stream:
            for _ in range(size // len(block)):
                stream.write(block)
            stream.write(block[: size % len(block)])


def plan_for(source: Path, destination: Path) -> dict:
    units = []
    for folder in sorted(source.iterdir()):
        listed = LocalFileSystem().list_files(f"file:{folder}") or []
        into = f"file:{destination / folder.name}"
        files = [{"source": f.location, "destination": f"{into}/{f.relative}", "size": f.size} for f in listed]
        units.append({"key": folder.name, "source": f"file:{folder}", "destination": into, "files": files})
    return {"units": units, "filesystems": {}, "completed": []}


def timed_copy(action, target: Path) -> float:  # noqa: ANN001
    shutil.rmtree(target, ignore_errors=True)
    subprocess.run(["sync"], check=False)
    started = time.perf_counter()
    action()
    seconds = time.perf_counter() - started
    shutil.rmtree(target, ignore_errors=True)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=2048)
    parser.add_argument("--files", type=int, default=256)
    parser.add_argument("--spark", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="relocate-bench-") as tmp:
        source, target = Path(tmp) / "source", Path(tmp) / "target"
        make_tree(source, args.mb, args.files)
        plan = plan_for(source, target)
        rows = [
            ("`cp -r` (baseline)", timed_copy(lambda: subprocess.run(["cp", "-r", source, target], check=True), target))
        ]
        rows.append(
            ("relocate program, in process", timed_copy(lambda: relocate.run(None, plan, lambda e: None), target))
        )
        if args.spark:
            from pyspark.sql import SparkSession

            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
            relocate.run(spark, plan_for(source, Path(tmp) / "warm"), lambda e: None)  # start the Python workers
            rows.append(
                (
                    "relocate program, Spark local[2]",
                    timed_copy(lambda: relocate.run(spark, plan, lambda e: None), target),
                )
            )
            spark.stop()
    baseline = rows[0][1]
    lines = [
        f"{args.mb} MB in {args.files} files under {PARTITIONS} partition folders, local disk, one run each "
        f"(`benchmarks/relocate_copy.py --mb {args.mb} --files {args.files}{' --spark' if args.spark else ''}`; "
        "this machine's 2 cores were shared with other work). The program verifies every copy by reading it back.",
        "",
        "| copy | seconds | MB/s | share of `cp -r`'s throughput |",
        "|---|---|---|---|",
    ]
    for label, seconds in rows:
        lines.append(f"| {label} | {seconds:.2f} | {args.mb / seconds:.0f} | {baseline / seconds:.0%} |")
    print("\n".join(lines))
    write_section(REPO / "docs" / "benchmarks.md", "Relocation copy against cp -r", "\n".join(lines))


if __name__ == "__main__":
    main()
