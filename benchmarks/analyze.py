"""
Column statistics of a partitioned Parquet table: the console's analyze program against Spark's own ``ANALYZE TABLE
… COMPUTE STATISTICS FOR COLUMNS``, in the same run and on the same files.

    .venv/bin/python benchmarks/analyze.py [--partitions 1000] [--files 2] [--rows 1000] [--runs 3]

Writes ``--partitions`` × ``--files`` Parquet files (``--rows`` rows each) as one partitioned table of Spark's Hive
client (local[2], a Derby metastore in a temporary directory), then times, in ``--runs`` rounds whose order
alternates:

* the baseline: Spark's ``ANALYZE TABLE bench.a COMPUTE STATISTICS FOR COLUMNS id, name, amount`` (one scan, the
  table's column statistics by HyperLogLog++, stored as table properties; after ``REFRESH TABLE``, so both list the
  files);
* the analyze program (``operations/spark/programs/analyze.py``) on the plan the console gives it for ``ANALYZE TABLE
  a COMPUTE STATISTICS FOR COLUMNS``: every partition's files read, rows verified against the footers, each
  partition's statistics (exact distinct counts) computed.

The medians are compared. The metastore swap (one transaction) is not part of either. Results go to
``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, write_section

sys.path.insert(0, str(REPO))

from catalog_admin.locations import LocalFileSystem  # noqa: E402
from operations.spark.programs import analyze  # noqa: E402

COLUMNS = (("id", "bigint"), ("name", "string"), ("amount", "double"))


def write_table(root: Path, partitions: int, files: int, rows: int) -> int:
    """The Parquet files of the table; their total size."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    size = 0
    for partition in range(partitions):
        folder = root / f"p={partition}"
        folder.mkdir(parents=True)
        for number in range(files):
            first = (partition * files + number) * rows
            table = pa.table({"id": pa.array(range(first, first + rows), pa.int64()),
                              "name": [f"name-{i % 997}" for i in range(first, first + rows)],
                              "amount": [i / 8 for i in range(first, first + rows)]})  # fmt: skip
            path = folder / f"part-{number:05d}.parquet"
            pq.write_table(table, path)
            size += path.stat().st_size
    return size


def plan_for(root: Path) -> dict:
    """The plan ``analyze_plan`` gives the program for ``ANALYZE TABLE a COMPUTE STATISTICS FOR COLUMNS``."""
    units = []
    for folder in sorted(root.iterdir(), key=lambda p: p.name):
        listed = LocalFileSystem().list_files(f"file:{folder}") or []
        units.append({"key": folder.name, "source": f"file:{folder}", "format": "parquet",
                      "files": [{"source": f.location, "size": f.size} for f in listed]})  # fmt: skip
    columns = [list(c) for c in COLUMNS]
    return {"units": units, "columns": columns, "analyzed": columns, "serde": {}, "noscan": False,
            "filesystems": {}, "completed": []}  # fmt: skip


def session(tmp: Path):  # noqa: ANN201 - a SparkSession
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))  # the workers
    return (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.warehouse.dir", str(tmp / "warehouse"))
        .config(
            "spark.hadoop.javax.jdo.option.ConnectionURL", f"jdbc:derby:;databaseName={tmp}/metastore_db;create=true"
        )
        .enableHiveSupport()
        .getOrCreate()
    )


def timed(action) -> float:  # noqa: ANN001
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--files", type=int, default=2)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="analyze-bench-") as name:
        tmp = Path(name)
        size = write_table(tmp / "a", args.partitions, args.files, args.rows)
        spark = session(tmp)
        spark.sql("CREATE DATABASE bench")
        spark.sql(f"CREATE TABLE bench.a (id bigint, name string, amount double) PARTITIONED BY (p int) "
                  f"STORED AS PARQUET LOCATION 'file:{tmp / 'a'}'")  # fmt: skip
        spark.sql("MSCK REPAIR TABLE bench.a")
        total = spark.sql("SELECT count(*) FROM bench.a").collect()[0][0]  # warms the JVM
        plan = plan_for(tmp / "a")
        statement = "ANALYZE TABLE bench.a COMPUTE STATISTICS FOR COLUMNS id, name, amount"
        baselines, programs = [], []
        for round_ in range(args.runs):
            for which in ("baseline", "program") if round_ % 2 == 0 else ("program", "baseline"):
                if which == "baseline":
                    spark.sql("REFRESH TABLE bench.a")
                    baselines.append(timed(lambda: spark.sql(statement)))
                    print(f"Spark ANALYZE … FOR COLUMNS: {baselines[-1]:.2f} s", flush=True)
                else:
                    started = time.perf_counter()
                    manifest = analyze.run(spark, plan, lambda event: None)
                    programs.append(time.perf_counter() - started)
                    print(f"analyze program: {programs[-1]:.2f} s", flush=True)
        spark.stop()
    assert manifest["rows"] == total, (manifest["rows"], total)
    baseline, program = statistics.median(baselines), statistics.median(programs)
    parts = args.partitions
    rounds = " / ".join(f"{p / b:.2f}×" for b, p in zip(baselines, programs, strict=True))
    lines = [
        f"{parts:,} partitions × {args.files} Parquet files ({args.rows} rows each: {total:,} rows, "
        f"{size / 2**20:.0f} MB; columns bigint, string, double), Spark local[2], {args.runs} rounds in the same "
        f"process, their order alternating, medians compared (`benchmarks/analyze.py --partitions {parts} --files "
        f"{args.files} --rows {args.rows} --runs {args.runs}`; load average {load_before:.1f} before the runs, "
        f"{os.getloadavg()[0]:.1f} after). Spark computes the table's column statistics in one scan (approximate "
        "distinct counts); the program computes every partition's, as Hive keeps them (exact distinct counts), and "
        "verifies each file's rows against its footer. The metastore swap is not timed.",
        "",
        "| statistics | seconds (median) | all runs, s | ratio |",
        "|---|---|---|---|",
        f"| Spark `ANALYZE TABLE … COMPUTE STATISTICS FOR COLUMNS` (table level) | {baseline:.2f} | "
        f"{' / '.join(f'{b:.2f}' for b in baselines)} | 1.00× |",
        f"| analyze program (per partition, rows verified) | {program:.2f} | "
        f"{' / '.join(f'{p:.2f}' for p in programs)} | {program / baseline:.2f}× |",
        "",
        f"Each round's ratio (program / baseline of the same round): {rounds}.",
    ]
    print("\n".join(lines))
    write_section(REPO / "docs" / "benchmarks.md", "ANALYZE against Spark's ANALYZE … FOR COLUMNS", "\n".join(lines))


if __name__ == "__main__":
    main()
