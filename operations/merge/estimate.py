"""
How long a merge would take: its partitions over a measured throughput, with the basis said.

The throughput is the median of the latest succeeded merge jobs on this console (partitions they imported over the time
they ran, in the worker: :func:`operations.estimates.measured_throughput`, the one estimate model) when there are any,
else ``settings.CATALOG_MERGE_PARTITIONS_PER_SECOND``, the figure ``benchmarks/merge.py``
printed (``docs/benchmarks.md``). An estimate is advice: it is shown, never fingerprinted.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from operations.choices import JobKind
from operations.estimates import measured_throughput
from operations.merge.engine import LOCAL, merge_engine

__all__ = ("DEFAULT_PARTITIONS_PER_SECOND", "DurationEstimate", "estimate_duration", "merge_throughput")

# merge_execute in process as benchmarks/merge.py measured it (PostgreSQL 3.1 → 3.1, 1,000,000 partitions into 100,000
# tables, 2-core machine; docs/benchmarks.md "Metastore merge"), until a merge job on this console has run (then its
# throughput is used).
DEFAULT_PARTITIONS_PER_SECOND = 2551.0
_RECENT_JOBS = 10


@dataclass(frozen=True)
class DurationEstimate:
    """Seconds for ``partitions`` at ``partitions_per_second``, and where that rate comes from."""

    partitions: int
    partitions_per_second: float
    basis: str
    engine: str = LOCAL  # where the merge would copy (``operations.merge.engine``): ``local`` or the Spark master

    @property
    def seconds(self) -> float:
        return round(max(self.partitions, 1) / self.partitions_per_second, 1)

    def as_dict(self) -> dict:
        return {
            "seconds": self.seconds,
            "partitions": self.partitions,
            "partitions_per_second": round(self.partitions_per_second, 1),
            "basis": self.basis,
            "engine": self.engine,
        }


def estimate_duration(partitions: int) -> DurationEstimate:
    """The estimate for a merge of ``partitions`` partitions, from earlier merge jobs or the benchmark's figure."""
    engine = merge_engine()
    measured = merge_throughput(engine)
    if measured is not None:
        rate, jobs = measured
        basis = f"the throughput of the last {jobs} merge job(s) on the {engine} engine"
        return DurationEstimate(partitions, rate, basis, engine)
    rate = float(getattr(settings, "CATALOG_MERGE_PARTITIONS_PER_SECOND", DEFAULT_PARTITIONS_PER_SECOND))
    return DurationEstimate(partitions, rate, "the benchmark's figure (CATALOG_MERGE_PARTITIONS_PER_SECOND)", engine)


def merge_throughput(engine: str = LOCAL) -> tuple[float, int] | None:
    """Partitions per second (the median) of the latest succeeded merge jobs on ``engine`` that imported partitions
    (a revert is a ``merge_revert`` job), and how many jobs."""
    measured = measured_throughput(JobKind.MERGE, done="partitions_done", engine=engine, last=_RECENT_JOBS)
    return (measured.rate, measured.runs) if measured is not None else None
