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

__all__ = ("PhaseRun", "Throughput", "fitted", "measured_phases", "measured_startups", "measured_throughput")


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


# The phases of a Spark data job ----------------------------------------------------------------------------------
#
# A data job's run is three phases, each measured on the job row: Spark's start-up (``started_at`` until the program's
# first report, ``work_started_at``), the work (until ``committing_at``, the point of no return: the copy or rewrite
# of ``bytes_done``), and the swap (until ``finished_at``: the metastore transaction and its directory moves, over
# ``partitions_total`` units). The start-up is the engine's, whatever the kind; the work and the swap are the kind's.


@dataclass(frozen=True)
class PhaseRun:
    """One earlier succeeded first attempt's phases (seconds) and its size (bytes) and units."""

    startup: float
    work: float
    swap: float
    size: int
    units: int


def measured_startups(*, engine: str, last: int) -> list[float]:
    """Spark's start-up (seconds from the attempt's start to its program's first report) of the last ``last`` jobs
    on ``engine``, whatever their kind or outcome."""
    from operations.models import Job

    rows = (
        Job.objects.filter(spark_master=engine, started_at__isnull=False, work_started_at__isnull=False)
        .order_by("-work_started_at", "-pk")
        .values_list("started_at", "work_started_at")[:last]
    )
    return [max((work - start).total_seconds(), 0.0) for start, work in rows]


def measured_phases(kind: str, *, engine: str, last: int, program: str | None = None) -> list[PhaseRun]:
    """The phases of the last ``last`` succeeded first attempts of ``kind`` (of ``program``) on ``engine`` whose
    program reported when its work began and that passed their point of no return."""
    from operations.choices import JobState
    from operations.models import Job

    rows = (
        Job.objects.filter(
            kind=kind,
            spark_master=engine,
            state=JobState.SUCCEEDED,
            attempts=1,
            started_at__isnull=False,
            work_started_at__isnull=False,
            committing_at__isnull=False,
            finished_at__isnull=False,
            bytes_done__gt=0,
            **({"program": program} if program else {}),
        )
        .order_by("-finished_at", "-pk")
        .values_list("started_at", "work_started_at", "committing_at", "finished_at", "bytes_done", "partitions_total")
    )[:last]
    return [
        PhaseRun(
            startup=max((work - start).total_seconds(), 0.0),
            work=max((commit - work).total_seconds(), 0.0),
            swap=max((end - commit).total_seconds(), 0.0),
            size=size,
            units=units or 0,
        )
        for start, work, commit, end, size, units in rows
    ]


def fitted(points: list[tuple[float, float]], x: float, *, proportional: bool) -> float:
    """``y`` at ``x`` on the line through ``points`` (``(x, y)`` of earlier runs): Siegel's repeated median (each
    run's median slope to the others, their median) and the median intercept, neither negative, so one slow run does
    not move it. With a single size measured, the rate of the median run (``proportional``: the work) or the median
    time (the swap)."""
    xs = {px for px, _ in points}
    if len(xs) < 2:
        if proportional:
            rates = [py / px for px, py in points if px > 0]
            return x * median(rates) if rates else median(py for _, py in points)
        return median(py for _, py in points)
    slopes = [
        median((qy - py) / (qx - px) for qx, qy in points if qx != px)
        for px, py in points
        if any(qx != px for qx, _ in points)
    ]
    slope = max(median(slopes), 0.0)
    intercept = max(median(py - slope * px for px, py in points), 0.0)
    return intercept + slope * x
