"""
Where a compaction's read costs: the same small Parquet files read four ways in one Spark session (local[2]), each
written with ``.repartition(200, key).write.partitionBy(key)``, rounds in reversed order, seconds printed:

* the Hive table's scan (``spark.table``), as ``INSERT OVERWRITE … SELECT`` reads;
* a datasource table whose partitions are the units' directories (``ALTER TABLE … ADD PARTITION … LOCATION``);
* the rewrite program's read before issue 26 (its files are now read with pyarrow on the executors): the directories
  read recursively, each row's ``_metadata.file_path`` joined to the file → unit mapping;
* the table's root read with partition discovery.

    .venv/bin/python benchmarks/probe_compact_read.py [--partitions 1000] [--files 50] [--rows 100] [--rounds 2]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from compact import COLUMNS, create, plan_for, session, write_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="compact-read-probe-"))
    try:
        write_table(tmp / "b", args.partitions, args.files, args.rows)
        spark = session(tmp)
        variants = reads(spark, tmp)
        for number in range(args.rounds):
            for name, read in variants if number % 2 == 0 else variants[::-1]:
                started = time.perf_counter()
                _write(read(), tmp / "out")
                print(f"round {number + 1}, {name}: {time.perf_counter() - started:.2f} s", flush=True)
                written = spark.read.parquet(f"file:{tmp}/out").where("key IS NOT NULL").count()
                assert written == args.partitions * args.files * args.rows, (name, written)
        spark.stop()
    finally:
        shutil.rmtree(tmp)


def reads(spark, tmp: Path) -> list[tuple[str, Callable]]:  # noqa: ANN001 - a SparkSession
    """The four reads, each a function returning a DataFrame with a ``key`` column."""
    from pyspark.sql import functions as F  # noqa: N812 - pyspark's convention

    spark.sql("CREATE DATABASE bench")
    create(spark, "b", tmp / "b")
    spark.sql("SELECT count(*) FROM bench.b").collect()  # the listing cached, as the benchmark's baseline has it
    units = plan_for(tmp / "b", 128 * 1024 * 1024)["units"]
    directories = [unit["source"] for unit in units]
    spark.sql(f"CREATE TABLE bench.units (id bigint, name string, amount double, key int) USING parquet "
              f"PARTITIONED BY (key) LOCATION 'file:{tmp}/units'")  # fmt: skip
    partitions = " ".join(f"PARTITION (key={n}) LOCATION '{d}'" for n, d in enumerate(directories))
    spark.sql(f"ALTER TABLE bench.units ADD {partitions}")
    spark.conf.set("spark.sql.sources.parallelPartitionDiscovery.threshold", "1000000")  # the old program's setting
    files = [(f["source"], n) for n, unit in enumerate(units) for f in unit["files"]]
    mapping = spark.createDataFrame(files, "file string, key int")
    schema = ", ".join(f"{name} {type_}" for name, type_ in COLUMNS)

    def program() -> object:
        reader = spark.read.option("recursiveFileLookup", "true").schema(schema).format("parquet")
        frame = reader.load(directories).withColumn("file", F.col("_metadata.file_path"))
        return frame.join(F.broadcast(mapping), "file").drop("file")

    return [
        ("the Hive table's scan", lambda: spark.table("bench.b").withColumnRenamed("p", "key")),
        ("a datasource table of the units' directories", lambda: spark.table("bench.units")),
        ("the program's read", program),
        (
            "the root read",
            lambda: spark.read.schema(f"{schema}, p int").parquet(f"file:{tmp}/b").withColumnRenamed("p", "key"),
        ),
    ]


def _write(frame: object, out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    frame.repartition(200, "key").write.mode("overwrite").partitionBy("key").parquet(f"file:{out}")  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
