"""
The one estimate model: how fast earlier runs of the same job kind went on the same engine.

A run's throughput is what it did (``bytes_done`` for a data job, ``partitions_done`` for a merge) over the time it
ran; the estimate of a new run is its size over the median throughput of the last succeeded runs. Each kind gives its
size and a fallback when nothing has run yet (``operations.planners.data_scope.estimate_duration``: none, the page
says so; ``operations.merge.estimate``: the benchmark's figure). An estimate is advice: shown, never fingerprinted.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median

__all__ = ("Throughput", "measured_throughput")


@dataclass(frozen=True)
class Throughput:
    """The median rate (units per second) of ``runs`` earlier succeeded jobs."""

    rate: float
    runs: int


def measured_throughput(
    kind: str, *, done: str, engine: str, last: int, program: str | None = None
) -> Throughput | None:
    """The median ``done`` per second of the last ``last`` succeeded ``kind`` jobs on ``engine`` (its
    ``spark_master``; empty: in the worker), of ``program`` when given; ``None`` when none ran."""
    from operations.choices import JobState
    from operations.models import Job

    runs = (
        Job.objects.filter(
            kind=kind,
            spark_master=engine,
            state=JobState.SUCCEEDED,
            started_at__isnull=False,
            finished_at__isnull=False,
            **{f"{done}__gt": 0},
            **({"program": program} if program else {}),
        )
        .order_by("-finished_at", "-pk")
        .values_list(done, "started_at", "finished_at")[:last]
    )
    rates = [count / seconds for count, start, end in runs if (seconds := (end - start).total_seconds()) > 0]
    return Throughput(median(rates), len(rates)) if rates else None
