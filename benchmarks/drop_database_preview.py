"""
The preview of ``DROP DATABASE bench CASCADE`` over a 100,000-partition table: its directory's size from a sample of
the partition directories (``CATALOG_DROP_SAMPLE_PARTITIONS``, 1,000 by default) against the same preview counting
every one of them, alternated in one run, the page cache dropped before each when this process may
(``/proc/sys/vm/drop_caches``, root): a directory tree a steward drops is seldom in the kernel's caches.

    .venv/bin/python benchmarks/drop_database_preview.py [--partitions 100000] [--runs 2] [--reuse]

The metastore ``ca_bench_dbdrop`` (Hive's official 2.3.0 schema) and its table are seeded as
``benchmarks/drop_table.py`` seeds them (every partition's directory with one file); ``--reuse`` keeps an earlier
seeding. Results go to ``docs/benchmarks.md`` ("DROP DATABASE … CASCADE preview at scale").
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import drop_table
from common import REPO, write_section

DATABASE = "ca_bench_dbdrop"
STATEMENT = "DROP DATABASE bench CASCADE"
FULL = 10**9  # a sample larger than any table: every partition directory counted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--reuse", action="store_true", help="keep the metastore an earlier run seeded")
    args = parser.parse_args()
    state_file = REPO / "var" / "bench" / f"{DATABASE}.json"
    if not args.reuse:
        seeding = argparse.Namespace(database=DATABASE, partitions=args.partitions, col_stats=5, runs=0, before="")
        state_file.parent.mkdir(parents=True, exist_ok=True)
        state_file.write_text(json.dumps(drop_table.seed(seeding)))
    state = json.loads(state_file.read_text())
    drop_table.setup(state, "preview")
    results: dict[str, list[float]] = {"sampled": [], "full": []}
    sizes: dict[str, tuple] = {}
    cold = True
    for _ in range(args.runs):
        for mode in results:
            cold = _drop_caches() and cold
            seconds, directory = _preview(mode)
            results[mode].append(seconds)
            sizes[mode] = (directory.files, directory.bytes, directory.sampled)
    report(state, args, results, sizes, cold)


def _preview(mode: str) -> tuple[float, object]:
    """The preview with the sample or counting in full: seconds, and the database directory's planned action."""
    from django.conf import settings

    from catalog_admin.selectors.metastores import get_metastore
    from operations.ddl.parser import parse_alter
    from operations.planners.databases import plan_database

    settings.CATALOG_DROP_SAMPLE_PARTITIONS = 1000 if mode == "sampled" else FULL
    started = time.perf_counter()
    plan = plan_database(get_metastore(drop_table.ALIAS), parse_alter(STATEMENT))  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    assert not plan.blockers, plan.blockers
    directory = next(d for d in plan.directories if d.action == "trash" and d.source.endswith("bench.db"))
    print(f"{mode}: {seconds:.2f} s, {directory.files} files, {directory.bytes} bytes, {directory.sampled}", flush=True)
    return seconds, directory


def _drop_caches() -> bool:
    """Write back and drop the kernel's page, dentry and inode caches; False when this process may not."""
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3")
    except OSError:
        return False
    return True


def report(state: dict, args: argparse.Namespace, results: dict[str, list[float]], sizes: dict, cold: bool) -> None:
    rows = [
        f"| {label} | {statistics.median(results[mode]):.2f} | {', '.join(f'{s:.2f}' for s in results[mode])} | "
        f"{sizes[mode][0]:,} | {sizes[mode][1]:,} | {sizes[mode][2] or 'counted in full'} |"
        for mode, label in (("sampled", "sample of 1,000 partition directories"), ("full", "every directory"))
    ]
    caches = "the page cache dropped before each" if cold else "**the page cache could not be dropped** (not root)"
    body = [
        f"Command: `.venv/bin/python benchmarks/drop_database_preview.py --partitions {args.partitions} "
        f"--runs {args.runs}`",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, 2 cores; PostgreSQL 15 on 127.0.0.1, "
        f"Hive's official 2.3.0 schema; seeded {state['seeded']['at']} at commit {state['commit']}, run "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} at commit {drop_table.head()} (load "
        f"{os.getloadavg()[0]:.1f}); {caches}, the two previews alternated.",
        "",
        f"`{STATEMENT}` over a table of {args.partitions:,} partitions, each directory holding one file:",
        "",
        "| the database directory's size | median s | runs (s) | files | bytes | sample (counted, found) |",
        "|---|---:|---|---:|---:|---|",
        *rows,
    ]
    write_section(REPO / "docs" / "benchmarks.md", "DROP DATABASE … CASCADE preview at scale", "\n".join(body))


if __name__ == "__main__":
    main()
