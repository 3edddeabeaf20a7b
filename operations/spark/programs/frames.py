"""
Work spread over the executors with the DataFrame API only, so a program runs alike on a classic session
(``local[*]``, ``spark-submit``) and through Spark Connect (``sc://``, where the client has no ``SparkContext``).

:func:`map_rows` turns a small list of work items (files to copy or digest) into a frame and runs a Python function on
each partition's items in the executors (``mapInArrow``); the results come back as a small collected frame. Spark lays
a local frame out in one partition per task slot by itself; spreading it over more (``slices``) costs a shuffle, about
0.3 s per call on local[2] (measured with 256 items: 0.20–0.27 s without, 0.49–0.60 s with).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

__all__ = ("CONNECT_PARALLELISM", "map_rows", "parallelism")

# Through Spark Connect the client cannot ask for the cluster's default parallelism unless the server's configuration
# sets ``spark.default.parallelism``; this many tasks is the guess then.
CONNECT_PARALLELISM = 8


def parallelism(spark: SparkSession) -> int:
    """The session's default parallelism (``spark.default.parallelism`` or :data:`CONNECT_PARALLELISM` through
    Spark Connect)."""
    try:
        return int(spark.sparkContext.defaultParallelism)
    except Exception:  # noqa: BLE001 - Spark Connect's client has no SparkContext
        value = spark.conf.get("spark.default.parallelism", None)
        return int(value) if value else CONNECT_PARALLELISM


def map_rows(
    spark: SparkSession,
    rows: list[dict[str, Any]],
    schema: StructType,
    result: StructType,
    function: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
    *,
    slices: int | None = None,
) -> list[dict[str, Any]]:
    """``function`` applied on the executors to the ``rows`` (of ``schema``) of each partition; every row it returns
    (of ``result``), collected. The partitions are Spark's own layout of a local frame (one per task slot), or up to
    ``slices`` of them when that is more (a shuffle: for work whose items differ much in cost)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    if not rows:
        return []
    values = [tuple(row[name] for name in schema.names) for row in rows]
    frame = spark.createDataFrame(values, schema)
    if slices is not None and min(slices, len(rows)) > parallelism(spark):
        frame = frame.repartition(min(slices, len(rows)))
    mapped = frame.mapInArrow(_per_partition(function, to_arrow_schema(result)), result)
    return [row.asDict() for row in mapped.collect()]


def _per_partition(
    function: Callable[[list[dict[str, Any]]], list[dict[str, Any]]], schema: pa.Schema
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The ``mapInArrow`` function: one call of ``function`` on all of a partition's rows."""

    def apply(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        items = [row for batch in batches for row in batch.to_pylist()]
        if items:
            yield pa.RecordBatch.from_pylist(function(items), schema=schema)

    return apply
