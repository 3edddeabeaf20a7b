"""The console's own metrics for ``/metrics``, computed at each scrape from its rows in a fixed number of queries.

Four aggregate queries on the console's database, whatever the number of rows: change requests by state; jobs by
kind and state (with the oldest job of each group and its Spark applications); finished jobs' durations and
throughputs as histogram buckets (conditional counts); the notification outbox by channel and state. Then one
``SELECT 1`` per database, each in its own thread and waited for at most ``CATALOG_METRICS_HEALTH_TIMEOUT_SECONDS``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connections
from django.db.models import Count, DurationField, ExpressionWrapper, F, FloatField, Func, Min, Q, Sum
from django.db.models.functions import Cast
from django.utils import timezone
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from catalog_admin.selectors.health import HealthCheck, check_database, health_targets
from operations.choices import FINISHED_JOB_STATES, ChangeRequestState, JobState
from operations.models import ChangeRequest, Job, Notification

__all__ = ("DURATION_BUCKETS", "THROUGHPUT_BUCKETS", "ConsoleCollector")

DURATION_BUCKETS = (1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 7200.0, 21600.0, 86400.0)
THROUGHPUT_BUCKETS = (1e5, 1e6, 1e7, 5e7, 1e8, 2.5e8, 5e8, 1e9, 5e9)


class _Seconds(Func):
    """A duration in seconds: PostgreSQL's interval through ``EXTRACT(EPOCH …)``; elsewhere Django's microseconds."""

    template = "((%(expressions)s) / 1000000.0)"
    output_field = FloatField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        template = "CAST(EXTRACT(EPOCH FROM %(expressions)s) AS double precision)"
        return self.as_sql(compiler, connection, template=template, **extra)


class ConsoleCollector(Collector):
    """Collects the console's gauges, counters and histograms at each scrape (see the module's docstring)."""

    def collect(self) -> Iterator[Metric]:
        now = timezone.now()
        yield _change_requests()
        yield from _jobs(_job_groups(), now)
        yield from _finished_jobs()
        yield _notifications()
        yield _database_up(_health_checks(settings.CATALOG_METRICS_HEALTH_TIMEOUT_SECONDS))


def _change_requests() -> Metric:
    counts = {state: 0 for state in ChangeRequestState.values}
    counts |= dict(ChangeRequest.objects.order_by().values_list("state").annotate(n=Count("id")))
    family = GaugeMetricFamily("catalog_change_requests", "Change requests by state.", labels=("state",))
    for state, count in sorted(counts.items()):
        family.add_metric((state,), count)
    return family


def _notifications() -> Metric:
    """The outbox by channel and state: pending messages that keep growing, or failed ones, mean nobody is told."""
    counts = {(channel, state): 0 for channel in Notification.Channel.values for state in Notification.State.values}
    rows = Notification.objects.order_by().values_list("channel", "state").annotate(n=Count("id"))
    counts |= {(channel, state): n for channel, state, n in rows}
    family = GaugeMetricFamily(
        "catalog_notifications", "Notifications in the outbox by channel and state.", labels=("channel", "state")
    )
    for (channel, state), count in sorted(counts.items()):
        family.add_metric((channel, state), count)
    return family


def _job_groups() -> list[dict[str, Any]]:
    """One GROUP BY over jobs: count, oldest creation and Spark applications per kind and state."""
    return [
        dict(group)
        for group in Job.objects.order_by()
        .values("kind", "state")
        .annotate(n=Count("id"), oldest=Min("created_at"), spark=Count("id", filter=~Q(spark_app_id="")))
    ]


def _jobs(groups: Sequence[dict[str, Any]], now: datetime) -> Iterator[Metric]:
    jobs = GaugeMetricFamily("catalog_jobs", "Jobs by kind and state.", labels=("kind", "state"))
    finished = CounterMetricFamily(
        "catalog_jobs_finished", "Jobs that ended, by kind and final state.", labels=("kind", "state")
    )
    for group in groups:
        jobs.add_metric((group["kind"], group["state"]), group["n"])
        if group["state"] in FINISHED_JOB_STATES:
            finished.add_metric((group["kind"], group["state"]), group["n"])
    queued = [group["oldest"] for group in groups if group["state"] == JobState.QUEUED]
    age = (now - min(queued)).total_seconds() if queued else 0.0
    running = [group for group in groups if group["state"] == JobState.RUNNING]
    yield jobs
    yield finished
    yield GaugeMetricFamily(
        "catalog_job_queue_oldest_age_seconds", "How long the oldest queued job has waited (0: none).", value=age
    )
    yield GaugeMetricFamily(
        "catalog_spark_applications_running",
        "Running jobs with a Spark application.",
        value=sum(group["spark"] for group in running),
    )


def _finished_jobs() -> Iterator[Metric]:
    """One GROUP BY kind over ended jobs: cumulative bucket counts and sums, as histograms."""
    rows = _finished_query()
    durations = HistogramMetricFamily(
        "catalog_job_duration_seconds", "Run time of jobs that ended (started to finished).", labels=("kind",)
    )
    throughput = HistogramMetricFamily(
        "catalog_job_throughput_bytes_per_second",
        "Bytes per second of succeeded jobs that moved data (bytes done over run time).",
        labels=("kind",),
    )
    for row in rows:
        durations.add_metric((row["kind"],), _buckets(row, "d", DURATION_BUCKETS, row["n"]), row["seconds_sum"] or 0.0)
        throughput.add_metric((row["kind"],), _buckets(row, "t", THROUGHPUT_BUCKETS, row["t_n"]), row["t_sum"] or 0.0)
    yield durations
    yield throughput


def _finished_query() -> list[dict[str, Any]]:
    run_time = ExpressionWrapper(F("finished_at") - F("started_at"), output_field=DurationField())
    moved = Q(state=JobState.SUCCEEDED, bytes_done__gt=0, seconds__gt=0)
    rate = Cast("bytes_done", FloatField()) / F("seconds")
    buckets = {f"d{index}": Count("id", filter=Q(seconds__lte=le)) for index, le in enumerate(DURATION_BUCKETS)}
    buckets |= {f"t{index}": Count("id", filter=moved & Q(rate__lte=le)) for index, le in enumerate(THROUGHPUT_BUCKETS)}
    rows = (
        Job.objects.order_by()
        .filter(state__in=FINISHED_JOB_STATES, started_at__isnull=False, finished_at__isnull=False)
        .alias(seconds=_Seconds(run_time))
        .alias(rate=rate)
        .values("kind")
        .annotate(
            n=Count("id"),
            seconds_sum=Sum("seconds"),
            t_n=Count("id", filter=moved),
            t_sum=Sum("rate", filter=moved),
            **buckets,
        )
    )
    return [dict(row) for row in rows]


def _buckets(row: dict[str, Any], prefix: str, bounds: Sequence[float], total: int) -> list[tuple[str, float]]:
    return [(str(le), row[f"{prefix}{index}"]) for index, le in enumerate(bounds)] + [("+Inf", total)]


def _health_checks(timeout: float) -> list[HealthCheck]:
    """Each database's ``SELECT 1`` in its own thread; one that has not answered within ``timeout`` is down."""
    targets = health_targets()
    pool = ThreadPoolExecutor(max_workers=len(targets), thread_name_prefix="metrics-health")
    futures = [pool.submit(_check_and_close, *target) for target in targets]
    wait(futures, timeout=timeout)
    pool.shutdown(wait=False, cancel_futures=True)
    return [
        future.result() if future.done() else HealthCheck(name, kind, ok=False, error=f"no answer within {timeout} s")
        for future, (name, kind, _alias) in zip(futures, targets, strict=True)
    ]


def _check_and_close(name: str, kind: str, alias: str) -> HealthCheck:
    try:
        return check_database(name, kind, alias)
    finally:
        connections[alias].close()  # this thread's own connection: never reused


def _database_up(checks: Sequence[HealthCheck]) -> Metric:
    family = GaugeMetricFamily(
        "catalog_database_up",
        "1 when the database answered SELECT 1 (the console's and each metastore).",
        labels=("name", "kind"),
    )
    for check in checks:
        family.add_metric((check.name, check.kind), 1.0 if check.ok else 0.0)
    return family
