"""The merge's estimate uses the one estimate model (``operations.estimates``): the median throughput of earlier
merge jobs on the same engine, as a data job's estimate does."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from operations.choices import JobKind
from operations.estimates import measured_throughput
from operations.merge.estimate import estimate_duration
from operations.models import Job

pytestmark = pytest.mark.django_db


def _merge_job(partitions: int, seconds: int, engine: str = "local") -> None:
    end = timezone.now()
    Job.objects.create(
        kind=JobKind.MERGE, state="succeeded", partitions_done=partitions, spark_master=engine,
        started_at=end - timedelta(seconds=seconds), finished_at=end,
    )  # fmt: skip


def test_a_merge_estimate_is_the_median_of_earlier_merges_on_the_same_engine(settings) -> None:  # noqa: ANN001
    """Merges at 1,000, 2,000 and 9,000 partitions/s in the worker give the median, 2,000; a merge run on a Spark
    cluster is another engine and does not count (the merge's own estimate pooled all four before: about 923/s); the
    estimate names its engine, and with merges on that cluster configured, only its merge counts."""
    # given
    for rate in (1_000, 2_000, 9_000):
        _merge_job(rate * 10, 10)
    _merge_job(1, 100, engine="spark://elsewhere:7077")
    # when
    estimate = estimate_duration(6_000)
    # then
    assert (estimate.partitions_per_second, estimate.seconds) == (2_000, 3.0)
    assert estimate.basis == "the throughput of the last 3 merge job(s) on the local engine"
    assert estimate.as_dict()["engine"] == "local"
    # when: merges copy on the cluster
    settings.CATALOG_SPARK_MASTER = "spark://elsewhere:7077"
    on_spark = estimate_duration(6_000)
    # then
    assert (on_spark.engine, on_spark.partitions_per_second) == ("spark://elsewhere:7077", 0.01)


def test_the_model_is_the_same_for_bytes_and_partitions() -> None:
    """One function measures both: bytes of data jobs and partitions of merges, per kind and engine."""
    # given
    _merge_job(5_000, 10)
    # when
    partitions = measured_throughput(JobKind.MERGE, done="partitions_done", engine="local", last=10)
    nothing = measured_throughput(JobKind.MERGE, done="bytes_done", engine="local", last=10)
    # then
    assert partitions is not None and (partitions.rate, partitions.runs) == (500, 1)
    assert nothing is None
