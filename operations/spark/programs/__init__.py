"""
Spark programs: ``operations.spark.programs.<name>`` defines
``run(spark: SparkSession, plan: dict, report: Callable[[dict], None]) -> dict``.

``plan`` is the program's JSON input; the return value is its JSON result manifest. ``report({...})`` sends progress
with any of the keys ``partitions_done, partitions_total, files_done, files_total, bytes_done, bytes_total, message``,
and ``{"unit_done": "<key>"}`` after each verified unit (a partition): a resumed run gets ``plan["completed"]``, the
keys already done, and skips them. ``plan["staging"]``, when a program writes one, is the location (a rewrite: the
list of them) the engine removes when the job is cancelled or discarded: the program writes nothing it cannot lose
outside it until the job's swap.
Programs must not import Django (they run in the Spark driver and its executors).
"""

PROGRESS_KEYS = (
    "partitions_done",
    "partitions_total",
    "files_done",
    "files_total",
    "bytes_done",
    "bytes_total",
    "message",
)

__all__ = ("PROGRESS_KEYS",)
